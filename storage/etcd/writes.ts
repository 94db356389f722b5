/**
 * Writes as etcd transactions: create, update, delete and the general compare-then-write.
 *
 * Every write is one `Txn` whose compare guards it (the key is absent, exists, or has a given mod
 * revision) and whose failure branch reads the key, so a failed compare reports the current
 * key-value from the same transaction, without a second round trip or a race. The client never
 * retries writes (see `options.ts`), so a write is applied at most once; the guard also makes a
 * repeated request fail instead of applying twice. The only unguarded write is the txn put with
 * `ifModRevision: undefined`, which asks for exactly that.
 *
 * | call                      | compare                | compare fails                    |
 * |---------------------------|------------------------|----------------------------------|
 * | create / txn put 0n       | create_revision = 0    | AlreadyExistsError(current)      |
 * | update(X)                 | mod_revision = X (>0)  | NotFound (absent) / Conflict     |
 * | txn put X                 | mod_revision = X       | ConflictError(current or none)   |
 * | delete() / txn delete     | create_revision > 0    | NotFoundError                    |
 * | delete(X)                 | mod_revision = X       | NotFound (absent) / Conflict     |
 * | txn delete X / 0n         | mod_revision = X       | Conflict / AlreadyExists (0n)    |
 */
import type { ICompare, IPutRequest, IRequestOp, IResponseHeader, ITxnRequest, ITxnResponse } from 'etcd3';
import { AlreadyExistsError, ConflictError, LeaseNotFoundError, NotFoundError } from '../errors.js';
import { isLeaseNotFound } from './error-map.js';
import type { KeyValue, TxnRequest, UpdateOptions, WriteResult } from '../interface.js';
import { fromWire, keyBytes, toKeyValue, valueBytes, wire, type CallOptions } from './codec.js';

/** Observes a response header (the store tracks the newest revision it has seen) and returns its revision. */
export type ObserveHeader = (header: IResponseHeader) => bigint;

/** Lease handling of a put: attach this one, keep the key's current one, or none. */
type LeaseMode = bigint | 'keep' | undefined;

const absent = (key: Buffer): ICompare => ({ key, target: 'Create', result: 'Equal', create_revision: '0' });
const exists = (key: Buffer): ICompare => ({
  key,
  target: 'Create',
  result: 'Greater',
  create_revision: '0',
});
const modIs = (key: Buffer, rev: bigint): ICompare => ({
  key,
  target: 'Mod',
  result: 'Equal',
  mod_revision: wire(rev),
});

/** Where the transactions go (the store's `KvChannel`, or the etcd3 client's KV in tests). */
export interface TxnSender {
  txn(request: ITxnRequest, options: CallOptions): Promise<ITxnResponse>;
}

/** Issues the write transactions for one store. */
export class EtcdWrites {
  readonly #kv: TxnSender;
  readonly #observe: ObserveHeader;
  readonly #callOptions: () => CallOptions;

  constructor(kv: TxnSender, observe: ObserveHeader, callOptions: () => CallOptions) {
    this.#kv = kv;
    this.#observe = observe;
    this.#callOptions = callOptions;
  }

  /** See `Store.create`. */
  async create(key: string, value: Uint8Array, lease: bigint | undefined): Promise<WriteResult> {
    const k = keyBytes(key);
    const res = await this.#txn([absent(k)], [{ request_put: putRequest(k, value, lease) }], k, lease);
    const revision = this.#observe(res.header);
    if (!res.succeeded) throw new AlreadyExistsError(key, currentOf(res));
    return {
      revision,
      kv: { key, value, createRevision: revision, modRevision: revision, lease: lease ?? 0n },
    };
  }

