/**
 * The per-level seats and queues (src/flowcontrol/queue-set.ts), driven directly: dispatch order
 * is what fairness means here, so it is measured in queue positions, not time.
 * - a flow's hand is stable, in range and without repeats;
 * - a flooding flow does not delay another flow's request by more than one round of the busy
 *   queues (FIFO would make it wait behind the whole flood);
 * - full queues and queue timeouts refuse, a cancelled wait leaves its queue, a bigger limit
 *   dispatches waiters at once, and seats are never over-committed (a fast-check property).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dealHand, QueueSet, type Admission } from '../../src/flowcontrol/queue-set.js';

const LONG = 60_000;

function run(a: Admission): () => void {
  if (a.kind !== 'run') throw new Error(`expected run, got ${a.kind}`);
  return a.release;
}

describe('dealHand', () => {
  it('deals the same distinct in-range hand for one flow', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 1, max: 128 }),
        fc.integer({ min: 1, max: 16 }),
        (flow, q, h) => {
          const hand = dealHand(flow, q, h);
          expect(hand).toEqual(dealHand(flow, q, h));
          expect(hand.length).toBe(Math.min(q, h));
          expect(new Set(hand).size).toBe(hand.length);
          expect(hand.every((i) => i >= 0 && i < q)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('QueueSet', () => {
  it('serves a second flow within one round of the queues a flood occupies', async () => {
    const handSize = 4;
    const qs = new QueueSet(1, { queues: 64, handSize, queueLengthLimit: 100 });
    const order: string[] = [];
    const releases: Array<() => void> = [run(qs.admit('flood', LONG))];
    const track = (flow: string, a: Admission): void => {
      if (a.kind !== 'queued') throw new Error(`expected queued, got ${a.kind}`);
      void a.dispatched.then((o) => {
        if (typeof o === 'string') throw new Error(o);
        order.push(flow);
        releases.push(o.release);
      });
    };
    for (let i = 0; i < 80; i++) track('flood', qs.admit('flood', LONG));
    // The victim's hand must not be inside the flood's for this to mean anything.
    expect(dealHand('victim', 64, handSize).some((q) => !dealHand('flood', 64, handSize).includes(q))).toBe(
      true,
    );
    track('victim', qs.admit('victim', LONG));
    expect(qs.waiting).toBe(81);
    for (let i = 0; i < 81; i++) {
      (releases.shift() as () => void)();
      await Promise.resolve();
      await Promise.resolve();
    }
    // The flood spread over at most its hand's queues: the victim is served within that round.
    expect(order.indexOf('victim')).toBeLessThanOrEqual(handSize);
    expect(order.length).toBe(81);
    expect(qs.executing).toBe(1);
  });

  it('refuses when the chosen queue is full, and after the wait limit', async () => {
    const qs = new QueueSet(1, { queues: 2, handSize: 1, queueLengthLimit: 2 });
    const release = run(qs.admit('a', LONG));
    const waits = [qs.admit('a', 30), qs.admit('a', 30)];
    expect(qs.admit('a', 30)).toEqual({ kind: 'rejected', reason: 'queue-full' });
    const outcomes = await Promise.all(
      waits.map((w) => (w.kind === 'queued' ? w.dispatched : Promise.reject(new Error(w.kind)))),
    );
    expect(outcomes).toEqual(['time-out', 'time-out']);
    expect(qs.waiting).toBe(0);
    release();
    expect(qs.executing).toBe(0);
  });

  it('rejects at once on a Reject level and lets a cancelled waiter go', async () => {
    const reject = new QueueSet(1, undefined);
    run(reject.admit('a', LONG));
    expect(reject.admit('b', LONG)).toEqual({ kind: 'rejected', reason: 'concurrency-limit' });

    const qs = new QueueSet(1, { queues: 8, handSize: 2, queueLengthLimit: 5 });
    const release = run(qs.admit('a', LONG));
    const w = qs.admit('b', LONG);
    if (w.kind !== 'queued') throw new Error(w.kind);
    w.cancel();
    expect(await w.dispatched).toBe('cancelled');
    expect(qs.waiting).toBe(0);
    release();
    expect(qs.executing).toBe(0);
  });

  it('dispatches waiters when the limit grows, and refuses them when the level stops queuing', async () => {
    const qs = new QueueSet(0, { queues: 4, handSize: 2, queueLengthLimit: 5 });
    const a = qs.admit('a', LONG);
    const b = qs.admit('b', LONG);
    if (a.kind !== 'queued' || b.kind !== 'queued') throw new Error('expected queued');
    qs.reconfigure(1, { queues: 8, handSize: 2, queueLengthLimit: 5 });
    const first = await a.dispatched;
    expect(typeof first).toBe('object');
    qs.reconfigure(1, undefined);
    expect(await b.dispatched).toBe('cancelled');
  });

  it('never seats more than the limit, and serves every waiter in the end', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.oneof(fc.constantFrom('a', 'b', 'c', 'd'), fc.constant('release')), { maxLength: 60 }),
        async (limit, ops) => {
          const qs = new QueueSet(limit, { queues: 8, handSize: 2, queueLengthLimit: 100 });
          const running: Array<() => void> = [];
          let pending = 0;
          for (const op of ops) {
            if (op === 'release') running.shift()?.();
            else {
              const a = qs.admit(op, LONG);
              if (a.kind === 'run') running.push(a.release);
              else if (a.kind === 'queued') {
                pending++;
                void a.dispatched.then((o) => {
                  pending--;
                  if (typeof o !== 'string') running.push(o.release);
                });
              }
            }
            await Promise.resolve();
            expect(qs.executing).toBeLessThanOrEqual(limit);
          }
          while (running.length > 0) {
            running.shift()?.();
            await Promise.resolve();
            await Promise.resolve();
          }
          expect(pending).toBe(0);
          expect(qs.waiting).toBe(0);
          expect(qs.executing).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});
