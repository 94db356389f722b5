/**
 * The etcd backend's pure pieces, without an etcd: key ranges, the compacted-revision search,
 * the progress state machine, the watch buffer, the server-version gate, and the shape of an
 * update's transaction.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { compareKeys, spanContains } from '../../../storage/continue-token.js';
import { CompactedError, RevisionTooLargeError } from '../../../storage/errors.js';
import type { WatchEvent } from '../../../storage/interface.js';
import { keyAfter, prefixEnd, spanToRange } from '../../../storage/etcd/codec.js';
import {
  classifyOutOfRange,
  findCompactedRevision,
  type RevisionProbe,
} from '../../../storage/etcd/compaction.js';
import { EventQueue } from '../../../storage/etcd/event-queue.js';
import { EtcdWrites, type TxnSender } from '../../../storage/etcd/writes.js';
import type { ITxnRequest, ITxnResponse } from 'etcd3';
import { progressIsOrdered } from '../../../storage/etcd/server-version.js';
import { ProgressTracker } from '../../../storage/etcd/watch-progress.js';

/** Whether `key` falls in etcd's `[key, rangeEnd)` with etcd's "\0" meaning "to the end". */
function inEtcdRange(range: { key: Buffer; rangeEnd: Buffer }, key: string): boolean {
  const k = Buffer.from(key, 'utf8');
  if (Buffer.compare(k, range.key) < 0) return false;
  if (range.rangeEnd.length === 1 && range.rangeEnd[0] === 0) return true;
  return Buffer.compare(k, range.rangeEnd) < 0;
}

describe('key ranges', () => {
  it('prefix ends: increment the last byte below 0xff, drop trailing 0xff', () => {
    expect(prefixEnd(Buffer.from('/a/'))).toEqual(Buffer.from('/a0'));
    expect(prefixEnd(Buffer.from([0x61, 0xff, 0xff]))).toEqual(Buffer.from([0x62]));
    expect(prefixEnd(Buffer.from([0xff]))).toEqual(Buffer.from([0]));
  });

  it('a span and its etcd range contain the same keys', () => {
    const key = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 });
    const span = fc.oneof(
      fc.record({ prefix: fc.string({ unit: 'grapheme', maxLength: 3 }) }),
      fc.record({
        start: fc.string({ unit: 'grapheme', maxLength: 3 }),
        end: fc.string({ unit: 'grapheme', maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(span, fc.array(key, { maxLength: 20 }), (s, keys) => {
        const range = spanToRange(s);
        for (const k of keys) {
          expect(range !== undefined && inEtcdRange(range, k)).toBe(spanContains(s, k));
        }
      }),
    );
  });

  it('the key after k is the smallest key greater than k', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'grapheme', minLength: 1 }),
        (a, b) => {
          const after = keyAfter(a).toString('utf8');
          expect(compareKeys(after, a)).toBeGreaterThan(0);
          if (compareKeys(b, a) > 0) expect(compareKeys(b, after)).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});

/** A probe over a store compacted at `compacted` and currently at `current`; counts reads. */
function fakeProbe(compacted: bigint, current: bigint): RevisionProbe & { reads: number } {
  const probe = {
    reads: 0,
    currentRevision: () => Promise.resolve(current),
    readableAt: (revision: bigint) => {
      probe.reads += 1;
      if (revision > current) throw new Error(`probe asked above current: ${revision}`);
      return Promise.resolve(revision >= compacted);
    },
  };
  return probe;
}

describe('compacted revision search', () => {
  it('finds the smallest readable revision, from any hint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 1n, max: 5000n }),
        fc.bigInt({ min: 0n, max: 5000n }),
        fc.bigInt({ min: 0n, max: 6000n }),
        async (current, c, hint) => {
          const compacted = c > current ? current : c;
          const found = await findCompactedRevision(fakeProbe(compacted, current), hint);
          expect(found).toBe(compacted <= 1n ? (hint === 1n ? 1n : 0n) : compacted);
        },
      ),
    );
  });

  it('needs two reads past the first when the hint is right', async () => {
    const probe = fakeProbe(700n, 1000n);
    expect(await findCompactedRevision(probe, 700n)).toBe(700n);
    expect(probe.reads).toBe(3);
  });

  it('classifies OUT_OF_RANGE by the current and compacted revisions', async () => {
    const probe = fakeProbe(50n, 100n);
    expect(await classifyOutOfRange(probe, 101n, 0n)).toEqual(new RevisionTooLargeError(101n, 100n));
    const compacted = await classifyOutOfRange(probe, 49n, 0n);
    expect(compacted).toBeInstanceOf(CompactedError);
    expect(compacted).toMatchObject({ requestedRevision: 49n, compactedRevision: 50n });
    expect(await classifyOutOfRange(probe, 60n, 0n)).toBeUndefined();
  });
});

