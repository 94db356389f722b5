/**
 * A {@link Store} built on the reference model, so the conformance suite can be checked against
 * the contract as the model reads it before (and besides) any real backend. It is a test double
 * for the suite itself, never for callers of the storage engine.
 */
import { randomBytes } from 'node:crypto';
import { ContinueTokens } from '../../../storage/continue-token.js';
import { CompactedError, InvalidContinueError, UnavailableError } from '../../../storage/errors.js';
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
  WatchEvent,
  WatchOptions,
  WriteResult,
} from '../../../storage/interface.js';
import { StoreModel } from '../model.js';

const CAPABILITIES: StoreCapabilities = Object.freeze({
  backend: 'model',
  persistent: false,
  durable: false,
  shared: false,
});

/** A fresh model-backed store at `initialRevision` (0 by default; etcd-like stores start at 1). */
export function openModelStore(initialRevision = 0n): Store {
  return new ModelStore(initialRevision);
}

class ModelStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly #model: StoreModel;
  readonly #tokens = new ContinueTokens(randomBytes(32));
  readonly #watches = new Set<ModelWatch>();
  readonly #leaseTimers = new Map<bigint, NodeJS.Timeout>();
  #nextLease = 0x694d_0000_0000_0001n;
  #closed = false;

  constructor(initialRevision: bigint) {
    this.#model = new StoreModel({ baseRevision: initialRevision });
  }

  async currentRevision(): Promise<bigint> {
    this.#checkOpen();
    return this.#model.revision;
  }

  async compactedRevision(): Promise<bigint> {
    this.#checkOpen();
    return this.#model.compacted;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.#checkOpen();
    return this.#model.get(key, options?.revision);
  }

  sealContinue(span: KeySpan, position: ContinuePosition): string {
    return this.#tokens.seal(span, position);
  }

  openContinue(span: KeySpan, token: string): ContinuePosition {
    return this.#tokens.open(span, token);
  }

  async range(span: KeySpan, options: RangeOptions = {}): Promise<RangeResult> {
    this.#checkOpen();
    if (options.limit !== undefined && !(options.limit > 0)) throw new RangeError('limit must be > 0');
    let revision = options.revision;
    let after: string | undefined;
    if (options.continue !== undefined) {
      const position = this.#tokens.open(span, options.continue);
      if (revision !== undefined && revision !== position.revision) {
        throw new InvalidContinueError('revision differs from the token');
      }
      revision = position.revision;
      after = position.lastKey;
    }
    const result = this.#model.range(span, { ...options, revision, after });
    const last = result.items.at(-1);
    if (!result.more || last === undefined) return result;
    return { ...result, continue: this.#tokens.seal(span, { revision: result.revision, lastKey: last.key }) };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    return this.#write(() => this.#model.create(key, value, options?.lease));
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    return this.#write(() => this.#model.update(key, value, options.ifModRevision, options.lease));
  }

  async delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    return this.#write(() => this.#model.delete(key, options?.ifModRevision));
  }

  async txn(request: TxnRequest): Promise<WriteResult> {
    return this.#write(() => this.#model.txn(request));
  }

  watch(span: KeySpan, options: WatchOptions = {}): Watch {
    const watch = new ModelWatch(this.#model, span, options.fromRevision ?? this.#model.revision + 1n, () =>
      this.#watches.delete(watch),
    );
    if (this.#closed) watch.close();
    else this.#watches.add(watch);
    if (options.progressIntervalMs !== undefined) watch.requestProgressEvery(options.progressIntervalMs);
    return watch;
  }

  async compact(revision: bigint): Promise<void> {
    this.#checkOpen();
    this.#model.compact(revision);
  }

  async grantLease(ttlSeconds: number): Promise<bigint> {
    this.#checkOpen();
    if (!(ttlSeconds >= 1)) throw new RangeError('ttlSeconds must be ≥ 1');
    const lease = this.#nextLease++;
    this.#model.grantLease(lease);
    const timer = setTimeout(() => void this.revokeLease(lease).catch(() => undefined), ttlSeconds * 1000);
    timer.unref();
    this.#leaseTimers.set(lease, timer);
    return lease;
  }

  async revokeLease(lease: bigint): Promise<void> {
    this.#checkOpen();
    clearTimeout(this.#leaseTimers.get(lease));
    this.#leaseTimers.delete(lease);
    if (this.#model.revokeLease(lease).length > 0) this.#notify();
  }

  async checkHealth(): Promise<void> {
    this.#checkOpen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#leaseTimers.values()) clearTimeout(timer);
    this.#leaseTimers.clear();
    for (const watch of [...this.#watches]) watch.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw new UnavailableError('model store is closed');
  }

  #write(apply: () => WriteResult): WriteResult {
    this.#checkOpen();
    const result = apply();
    this.#notify();
    return result;
  }

  #notify(): void {
    for (const watch of this.#watches) watch.wake();
  }
}

/** A watch replaying the model's history from its position, then waiting for writes. */
class ModelWatch implements Watch {
  readonly #model: StoreModel;
  readonly #span: KeySpan;
  readonly #onClose: () => void;
  /** The next revision to deliver. */
  #position: bigint;
  #buffer: WatchEvent[] = [];
  #progressWanted = false;
  #closed = false;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(model: StoreModel, span: KeySpan, from: bigint, onClose: () => void) {
    this.#model = model;
    this.#span = span;
    this.#position = from;
    this.#onClose = onClose;
  }

  requestProgress(): void {
    this.#progressWanted = true;
    this.wake();
  }

  requestProgressEvery(ms: number): void {
    this.#timer = setInterval(() => this.requestProgress(), ms);
    this.#timer.unref();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#onClose();
    this.wake();
  }

  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return { next: () => this.#next(), return: async () => (this.close(), { done: true, value: undefined }) };
  }

  async #next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      if (this.#closed) return { done: true, value: undefined };
      const buffered = this.#buffer.shift();
      if (buffered !== undefined) return { done: false, value: buffered };
      if (this.#position <= this.#model.revision) {
        if (this.#position < this.#model.compacted) {
          this.close();
          throw new CompactedError(this.#position, this.#model.compacted);
        }
        this.#buffer = this.#model.events(this.#span, this.#position);
        this.#position = this.#model.revision + 1n;
        continue;
      }
      if (this.#progressWanted) {
        this.#progressWanted = false;
        // Everything up to the current revision is delivered (the position may lie in the future).
        return { done: false, value: { type: 'progress', revision: this.#model.revision } };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
