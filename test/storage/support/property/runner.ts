/**
 * Runs one sequence of property operations on a real store and on the reference model side by
 * side, comparing every outcome (value or typed error) as it goes and the whole state at the end.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { compareKeys } from '../../../../storage/continue-token.js';
import { AlreadyExistsError } from '../../../../storage/errors.js';
import type { KeySpan, RangeOptions, Store, TxnRequest } from '../../../../storage/interface.js';
import { StoreModel } from '../../model.js';
import { outcome, plainError, plainKv, plainRange, type Outcome } from '../compare.js';
import { uniqueNamespace, withDeadline, type StoreFactory } from '../factory.js';
import { WatchCollector } from '../watch.js';
import { KEYS, SPANS, type LeaseChoice, type Op, type ReadAt, type RevisionChoice } from './ops.js';
import { settleWatch, type Watched } from './watched.js';

/** A paged read left unfinished, resumed by a later `continue` operation. */
interface Cursor {
  readonly span: KeySpan;
  readonly revision: bigint;
  readonly limit: number | undefined;
  readonly keysOnly: boolean;
  lastKey: string;
  token: string;
}

/** A hang guard per operation: a stuck call fails the run with its name instead of the suite timing out. */
const OP_DEADLINE_MS = 30_000;
const MAX_CURSORS = 4;
const MAX_WATCHES = 4;
const LEASE_TTL_SECONDS = 3600; // never expires during a run: expiry is an example test
const UNKNOWN_LEASE = 0x0bad_1ea5en;

/** Runs `ops` on a store from `factory`, checking each step against the model. */
export async function runOps(factory: StoreFactory, ops: readonly Op[], seededBug: boolean): Promise<void> {
  const store = await factory.open();
  const run = new PropertyRun(factory, store, await modelFor(store, seededBug));
  try {
    for (const [i, op] of ops.entries()) {
      run.label = `op #${i} ${fc.stringify(op)}`;
      await withDeadline(run.apply(op), run.label, OP_DEADLINE_MS);
    }
    run.label = 'at the end';
    await withDeadline(run.finish(), 'the final checks', OP_DEADLINE_MS * 4);
  } finally {
    await withDeadline(run.close(), 'closing the store and watches', OP_DEADLINE_MS);
  }
}

async function modelFor(store: Store, seededBug: boolean): Promise<StoreModel> {
  return new StoreModel({
    baseRevision: await store.currentRevision(),
    compactedRevision: await store.compactedRevision(),
    seededBug,
  });
}

class PropertyRun {
  label = '';
  readonly #factory: StoreFactory;
  #store: Store;
  readonly #model: StoreModel;
  readonly #ns: string;
  /** The lowest revision worth reading at: never 0, never before this run's key space existed. */
  readonly #low: bigint;
  readonly #leases: bigint[] = [];
  readonly #cursors: Cursor[] = [];
  #watches: Watched[] = [];

  constructor(factory: StoreFactory, store: Store, model: StoreModel) {
    this.#factory = factory;
    this.#store = store;
    this.#model = model;
    this.#ns = factory.sharedKeyspace === true ? uniqueNamespace() : '';
    this.#low = model.revision > 1n ? model.revision : 1n;
  }

