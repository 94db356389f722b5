/**
 * The reference model of the storage contract (`storage/interface.ts`), written to be obviously
 * right rather than fast: it keeps every write in a list, computes the state at revision R by
 * replaying the writes numbered ≤ R, and answers each call with the result or the typed error the
 * contract prescribes. The property suite runs the same operations on a real store and on this
 * model and compares the two.
 *
 * The model starts at `baseRevision` with an empty key space: a store shared with other tests is
 * modelled through a key namespace of its own, so earlier writes elsewhere do not matter.
 *
 * One unspecified corner is left out on purpose: a txn put without a lease on a key that has one.
 */
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  LeaseNotFoundError,
  NotFoundError,
  RevisionTooLargeError,
} from '../../storage/errors.js';
import { compareKeys, spanContains } from '../../storage/continue-token.js';
import type { KeySpan, KeyValue, TxnRequest, WatchEvent, WriteResult } from '../../storage/interface.js';

/** Options of {@link StoreModel}. */
export interface ModelOptions {
  /** The store's revision when the model starts (nothing in the modelled key space yet). */
  readonly baseRevision?: bigint;
  /** The store's compacted revision when the model starts. */
  readonly compactedRevision?: bigint;
  /**
   * Make the model wrong on purpose, to show the property suite catches it: paged reads resume
   * AT the continue key instead of strictly after it. Off by default; the property suite turns it
   * on with `CAPSTAN_MODEL_BUG=1`.
   */
  readonly seededBug?: boolean;
}

/** One write: a put (`kv` set) or a delete (`kv` undefined) of `key` at `revision`. */
export interface ModelWrite {
  readonly revision: bigint;
  readonly key: string;
  readonly kv: KeyValue | undefined;
  /** The key just before this write. */
  readonly prevKv: KeyValue | undefined;
}

/** What the model expects of a range read. */
export interface ModelRange {
  readonly items: readonly KeyValue[];
  readonly revision: bigint;
  readonly count: number;
  readonly more: boolean;
}

/** Range options in model terms: `after` is the last key of the previous chunk. */
export interface ModelRangeOptions {
  readonly revision?: bigint | undefined;
  readonly limit?: number | undefined;
  readonly after?: string | undefined;
  readonly keysOnly?: boolean | undefined;
  readonly countOnly?: boolean | undefined;
}

const EMPTY = new Uint8Array(0);

/** The contract as a list of writes. Methods throw the typed errors a store must throw. */
export class StoreModel {
  /** Every successful write, in revision order. */
  readonly writes: ModelWrite[] = [];
  #revision: bigint;
  #compacted: bigint;
  readonly #leases = new Set<bigint>();
  readonly #seededBug: boolean;

  constructor(options: ModelOptions = {}) {
    this.#revision = options.baseRevision ?? 0n;
    this.#compacted = options.compactedRevision ?? 0n;
    this.#seededBug = options.seededBug ?? false;
  }

  /** The current revision. */
  get revision(): bigint {
    return this.#revision;
  }

  /** The compacted revision (`0n` if never). */
  get compacted(): bigint {
    return this.#compacted;
  }

  /** The keys at `revision` (default: current), by replay. Does not check retention. */
  stateAt(revision: bigint = this.#revision): Map<string, KeyValue> {
    const state = new Map<string, KeyValue>();
    for (const write of this.writes) {
      if (write.revision > revision) break;
      if (write.kv === undefined) state.delete(write.key);
      else state.set(write.key, write.kv);
    }
    return state;
  }