describe('server version gate for progress answers', () => {
  it('trusts only versions with etcd-io/etcd#15237 and #17557', () => {
    expect(progressIsOrdered('3.4.23')).toBe(false);
    expect(progressIsOrdered('3.4.30')).toBe(false);
    expect(progressIsOrdered('3.4.31')).toBe(true);
    expect(progressIsOrdered('3.5.12')).toBe(false);
    expect(progressIsOrdered('3.5.13')).toBe(true);
    expect(progressIsOrdered('3.6.0')).toBe(true);
    expect(progressIsOrdered(undefined)).toBe(false);
    expect(progressIsOrdered('garbage')).toBe(false);
  });
});

const put = (revision: bigint): WatchEvent => ({
  type: 'put',
  revision,
  kv: { key: 'k', value: new Uint8Array(), createRevision: revision, modRevision: revision, lease: 0n },
  prevKv: undefined,
});

describe('event queue', () => {
  it('hands events to waiting and later next() calls in order', async () => {
    const queue = new EventQueue();
    const first = queue.next();
    queue.push(put(1n));
    queue.push(put(2n));
    expect((await first).value).toEqual(put(1n));
    expect((await queue.next()).value).toEqual(put(2n));
    expect(queue.size).toBe(0);
  });

  it('drains buffered events before throwing a failure once, then reports done', async () => {
    const queue = new EventQueue();
    queue.push(put(1n));
    const err = new CompactedError(1n, 5n);
    queue.fail(err);
    queue.push(put(2n));
    expect((await queue.next()).value).toEqual(put(1n));
    await expect(queue.next()).rejects.toBe(err);
    expect(await queue.next()).toEqual({ done: true, value: undefined });
  });

  it('end() resolves pending next() with done and drops the buffer', async () => {
    const queue = new EventQueue();
    const pending = queue.next();
    queue.end();
    expect(await pending).toEqual({ done: true, value: undefined });
    queue.push(put(1n));
    expect(await queue.next()).toEqual({ done: true, value: undefined });
  });

  it('keeps order across many pushes and takes', async () => {
    const queue = new EventQueue();
    for (let i = 1n; i <= 5000n; i++) queue.push(put(i));
    for (let i = 1n; i <= 5000n; i++) expect((await queue.next()).value?.revision).toBe(i);
  });
});

