/**
 * The {@link Store} on a remote etcd v3 cluster. etcd is itself an MVCC revision log, so every
 * method is one etcd call (or one transaction) and revisions are etcd's own:
 * - reads: `Range` at a revision, paged with sealed continue tokens (`continue-token.ts`);
 * - writes: guarded `Txn`s (`writes.ts`);
 * - watches: one etcd watch stream each, resumed by us (`watch.ts`);
 * - compaction: etcd's `Compact`; its revision is learned by search (`compaction.ts`).
 *
 * Errors are mapped at this boundary (`error-map.ts`). Idempotent reads are retried a few times
 * on transient errors; writes never are (an ambiguous write surfaces as `UnavailableError`).
 */
import type { Etcd3, IRangeRequest, IRangeResponse, IResponseHeader } from 'etcd3';
import { ContinueTokens } from '../continue-token.js';
import { CompactedError, InvalidContinueError, RevisionTooLargeError, UnavailableError } from '../errors.js';
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
} from '../interface.js';
import { classifyOutOfRange, findCompactedRevision, type RevisionProbe } from './compaction.js';
import {
  fromWire,
  headerRevision,
  keyAfter,
  keyBytes,
  spanToRange,
  toKeyValue,
  wire,
  type CallOptions,
} from './codec.js';
import { EtcdRequestError, isOutOfRange, isTransient, toStoreError } from './error-map.js';
import type { ResolvedEtcdOptions } from './options.js';
import { CONTINUE_SECRET_KEY } from './secret.js';
import { EtcdWatch, type WatchTransport } from './watch.js';
import type { KvChannel } from './kv-channel.js';
import { EtcdWrites } from './writes.js';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  backend: 'etcd3',
  persistent: true,
  durable: true,
  shared: true,
});

/** A key that always exists (or existed) in a store's etcd; count-only reads of it are cheap. */
const PROBE_KEY = keyBytes(CONTINUE_SECRET_KEY);
/** Pauses before the retries of an idempotent read. */
const READ_RETRY_DELAYS_MS = [50, 250];

/** What {@link EtcdStore} is built from (by `openEtcdStore`). */
export interface EtcdStoreParts {
  /** Client for unary calls. */
  readonly client: Etcd3;
  /** Ranges, write transactions and watch streams (see kv-channel.ts); the store closes it. */
  readonly kv: KvChannel;
  readonly options: ResolvedEtcdOptions;
  readonly continueSecret: Uint8Array;
  /** From the server version: requested progress is ordered with events. */
  readonly progressOrdered: boolean;
}

