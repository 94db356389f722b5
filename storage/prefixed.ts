/**
 * A {@link Store} seen through a key prefix: the server's `--etcd-prefix`, and the way the shared
 * conformance suite reruns every test one level down (as abstract-level reruns its suite through a
 * sublevel).
 *
 * Translation is plain concatenation, as kube-apiserver's etcd prefix is: key `k` is stored as
 * `prefix + k`. Because UTF-8 byte order is preserved under a common prefix, a span maps to exactly
 * one span of the underlying store, so order, limits, counts and continue tokens need no work:
 * tokens pass through untouched (the underlying store binds them to the translated span, so a
 * token from another prefix is rejected as foreign). Revisions, compaction and leases are the
 * underlying store's own; two prefixes over one store share one revision counter.
 *
 * Choose a prefix that no other user's key extends by accident: with prefix `/registry`, the inner
 * span `{ prefix: '' }` covers every outer key that starts with `/registry`, `/registry-old/x`
 * included. Kubernetes keys all start with `/`, so `/registry` is safe for them.
 */
import { MappedWatch } from './mapped-watch.js';
import { PassThroughStore } from './pass-through-store.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from './errors.js';
import type {
  ContinuePosition,
  CreateOptions,
  DeleteOptions,
  GetOptions,
  GetResult,
  KeySpan,
  KeyValue,
  RangeOptions,
  RangeResult,
  Store,
  TxnRequest,
  UpdateOptions,
  Watch,
  WatchEvent,
  WatchOptions,
  WriteResult,
} from './interface.js';

/**
 * `store` with every key, span and returned key translated by `prefix`.
 *
 * - Keys gain `prefix` going in and lose it coming out (results, watch events, and the keys and
 *   key-values carried by {@link NotFoundError}, {@link AlreadyExistsError}, {@link ConflictError}).
 * - An empty key is rejected with a `RangeError` before it reaches the store (it would otherwise
 *   silently name the prefix itself).
 * - `close()` closes the underlying store: the wrapper owns it.
 *
 * @param prefix non-empty; usually ends with a separator the inner keys never start with.
 * @example
 * const store = prefixed(await openEtcdStore(options), '/registry');
 * await store.create('/pods/default/web', bytes); // etcd key `/registry/pods/default/web`
 */
export function prefixed(store: Store, prefix: string): Store {
  if (prefix.length === 0) throw new RangeError('prefixed: the prefix must be non-empty');
  return new PrefixedStore(store, prefix);
}

class PrefixedStore extends PassThroughStore {
  readonly #prefix: string;

  constructor(inner: Store, prefix: string) {
    super(inner);
    this.#prefix = prefix;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.#call(this.inner.get(this.#in(key), options));
    return result.kv === undefined ? result : { kv: this.#outKv(result.kv), revision: result.revision };
  }

  async range(span: KeySpan, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.inner.range(this.#inSpan(span), options);
    if (result.items.length === 0) return result;
    return { ...result, items: result.items.map((kv) => this.#outKv(kv)) };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    return this.#outWrite(await this.#call(this.inner.create(this.#in(key), value, options)));
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    return this.#outWrite(await this.#call(this.inner.update(this.#in(key), value, options)));
  }

  async delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    return this.#outWrite(await this.#call(this.inner.delete(this.#in(key), options)));
  }

  async txn(request: TxnRequest): Promise<WriteResult> {
    const inner: TxnRequest = {
      key: this.#in(request.key),
      ifModRevision: request.ifModRevision,
      then: request.then,
    };
    return this.#outWrite(await this.#call(this.inner.txn(inner)));
  }

  override sealContinue(span: KeySpan, position: ContinuePosition): string {
    return this.inner.sealContinue(this.#inSpan(span), {
      ...position,
      lastKey: this.#prefix + position.lastKey,
    });
  }

  override openContinue(span: KeySpan, token: string): ContinuePosition {
    const position = this.inner.openContinue(this.#inSpan(span), token);
    return { ...position, lastKey: this.#out(position.lastKey) };
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    return new MappedWatch(this.inner.watch(this.#inSpan(span), options), (event) => this.#outEvent(event));
  }

  #in(key: string): string {
    // Checked here because the prefixed form of '' is a valid key the store would accept.
    if (key.length === 0) throw new RangeError('storage keys must be non-empty');
    return this.#prefix + key;
  }

  #inSpan(span: KeySpan): KeySpan {
    // [p+start, p+end) holds exactly the keys p+k with k in [start, end): byte order is kept
    // under a common prefix, and every key between two strings starting with p starts with p.
    return 'prefix' in span
      ? { prefix: this.#prefix + span.prefix }
      : { start: this.#prefix + span.start, end: this.#prefix + span.end };
  }

  #out(key: string): string {
    return key.slice(this.#prefix.length);
  }

  #outKv(kv: KeyValue): KeyValue {
    return {
      key: this.#out(kv.key),
      value: kv.value,
      createRevision: kv.createRevision,
      modRevision: kv.modRevision,
      lease: kv.lease,
    };
  }

  #outWrite(result: WriteResult): WriteResult {
    return { revision: result.revision, kv: this.#outKv(result.kv) };
  }

  #outEvent(event: WatchEvent): WatchEvent {
    switch (event.type) {
      case 'progress':
        return event;
      case 'put':
        return {
          type: 'put',
          revision: event.revision,
          kv: this.#outKv(event.kv),
          prevKv: event.prevKv === undefined ? undefined : this.#outKv(event.prevKv),
        };
      case 'delete':
        return {
          type: 'delete',
          revision: event.revision,
          kv: this.#outKv(event.kv),
          prevKv: this.#outKv(event.prevKv),
        };
    }
  }

  /** Awaits `pending`, re-raising key-carrying errors with the caller's keys. */
  async #call<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (err) {
      throw this.#outError(err);
    }
  }

  #outError(err: unknown): unknown {
    if (err instanceof NotFoundError) return new NotFoundError(this.#out(err.key));
    if (err instanceof AlreadyExistsError) {
      return new AlreadyExistsError(
        this.#out(err.key),
        err.current === undefined ? undefined : this.#outKv(err.current),
      );
    }
    if (err instanceof ConflictError) {
      return new ConflictError(
        this.#out(err.key),
        err.expectedModRevision,
        err.current === undefined ? undefined : this.#outKv(err.current),
        err.revision,
      );
    }
    // Compacted, RevisionTooLarge, InvalidContinue and Unavailable carry no keys.
    return err;
  }
}