  async apply(op: Op): Promise<void> {
    const model = this.#model;
    switch (op.op) {
      case 'create': {
        const key = this.#key(op.key);
        const lease = this.#lease(op.lease, key);
        const options = lease === undefined ? undefined : { lease };
        return this.#compareWrite(
          () => this.#store.create(key, op.value, options),
          () => model.create(key, op.value, lease),
        );
      }
      case 'update': {
        const key = this.#key(op.key, op.live);
        const ifModRevision = this.#expected(op.expect, key);
        const lease = this.#lease(op.lease, key);
        const options = lease === undefined ? { ifModRevision } : { ifModRevision, lease };
        return this.#compareWrite(
          () => this.#store.update(key, op.value, options),
          () => model.update(key, op.value, ifModRevision, lease),
        );
      }
      case 'delete': {
        const key = this.#key(op.key, op.live);
        const ifModRevision = op.expect === 'none' ? undefined : this.#expected(op.expect, key);
        return this.#compareWrite(
          () => this.#store.delete(key, ifModRevision === undefined ? undefined : { ifModRevision }),
          () => model.delete(key, ifModRevision),
        );
      }
      case 'txn':
        return this.#txn(op);
      case 'get': {
        const key = this.#key(op.key);
        const revision = this.#readAt(op.at);
        const actual = await outcome(() =>
          this.#store.get(key, revision === undefined ? undefined : { revision }),
        );
        const expected = await outcome(() => model.get(key, revision));
        return this.#compare(actual, expected, (r) => ({ kv: plainKv(r.kv), revision: r.revision }));
      }
      case 'range':
        return this.#range(op);
      case 'continue': {
        const cursor = this.#cursors[op.cursor % Math.max(1, this.#cursors.length)];
        if (cursor !== undefined) await this.#pages(cursor, op.pages, op.withRevision);
        return;
      }
      case 'watch':
        return this.#watch(op.span, op.from);
      case 'compact': {
        const revision = this.#pick(op.at, this.#model.revision + 1n);
        const actual = await outcome(() => this.#store.compact(revision));
        const expected = await outcome(() => model.compact(revision));
        this.#compare(actual, expected, () => null);
        expect(await this.#store.compactedRevision(), this.label).toBe(model.compacted);
        return;
      }
      case 'grant': {
        const lease = await this.#store.grantLease(LEASE_TTL_SECONDS);
        expect(lease === 0n || this.#leases.includes(lease), `${this.label}: a new lease id`).toBe(false);
        this.#leases.push(lease);
        model.grantLease(lease);
        return;
      }
      case 'revoke': {
        const lease = this.#leases[op.lease] ?? UNKNOWN_LEASE;
        await this.#store.revokeLease(lease);
        model.revokeLease(lease);
        expect(await this.#store.currentRevision(), `${this.label}: revision after revoke`).toBe(
          model.revision,
        );
        return;
      }
      case 'settle':
        for (const watched of this.#watches) await settleWatch(watched, model);
        return;
      case 'reopen':
        return this.#reopen();
    }
  }

  /** The end of a run: watches settled, cursors drained, the whole state and revisions compared. */
  async finish(): Promise<void> {
    for (const watched of this.#watches) await settleWatch(watched, this.#model);
    while (this.#cursors[0] !== undefined) await this.#pages(this.#cursors[0], 100, false);
    expect(await this.#store.currentRevision(), 'current revision').toBe(this.#model.revision);
    expect(await this.#store.compactedRevision(), 'compacted revision').toBe(this.#model.compacted);
    const all = this.#span({ prefix: '' });
    expect(plainRange(await this.#store.range(all)), 'the whole key space').toEqual(
      plainRange(this.#model.range(all)),
    );
    // Every retained revision, paged through to the end: history and paging in every run.
    const from = this.#model.compacted > this.#low ? this.#model.compacted : this.#low;
    for (let revision = from; revision <= this.#model.revision; revision++) {
      this.label = `at the end, paging the whole key space at revision ${revision}`;
      await this.#range({
        op: 'range',
        span: 0,
        at: revision,
        limit: 2,
        keysOnly: false,
        countOnly: false,
        pages: 1000,
      });
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#watches.map((watched) => watched.collector.close()));
    this.#watches = [];
    await this.#store.close();
  }

  async #txn(op: Extract<Op, { op: 'txn' }>): Promise<void> {
    const key = this.#key(op.key, op.live);
    const ifModRevision = op.expect === 'none' ? undefined : this.#expected(op.expect, key);
    let request: TxnRequest;
    if (op.then === 'delete') {
      request = { key, ifModRevision, then: { op: 'delete' } };
    } else {
      // A txn put with no lease on a key that has one is not fixed by the contract (keep or
      // detach?), so that case always says 0n explicitly.
      const current = this.#model.stateAt().get(key);
      const lease =
        this.#lease(op.lease, key) ?? (current !== undefined && current.lease !== 0n ? 0n : undefined);
      request = {
        key,
        ifModRevision,
        then: lease === undefined ? { op: 'put', value: op.value } : { op: 'put', value: op.value, lease },
      };
    }
    await this.#compareWrite(
      () => this.#store.txn(request),
      () => this.#model.txn(request),
    );
  }

  async #range(
    op: Extract<Op, { op: 'range' }> | (Omit<Extract<Op, { op: 'range' }>, 'at'> & { at: bigint }),
  ): Promise<void> {
    const span = this.#span(SPANS[op.span] ?? { prefix: '' });
    const revision = this.#readAt(op.at);
    const options: RangeOptions = {
      ...(revision === undefined ? {} : { revision }),
      ...(op.limit === undefined ? {} : { limit: op.limit }),
      ...(op.keysOnly ? { keysOnly: true } : {}),
      ...(op.countOnly ? { countOnly: true } : {}),
    };
    const actual = await outcome(() => this.#store.range(span, options));
    const expected = await outcome(() =>
      this.#model.range(span, { revision, limit: op.limit, keysOnly: op.keysOnly, countOnly: op.countOnly }),
    );
    this.#compare(actual, expected, plainRange);
    if (!actual.ok) return;
    expect(actual.value.more, `${this.label}: continue present exactly when more`).toBe(
      actual.value.continue !== undefined,
    );
    const last = actual.value.items.at(-1);
    if (actual.value.continue === undefined || last === undefined) return;
    const cursor: Cursor = {
      span,
      revision: actual.value.revision,
      limit: op.limit,
      keysOnly: op.keysOnly,
      lastKey: last.key,
      token: actual.value.continue,
    };
    this.#cursors.push(cursor);
    await this.#pages(cursor, op.pages - 1, false);
    if (this.#cursors.length > MAX_CURSORS) this.#cursors.shift();
  }

  /** Reads up to `pages` further chunks of `cursor`, dropping it once done or failed. */
  async #pages(cursor: Cursor, pages: number, withRevision: boolean): Promise<void> {
    for (let page = 0; page < pages; page++) {
      const options: RangeOptions = {
        continue: cursor.token,
        ...(cursor.limit === undefined ? {} : { limit: cursor.limit }),
        ...(cursor.keysOnly ? { keysOnly: true } : {}),
        ...(withRevision ? { revision: cursor.revision } : {}),
      };
      const actual = await outcome(() => this.#store.range(cursor.span, options));
      const expected = await outcome(() =>
        this.#model.range(cursor.span, {
          revision: cursor.revision,
          after: cursor.lastKey,
          limit: cursor.limit,
          keysOnly: cursor.keysOnly,
        }),
      );
      this.#compare(actual, expected, plainRange);
      const last = actual.ok ? actual.value.items.at(-1) : undefined;
      if (!actual.ok || actual.value.continue === undefined || last === undefined) {
        this.#cursors.splice(this.#cursors.indexOf(cursor), 1);
        return;
      }
      expect(actual.value.more, `${this.label}: continue present exactly when more`).toBe(true);
      cursor.lastKey = last.key;
      cursor.token = actual.value.continue;
    }
  }

  async #watch(spanIndex: number, from: 'now' | number): Promise<void> {
    if (this.#watches.length >= MAX_WATCHES) return;
    const span = this.#span(SPANS[spanIndex] ?? { prefix: '' });
    const model = this.#model;
    let fromRevision = from === 'now' ? undefined : this.#pick(from, model.revision + 2n);
    // A watch from exactly the compacted revision is backend-defined: never asked for.
    if (fromRevision !== undefined && fromRevision === model.compacted && model.compacted > 0n)
      fromRevision += 1n;
    const collector = new WatchCollector(
      this.#store.watch(span, fromRevision === undefined ? undefined : { fromRevision }),
    );
    const start = fromRevision ?? model.revision + 1n;
    this.#watches.push({
      label: `watch ${fc.stringify(SPANS[spanIndex])} from ${start} (started ${this.label})`,
      collector,
      span,
      from: start,
      compactedAtStart: start < model.compacted ? model.compacted : undefined,
    });
  }

  async #reopen(): Promise<void> {
    if (this.#factory.reopen === undefined) return;
    for (const watched of this.#watches) await settleWatch(watched, this.#model);
    await Promise.all(this.#watches.map((watched) => watched.collector.close()));
    this.#watches = [];
    this.#store = await this.#factory.reopen(this.#store);
    expect(await this.#store.currentRevision(), `${this.label}: revision after reopen`).toBe(
      this.#model.revision,
    );
  }

  /** Compares a write's outcome; an AlreadyExistsError's optional `current` must be right when given. */
  async #compareWrite(
    actualCall: () => Promise<{ revision: bigint; kv: Parameters<typeof plainKv>[0] }>,
    expectedCall: () => { revision: bigint; kv: Parameters<typeof plainKv>[0] },
  ): Promise<void> {
    const actual = await outcome(actualCall);
    const expected = await outcome(expectedCall);
    this.#compare(actual, expected, (r) => ({ revision: r.revision, kv: plainKv(r.kv) }));
    if (!actual.ok && actual.error instanceof AlreadyExistsError && actual.error.current !== undefined) {
      const current = expected.ok ? undefined : (expected.error as AlreadyExistsError).current;
      expect(plainKv(actual.error.current), `${this.label}: AlreadyExistsError.current`).toEqual(
        plainKv(current),
      );
    }
  }

  #compare<A, E>(actual: Outcome<A>, expected: Outcome<E>, plain: (value: A | E) => unknown): void {
    const show = (o: Outcome<A> | Outcome<E>): unknown =>
      o.ok ? { ok: plain(o.value) } : { failed: plainError(o.error) };
    expect(show(actual), this.label).toEqual(show(expected));
  }

  /** The `index`-th key, or with `live` the `index`-th existing key (modulo), if any exist. */
  #key(index: number, live = false): string {
    const existing = live ? [...this.#model.stateAt().keys()].sort(compareKeys) : [];
    return existing[index % Math.max(1, existing.length)] ?? this.#ns + (KEYS[index] ?? 'a');
  }

  #span(span: KeySpan): KeySpan {
    return 'prefix' in span
      ? { prefix: this.#ns + span.prefix }
      : { start: this.#ns + span.start, end: this.#ns + span.end };
  }

  /** A revision in [low, high] picked by `fraction`. */
  #pick(fraction: number, high: bigint): bigint {
    if (high < this.#low) return this.#low;
    const width = Number(high - this.#low + 1n);
    return this.#low + BigInt(Math.min(width - 1, Math.floor(fraction * width)));
  }

  /** Unset for a current read, else a revision that may be compacted or not reached yet. */
  #readAt(at: ReadAt | bigint): bigint | undefined {
    if (typeof at === 'bigint') return at;
    return at === 'current' ? undefined : this.#pick(at, this.#model.revision + 1n);
  }

  #expected(choice: RevisionChoice, key: string): bigint {
    const model = this.#model;
    const current = model.stateAt().get(key);
    switch (choice) {
      case 'current':
        return current?.modRevision ?? (model.revision > 0n ? model.revision : 1n);
      case 'stale':
        return current === undefined
          ? this.#low
          : current.modRevision > 1n
            ? current.modRevision - 1n
            : current.modRevision + 1n;
      case 'zero':
        return 0n;
      case 'future':
        return model.revision + 1n;
    }
  }

  /** The lease for a put, or undefined; a lease is only attached to one live key at a time. */
  #lease(choice: LeaseChoice, key: string): bigint | undefined {
    if (choice === 'keep') return undefined;
    if (choice === 'none') return 0n;
    // Revoked leases stay eligible: a write naming one must fail with LeaseNotFoundError.
    const lease = this.#leases[choice % Math.max(1, this.#leases.length)];
    if (lease === undefined) return undefined;
    // With two keys on one lease, a revoke may take one revision or two (backend-defined).
    return this.#model.keysOfLease(lease).some((other) => other !== key) ? undefined : lease;
  }
}