/** See the module comment; open one with `openEtcdStore`. */
export class EtcdStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly #client: Etcd3;
  readonly #kv: KvChannel;
  readonly #options: ResolvedEtcdOptions;
  readonly #tokens: ContinueTokens;
  readonly #writes: EtcdWrites;
  readonly #watches = new Set<EtcdWatch>();
  readonly #transport: WatchTransport;
  readonly #probe: RevisionProbe;
  /** The newest revision any response has shown: where a watch without `fromRevision` starts. */
  #lastRevision = 0n;
  /** The compacted revision last learned (a hint for the search, see `compaction.ts`). */
  #knownCompacted = 0n;
  #closed = false;

  constructor(parts: EtcdStoreParts) {
    this.#client = parts.client;
    this.#kv = parts.kv;
    this.#options = parts.options;
    this.#tokens = new ContinueTokens(parts.continueSecret);
    const callOptions = (): CallOptions => this.#callOptions();
    this.#writes = new EtcdWrites(parts.kv, (header) => this.#observe(header), callOptions);
    this.#transport = {
      open: () => this.#kv.watch(),
      progressOrdered: parts.progressOrdered,
      bufferLimit: parts.options.watchBufferLimit,
      retryLimitMs: parts.options.watchRetryLimitMs,
      ended: (watch) => this.#watches.delete(watch),
    };
    this.#probe = {
      currentRevision: () => this.currentRevision(),
      readableAt: (revision) => this.#readableAt(revision),
    };
  }

  async currentRevision(): Promise<bigint> {
    const res = await this.#read('read the revision', undefined, () =>
      this.#kv.range({ key: PROBE_KEY, count_only: true }, this.#callOptions()),
    );
    return this.#observe(res.header);
  }

  async compactedRevision(): Promise<bigint> {
    const compacted = await findCompactedRevision(this.#probe, this.#knownCompacted);
    this.#knownCompacted = compacted;
    return compacted;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    checkKey(key);
    const revision = options?.revision;
    const request: IRangeRequest = { key: keyBytes(key) };
    if (revision !== undefined) request.revision = readRevision(revision);
    const res = await this.#read('get', revision, () => this.#kv.range(request, this.#callOptions()));
    const current = this.#observe(res.header);
    const kv = res.kvs[0];
    return { kv: kv === undefined ? undefined : toKeyValue(kv), revision: revision ?? current };
  }

  sealContinue(span: KeySpan, position: ContinuePosition): string {
    return this.#tokens.seal(span, position);
  }

  openContinue(span: KeySpan, token: string): ContinuePosition {
    return this.#tokens.open(span, token);
  }

  async range(span: KeySpan, options: RangeOptions = {}): Promise<RangeResult> {
    const { limit, countOnly = false, keysOnly = false } = options;
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0))
      throw new RangeError('range: limit must be a positive integer');
    const range = spanToRange(span);
    let revision = options.revision;
    let start = range?.key;
    if (options.continue !== undefined) {
      const position = this.#tokens.open(span, options.continue);
      if (revision !== undefined && revision !== position.revision) {
        throw new InvalidContinueError('the revision differs from the one the token was issued at');
      }
      revision = position.revision;
      start = keyAfter(position.lastKey);
    }
    // An empty span reads nothing, but the revision must still be a readable one.
    const request: IRangeRequest =
      range === undefined || start === undefined
        ? { key: PROBE_KEY, count_only: true }
        : { key: start, range_end: range.rangeEnd };
    if (revision !== undefined) request.revision = readRevision(revision);
    if (countOnly) request.count_only = true;
    else {
      if (limit !== undefined) request.limit = limit;
      if (keysOnly) request.keys_only = true;
    }
    const res: IRangeResponse = await this.#read('range', revision, () =>
      this.#kv.range(request, this.#callOptions()),
    );
    const current = this.#observe(res.header);
    const at = revision ?? current;
    if (range === undefined) return { items: [], revision: at, more: false, count: 0 };
    const count = Number(res.count);
    if (countOnly) return { items: [], revision: at, more: false, count };
    const items = res.kvs.map((kv) => toKeyValue(kv));
    const last = items[items.length - 1];
    if (!res.more || last === undefined) return { items, revision: at, more: false, count };
    return {
      items,
      revision: at,
      more: true,
      count,
      continue: this.#tokens.seal(span, { revision: at, lastKey: last.key }),
    };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    this.#checkWrite(key);
    try {
      return await this.#writes.create(key, value, options?.lease);
    } catch (err) {
      throw toStoreError(err, 'create');
    }
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    this.#checkWrite(key);
    try {
      return await this.#writes.update(key, value, options);
    } catch (err) {
      throw toStoreError(err, 'update');
    }
  }

  async delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    this.#checkWrite(key);
    try {
      return await this.#writes.delete(key, options?.ifModRevision);
    } catch (err) {
      throw toStoreError(err, 'delete');
    }
  }

  async txn(request: TxnRequest): Promise<WriteResult> {
    this.#checkWrite(request.key);
    try {
      return await this.#writes.txn(request);
    } catch (err) {
      throw toStoreError(err, 'txn');
    }
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    const from = options?.fromRevision ?? this.#lastRevision + 1n;
    const watch = new EtcdWatch(
      this.#transport,
      spanToRange(span),
      from < 1n ? 1n : from,
      options?.progressIntervalMs,
      options?.previousValues !== false,
    );
    if (this.#closed) watch.close();
    else this.#watches.add(watch);
    return watch;
  }

  async compact(revision: bigint): Promise<void> {
    this.#checkOpen('compact');
    if (revision <= this.#knownCompacted) return;
    try {
      await this.#client.kv.compact({ revision: wire(revision), physical: false }, this.#callOptions());
      this.#knownCompacted = revision;
    } catch (err) {
      if (!isOutOfRange(err)) throw toStoreError(err, 'compact');
      // OUT_OF_RANGE: in the future, or at or below what is already compacted (a no-op).
      const current = await this.currentRevision();
      if (revision > current) throw new RevisionTooLargeError(revision, current);
    }
  }

  async grantLease(ttlSeconds: number): Promise<bigint> {
    if (!(Number.isSafeInteger(ttlSeconds) && ttlSeconds >= 1))
      throw new RangeError('grantLease: ttlSeconds must be an integer ≥ 1');
    this.#checkOpen('grant a lease');
    try {
      const res = await this.#client.leaseClient.leaseGrant({ TTL: ttlSeconds }, this.#callOptions());
      this.#observe(res.header);
      return fromWire(res.ID);
    } catch (err) {
      throw toStoreError(err, 'grant a lease');
    }
  }

  async revokeLease(lease: bigint): Promise<void> {
    try {
      const res = await this.#read('revoke a lease', undefined, () =>
        this.#client.leaseClient.leaseRevoke({ ID: wire(lease) }, this.#callOptions()),
      );
      this.#observe(res.header);
    } catch (err) {
      if (err instanceof EtcdRequestError && err.reason === 'lease-not-found') return;
      throw err;
    }
  }

  async checkHealth(): Promise<void> {
    this.#checkOpen('health check');
    try {
      const res = await this.#kv.range(
        { key: PROBE_KEY, count_only: true },
        { deadline: Date.now() + this.#options.healthTimeoutMs },
      );
      this.#observe(res.header);
    } catch (err) {
      throw new UnavailableError('etcd: health check failed', { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const watch of [...this.#watches]) watch.close();
    this.#client.close();
    this.#kv.close();
  }

  /**
   * Runs an idempotent call: retries transient failures, and turns OUT_OF_RANGE for a read at
   * `revision` into the typed error it stands for (reading again if the revision was only
   * briefly in the future).
   */
  async #read<T>(what: string, revision: bigint | undefined, call: () => Promise<T>): Promise<T> {
    this.#checkOpen(what);
    let retries = 0;
    let reread = false;
    for (;;) {
      try {
        return await call();
      } catch (err) {
        if (revision !== undefined && !reread && isOutOfRange(err)) {
          const verdict = await classifyOutOfRange(this.#probe, revision, this.#knownCompacted);
          if (verdict instanceof CompactedError) this.#knownCompacted = verdict.compactedRevision;
          if (verdict !== undefined) throw verdict;
          reread = true;
          continue;
        }
        const pause = READ_RETRY_DELAYS_MS[retries];
        if (pause === undefined || this.#closed || !isTransient(err)) throw toStoreError(err, what);
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  async #readableAt(revision: bigint): Promise<boolean> {
    try {
      await this.#read('probe the compacted revision', undefined, () =>
        this.#kv.range({ key: PROBE_KEY, count_only: true, revision: wire(revision) }, this.#callOptions()),
      );
      return true;
    } catch (err) {
      if (err instanceof EtcdRequestError && isOutOfRange(err.cause)) return false;
      throw err;
    }
  }

  #observe(header: IResponseHeader): bigint {
    const revision = headerRevision(header);
    if (revision > this.#lastRevision) this.#lastRevision = revision;
    return revision;
  }

  #callOptions(): CallOptions {
    return { deadline: Date.now() + this.#options.requestTimeoutMs };
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new UnavailableError(`etcd ${what}: the store is closed`);
  }

  #checkWrite(key: string): void {
    this.#checkOpen('write');
    checkKey(key);
  }
}

/** Keys are non-empty (etcd rejects an empty key). */
function checkKey(key: string): void {
  if (key.length === 0) throw new RangeError('storage keys must not be empty');
}

/**
 * A read revision on the wire. etcd reads the current revision at 0; the contract's revision 0
 * is the empty state before the first write, which is etcd's revision 1 (etcd starts there).
 */
function readRevision(revision: bigint): string {
  if (revision < 0n) throw new RangeError('revisions are never negative');
  return revision === 0n ? '1' : wire(revision);
}