  /**
   * See `Store.update`: `lease` unset keeps the key's lease. With both `lease` and
   * `createRevision` given, the put is not followed by a read of the written key's metadata: an
   * etcd txn pays for every read it holds (as it does for a put that keeps its lease), and
   * kube-apiserver's updates have neither.
   */
  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    const { ifModRevision, lease, createRevision } = options;
    const k = keyBytes(key);
    // mod_revision = 0 also holds for an absent key, which update must refuse: require existence.
    const compare = ifModRevision === 0n ? [modIs(k, 0n), exists(k)] : [modIs(k, ifModRevision)];
    const known = lease !== undefined && createRevision !== undefined;
    const res = known
      ? await this.#txn(compare, [{ request_put: putRequest(k, value, lease) }], k, lease)
      : await this.#putWithMeta(k, value, compare, lease ?? 'keep');
    const revision = this.#observe(res.header);
    if (!res.succeeded) {
      const current = currentOf(res);
      if (current === undefined) throw new NotFoundError(key);
      throw new ConflictError(key, ifModRevision, current, revision);
    }
    if (known) return { revision, kv: { key, value, createRevision, modRevision: revision, lease } };
    return { revision, kv: writtenKv(res, key, value, revision) };
  }

  /** See `Store.delete`. */
  async delete(key: string, ifModRevision: bigint | undefined): Promise<WriteResult> {
    const k = keyBytes(key);
    const res = await this.#deleteTxn(k, ifModRevision === undefined ? exists(k) : modIs(k, ifModRevision));
    const revision = this.#observe(res.header);
    if (!res.succeeded) {
      const current = currentOf(res);
      if (current === undefined) throw new NotFoundError(key);
      throw new ConflictError(key, ifModRevision, current, revision);
    }
    return { revision, kv: deletedKv(res, key) };
  }

  /** See `Store.txn`: a put without `lease` writes the key without a lease. */
  async txn(request: TxnRequest): Promise<WriteResult> {
    const { key, ifModRevision, then } = request;
    if (then.op === 'put' && ifModRevision === 0n) return this.create(key, then.value, then.lease);
    const k = keyBytes(key);
    if (then.op === 'put') {
      const compare = ifModRevision === undefined ? [] : [modIs(k, ifModRevision)];
      const res = await this.#putWithMeta(k, then.value, compare, then.lease);
      const revision = this.#observe(res.header);
      if (!res.succeeded) throw new ConflictError(key, ifModRevision, currentOf(res), revision);
      return { revision, kv: writtenKv(res, key, then.value, revision) };
    }
    const res = await this.#deleteTxn(k, ifModRevision === undefined ? exists(k) : modIs(k, ifModRevision));
    const revision = this.#observe(res.header);
    if (!res.succeeded) {
      if (ifModRevision === undefined) throw new NotFoundError(key);
      const current = currentOf(res);
      if (ifModRevision === 0n && current !== undefined) throw new AlreadyExistsError(key, current);
      throw new ConflictError(key, ifModRevision, current, revision);
    }
    return { revision, kv: deletedKv(res, key) };
  }

  /** A put that also reads back the written key's metadata (create revision, lease) in the same txn. */
  #putWithMeta(k: Buffer, value: Uint8Array, compare: ICompare[], lease: LeaseMode): Promise<ITxnResponse> {
    return this.#txn(
      compare,
      [{ request_put: putRequest(k, value, lease) }, { request_range: { key: k, keys_only: true } }],
      k,
      lease,
    );
  }

  #deleteTxn(k: Buffer, compare: ICompare): Promise<ITxnResponse> {
    return this.#txn([compare], [{ request_delete_range: { key: k, prev_kv: true } }], k);
  }

  /** One write transaction; `lease` is the lease its put attaches, if any. */
  async #txn(
    compare: ICompare[],
    success: IRequestOp[],
    k: Buffer,
    lease?: LeaseMode,
  ): Promise<ITxnResponse> {
    try {
      return await this.#kv.txn(
        { compare, success, failure: [{ request_range: { key: k } }] },
        this.#callOptions(),
      );
    } catch (err) {
      // etcd checks the lease of a put only on the branch its compares chose, as the contract wants.
      if (typeof lease === 'bigint' && lease !== 0n && isLeaseNotFound(err))
        throw new LeaseNotFoundError(lease);
      throw err;
    }
  }
}

function putRequest(key: Buffer, value: Uint8Array, lease: LeaseMode): IPutRequest {
  if (lease === 'keep') return { key, value: valueBytes(value), ignore_lease: true };
  if (lease === undefined || lease === 0n) return { key, value: valueBytes(value) };
  return { key, value: valueBytes(value), lease: wire(lease) };
}

/** The key as the failure branch read it, or undefined when it does not exist. */
function currentOf(res: ITxnResponse): KeyValue | undefined {
  const kv = res.responses[0]?.response_range.kvs[0];
  return kv === undefined ? undefined : toKeyValue(kv);
}

/** The key as written by a successful {@link EtcdWrites.#putWithMeta}. */
function writtenKv(res: ITxnResponse, key: string, value: Uint8Array, revision: bigint): KeyValue {
  const meta = res.responses[1]?.response_range.kvs[0];
  return {
    key,
    value,
    createRevision: meta === undefined ? revision : fromWire(meta.create_revision),
    modRevision: revision,
    lease: meta === undefined ? 0n : fromWire(meta.lease),
  };
}

/** The key-value a successful delete removed. */
function deletedKv(res: ITxnResponse, key: string): KeyValue {
  const prev = res.responses[0]?.response_delete_range.prev_kvs[0];
  // Deleting nothing succeeds only under `mod_revision = 0`, i.e. the key was absent.
  if (prev === undefined) throw new NotFoundError(key);
  return toKeyValue(prev);
}
