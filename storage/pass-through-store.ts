/**
 * The half of a {@link Store} wrapper that has nothing to translate: revisions, compaction,
 * leases, health and close go straight to the wrapped store. A wrapper (keys under a prefix,
 * values in another encoding) extends this and defines only the calls that carry keys or values,
 * as `MappedWatch` does for watches; one that maps only values extends `ValueMappingStore`
 * (value-mapping.ts), which defines those calls too.
 */
import type {
  ContinuePosition,
  CreateOptions,
  DeleteOptions,
  GetOptions,
  GetResult,
  KeySpan,
  RangeOptions,
  RangeResult,
  Store,
  StoreCapabilities,
  TxnRequest,
  UpdateOptions,
  Watch,
  WatchOptions,
  WriteResult,
} from './interface.js';

/** Passes every key- and value-free call to `inner`; `close()` closes it (the wrapper owns it). */
export abstract class PassThroughStore implements Store {
  protected readonly inner: Store;

  constructor(inner: Store) {
    this.inner = inner;
  }

  get capabilities(): StoreCapabilities {
    return this.inner.capabilities;
  }

  sealContinue(span: KeySpan, position: ContinuePosition): string {
    return this.inner.sealContinue(span, position);
  }

  openContinue(span: KeySpan, token: string): ContinuePosition {
    return this.inner.openContinue(span, token);
  }

  currentRevision(): Promise<bigint> {
    return this.inner.currentRevision();
  }

  compactedRevision(): Promise<bigint> {
    return this.inner.compactedRevision();
  }

  compact(revision: bigint): Promise<void> {
    return this.inner.compact(revision);
  }

  grantLease(ttlSeconds: number): Promise<bigint> {
    return this.inner.grantLease(ttlSeconds);
  }

  revokeLease(lease: bigint): Promise<void> {
    return this.inner.revokeLease(lease);
  }

  checkHealth(): Promise<void> {
    return this.inner.checkHealth();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  abstract get(key: string, options?: GetOptions): Promise<GetResult>;
  abstract range(span: KeySpan, options?: RangeOptions): Promise<RangeResult>;
  abstract create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult>;
  abstract update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult>;
  abstract delete(key: string, options?: DeleteOptions): Promise<WriteResult>;
  abstract txn(request: TxnRequest): Promise<WriteResult>;
  abstract watch(span: KeySpan, options?: WatchOptions): Watch;
}