  /** Throws what a read at `revision` must throw: too large, or compacted. */
  checkReadable(revision: bigint): void {
    if (revision > this.#revision) throw new RevisionTooLargeError(revision, this.#revision);
    if (revision < this.#compacted) throw new CompactedError(revision, this.#compacted);
  }

  get(key: string, revision?: bigint): { kv: KeyValue | undefined; revision: bigint } {
    const at = revision ?? this.#revision;
    this.checkReadable(at);
    return { kv: this.stateAt(at).get(key), revision: at };
  }

  range(span: KeySpan, options: ModelRangeOptions = {}): ModelRange {
    const at = options.revision ?? this.#revision;
    this.checkReadable(at);
    const after = options.after;
    const inSpan = [...this.stateAt(at).values()]
      .filter((kv) => spanContains(span, kv.key))
      .filter((kv) => after === undefined || compareKeys(kv.key, after) > (this.#seededBug ? -1 : 0))
      .sort((a, b) => compareKeys(a.key, b.key));
    if (options.countOnly === true) return { items: [], revision: at, count: inSpan.length, more: false };
    const chunk = options.limit === undefined ? inSpan : inSpan.slice(0, options.limit);
    const items = options.keysOnly === true ? chunk.map((kv) => ({ ...kv, value: EMPTY })) : chunk;
    return { items, revision: at, count: inSpan.length, more: items.length < inSpan.length };
  }

  create(key: string, value: Uint8Array, lease?: bigint): WriteResult {
    const current = this.stateAt().get(key);
    if (current !== undefined) throw new AlreadyExistsError(key, current);
    return this.#put(key, value, lease ?? 0n, undefined);
  }

  update(key: string, value: Uint8Array, ifModRevision: bigint, lease?: bigint): WriteResult {
    const current = this.stateAt().get(key);
    if (current === undefined) throw new NotFoundError(key);
    if (current.modRevision !== ifModRevision)
      throw new ConflictError(key, ifModRevision, current, this.#revision);
    return this.#put(key, value, lease ?? current.lease, current);
  }

  delete(key: string, ifModRevision?: bigint): WriteResult {
    const current = this.stateAt().get(key);
    if (current === undefined) throw new NotFoundError(key);
    if (ifModRevision !== undefined && current.modRevision !== ifModRevision) {
      throw new ConflictError(key, ifModRevision, current, this.#revision);
    }
    return this.#delete(current);
  }

  txn(request: TxnRequest): WriteResult {
    const { key, ifModRevision, then } = request;
    const current = this.stateAt().get(key);
    if (ifModRevision === 0n && current !== undefined) throw new AlreadyExistsError(key, current);
    if (ifModRevision !== undefined && ifModRevision !== 0n && current?.modRevision !== ifModRevision) {
      throw new ConflictError(key, ifModRevision, current, this.#revision);
    }
    if (then.op === 'delete') {
      if (current === undefined) throw new NotFoundError(key);
      return this.#delete(current);
    }
    return this.#put(key, then.value, then.lease ?? 0n, current);
  }

  /** Discards history before `revision` (a no-op at or below the compacted revision). */
  compact(revision: bigint): void {
    if (revision > this.#revision) throw new RevisionTooLargeError(revision, this.#revision);
    if (revision > this.#compacted) this.#compacted = revision;
  }

  /** Records a lease the store granted (the model cannot predict lease ids). */
  grantLease(lease: bigint): void {
    this.#leases.add(lease);
  }

  /** True for a granted, not yet revoked lease. */
  hasLease(lease: bigint): boolean {
    return this.#leases.has(lease);
  }

  /** The live keys attached to `lease`, in key order. */
  keysOfLease(lease: bigint): string[] {
    return [...this.stateAt().values()]
      .filter((kv) => kv.lease === lease)
      .map((kv) => kv.key)
      .sort(compareKeys);
  }

  /**
   * Revokes `lease`: its live keys are deleted together at one new revision, as etcd does (none
   * when it has no keys). Returns the deletes made.
   */
  revokeLease(lease: bigint): WriteResult[] {
    if (!this.#leases.delete(lease)) return [];
    const state = this.stateAt();
    const doomed = this.keysOfLease(lease)
      .map((key) => state.get(key))
      .filter((kv) => kv !== undefined);
    if (doomed.length === 0) return [];
    const revision = this.#revision + 1n;
    for (const kv of doomed) this.writes.push({ revision, key: kv.key, kv: undefined, prevKv: kv });
    this.#revision = revision;
    return doomed.map((kv) => ({ revision, kv }));
  }

  /** The events a watch on `span` from `fromRevision` delivers, up to the current revision. */
  events(span: KeySpan, fromRevision: bigint): WatchEvent[] {
    const events: WatchEvent[] = [];
    for (const write of this.writes) {
      if (write.revision < fromRevision || !spanContains(span, write.key)) continue;
      if (write.kv !== undefined) {
        events.push({ type: 'put', revision: write.revision, kv: write.kv, prevKv: write.prevKv });
      } else if (write.prevKv !== undefined) {
        const kv = {
          key: write.key,
          value: EMPTY,
          createRevision: 0n,
          modRevision: write.revision,
          lease: 0n,
        };
        events.push({ type: 'delete', revision: write.revision, kv, prevKv: write.prevKv });
      }
    }
    return events;
  }

  #put(key: string, value: Uint8Array, lease: bigint, current: KeyValue | undefined): WriteResult {
    if (lease !== 0n && !this.#leases.has(lease)) throw new LeaseNotFoundError(lease);
    const revision = this.#revision + 1n;
    // Copied: the contract lets callers reuse their buffers once the call returns.
    const kv: KeyValue = {
      key,
      value: Uint8Array.from(value),
      createRevision: current?.createRevision ?? revision,
      modRevision: revision,
      lease,
    };
    this.writes.push({ revision, key, kv, prevKv: current });
    this.#revision = revision;
    return { revision, kv };
  }

  #delete(current: KeyValue): WriteResult {
    const revision = this.#revision + 1n;
    this.writes.push({ revision, key: current.key, kv: undefined, prevKv: current });
    this.#revision = revision;
    return { revision, kv: current };
  }
}