describe('progress tracker', () => {
  let sent: number;
  let emitted: Array<[bigint, boolean]>;
  const sink = {
    sendRequest: () => {
      sent += 1;
      return true;
    },
    emit: (revision: bigint, trusted: boolean) => emitted.push([revision, trusted]),
  };

  beforeEach(() => {
    sent = 0;
    emitted = [];
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on an ordering server, emits the first answer as trusted', () => {
    const tracker = new ProgressTracker(true, sink);
    tracker.onCreated(11n, 10n);
    tracker.request();
    expect(sent).toBe(1);
    tracker.onAnswer(10n);
    expect(emitted).toEqual([[10n, true]]);
    tracker.onAnswer(12n); // a late duplicate answer is ignored once idle
    expect(emitted).toHaveLength(1);
  });

  it('on an older server, confirms an answer with a second request before emitting it', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(11n, 10n);
    tracker.request();
    tracker.onAnswer(10n);
    expect(emitted).toEqual([]);
    expect(sent).toBe(2);
    tracker.onAnswer(12n);
    expect(emitted).toEqual([[10n, false]]);
  });

  it('on an older server, waits out a possible history replay before trusting answers', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(5n, 10n); // started below the server's revision: replaying
    tracker.request();
    tracker.onAnswer(10n);
    vi.advanceTimersByTime(200);
    expect(emitted).toEqual([]);
    vi.advanceTimersByTime(1_000); // grace over: asks again
    tracker.onAnswer(10n);
    tracker.onAnswer(10n);
    expect(emitted).toEqual([[10n, false]]);
  });

  it('ends the replay wait at the first event response that reaches the server revision', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(5n, 10n);
    tracker.onEvents(10n, true);
    tracker.request();
    tracker.onAnswer(10n);
    tracker.onAnswer(11n);
    expect(emitted).toEqual([[10n, false]]);
  });

  it("a replay batch cut at etcd's limit does not end the replay wait", () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(5n, 10n);
    tracker.onEvents(12n, false); // stamped past the target, but more history follows
    tracker.request();
    tracker.onAnswer(12n);
    expect(sent).toBe(1); // still waiting out the replay: no confirming request
    expect(emitted).toEqual([]);
  });

  it('judges a watcher that looked current again by the first answer', () => {
    // created at 11 over a server at 10, but writes landed before etcd registered the watcher
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(11n, 10n);
    tracker.request();
    tracker.onAnswer(14n); // reaches the start: the watcher may be replaying up to 14
    expect(sent).toBe(1);
    vi.advanceTimersByTime(1_100);
    tracker.onAnswer(14n);
    tracker.onAnswer(15n);
    expect(emitted).toEqual([[14n, false]]);
  });

  it('a watcher that looked current and whose first answer is below its start is current', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(11n, 10n);
    tracker.request();
    tracker.onAnswer(10n);
    expect(sent).toBe(2); // confirming at once
    tracker.onAnswer(10n);
    expect(emitted).toEqual([[10n, false]]);
  });

  it('an event response before the first answer confirms a watcher that looked current', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(11n, 10n);
    tracker.onEvents(13n, true);
    tracker.request();
    tracker.onAnswer(14n);
    expect(sent).toBe(2);
  });

  it('emits at once on a notification ordered with the events', () => {
    const tracker = new ProgressTracker(false, sink);
    tracker.onCreated(5n, 10n);
    tracker.request();
    tracker.onOrdered(10n);
    expect(emitted).toEqual([[10n, true]]);
  });

  it('re-sends an unanswered request and after a reconnect', () => {
    const tracker = new ProgressTracker(true, sink);
    tracker.onCreated(11n, 10n);
    tracker.request();
    vi.advanceTimersByTime(600);
    expect(sent).toBe(2);
    tracker.onCreated(11n, 10n);
    expect(sent).toBe(3);
    tracker.onAnswer(10n);
    expect(emitted).toEqual([[10n, true]]);
    tracker.stop();
  });
});

describe('update transactions', () => {
  /** Records each txn request and answers it as a succeeded put at revision 7. */
  function recorder(): { sent: ITxnRequest[]; writes: EtcdWrites } {
    const sent: ITxnRequest[] = [];
    const sender: TxnSender = {
      txn: (request) => {
        sent.push(request);
        const meta = {
          key: Buffer.from('k'),
          create_revision: '3',
          mod_revision: '7',
          version: '2',
          lease: '9',
        };
        return Promise.resolve({
          header: { revision: '7' },
          succeeded: true,
          responses: [{ response_put: {} }, { response_range: { kvs: [meta] } }],
        } as unknown as ITxnResponse);
      },
    };
    return {
      sent,
      writes: new EtcdWrites(
        sender,
        () => 7n,
        () => ({}),
      ),
    };
  }

  it('reads the written key back when the lease or the create revision is not named', async () => {
    const { sent, writes } = recorder();
    const u = await writes.update('k', Buffer.from('v'), { ifModRevision: 5n });
    expect(sent[0]?.success?.map((op) => Object.keys(op)[0])).toEqual(['request_put', 'request_range']);
    expect(sent[0]?.success?.[0]?.request_put?.ignore_lease).toBe(true);
    expect([u.kv.createRevision, u.kv.lease]).toEqual([3n, 9n]);
  });

  it('is one put, keeping nothing and reading nothing back, when both are named', async () => {
    const { sent, writes } = recorder();
    const u = await writes.update('k', Buffer.from('v'), {
      ifModRevision: 5n,
      lease: 0n,
      createRevision: 3n,
    });
    expect(sent[0]?.success?.map((op) => Object.keys(op)[0])).toEqual(['request_put']);
    expect(sent[0]?.success?.[0]?.request_put?.ignore_lease).toBeUndefined();
    expect(u.kv).toMatchObject({ createRevision: 3n, modRevision: 7n, lease: 0n });
  });
});
