/** Work queue semantics (dedup, ordering, no concurrent processing of a key), rate limiters, workers. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  TokenBucket,
  WorkQueue,
  defaultControllerRateLimiter,
  runWorkers,
  ApiStatusError,
} from '../../src/client/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('dedups waiting keys and keeps FIFO order', async () => {
    const q = new WorkQueue<string>();
    for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
    expect(q.len()).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
    expect(q.len()).toBe(0);
  });

  it('never hands a key to two workers: an add while processing waits for done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(first!);
    await Promise.resolve();
    expect(second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('hands queued keys out after shutDown, then undefined; waiting gets resolve undefined', async () => {
    const q = new WorkQueue<string>();
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
    q.add('y');
    q.shutDown();
    q.add('z');
    expect(await q.get()).toBe('y');
    expect(await q.get()).toBeUndefined();
    const q2 = new WorkQueue<string>();
    const pending = q2.get();
    q2.shutDown();
    expect(await pending).toBeUndefined();
  });

  it('addAfter delays, and the earliest pending delay of a key wins', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue<string>();
    q.addAfter('a', 1000);
    q.addAfter('a', 100);
    q.addAfter('a', 5000);
    q.addAfter('b', 0);
    expect(q.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(q.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.len()).toBe(2);
    expect([await q.get(), await q.get()]).toEqual(['b', 'a']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(q.len()).toBe(0); // the later delays were merged into the first
  });

  it('addRateLimited backs off per item; forget resets', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue<string>({ rateLimiter: new ItemExponentialRateLimiter(10, 1000) });
    q.addRateLimited('a');
    q.addRateLimited('a'); // 10 ms pending wins over 20 ms
    expect(q.numRequeues('a')).toBe(2);
    await vi.advanceTimersByTimeAsync(10);
    expect(q.len()).toBe(1);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });
});

describe('rate limiters', () => {
  it('per-item exponential: base doubling to the cap, per item', () => {
    const r = new ItemExponentialRateLimiter<string>(5, 1000_000);
    expect([r.when('a'), r.when('a'), r.when('a'), r.when('b')]).toEqual([5, 10, 20, 5]);
    for (let i = 0; i < 100; i++) r.when('a');
    expect(r.when('a')).toBe(1000_000);
    r.forget('a');
    expect(r.when('a')).toBe(5);
  });

  it('token bucket: burst at once, then one token per 1/qps', () => {
    let now = 0;
    const bucket = new TokenBucket(10, 100, () => now);
    const r = new BucketRateLimiter<string>(bucket);
    for (let i = 0; i < 100; i++) expect(r.when(`k${i}`)).toBe(0);
    expect(r.when('x')).toBeCloseTo(100);
    expect(r.when('y')).toBeCloseTo(200);
    now += 1000; // refills the 2 reserved and 8 more
    for (let i = 0; i < 8; i++) expect(r.when(`z${i}`)).toBe(0);
    expect(r.when('w')).toBeCloseTo(100);
    expect(bucket.tryAccept()).toBe(false);
    expect(new TokenBucket(-1, 1).reserve()).toBe(0);
  });

  it('max-of takes the longest delay; the default is kube controllers’', () => {
    const now = 0;
    const r = new MaxOfRateLimiter<string>(
      new ItemExponentialRateLimiter(5, 1000),
      new BucketRateLimiter(new TokenBucket(1, 1, () => now)),
    );
    expect(r.when('a')).toBe(5);
    expect(r.when('a')).toBeCloseTo(1000);
    const d = defaultControllerRateLimiter<string>();
    expect([d.when('a'), d.when('a'), d.when('a')]).toEqual([5, 10, 20]);
    expect(d.numRequeues('a')).toBe(3);
  });
});

describe('runWorkers', () => {
  it('retries a failing key with backoff, forgets on success, never runs one key twice at once', async () => {
    const q = new WorkQueue<string>({ rateLimiter: new ItemExponentialRateLimiter(1, 10), name: 'test' });
    const failures = new Map<string, number>([['b', 2]]);
    const active = new Set<string>();
    const done: string[] = [];
    const logged: string[] = [];
    let overlap = false;
    const workers = runWorkers(
      q,
      3,
      async (key) => {
        if (active.has(key)) overlap = true;
        active.add(key);
        await new Promise((r) => setTimeout(r, 2));
        active.delete(key);
        const left = failures.get(key) ?? 0;
        if (left > 0) {
          failures.set(key, left - 1);
          throw new Error(`fail ${key}`);
        }
        done.push(key);
      },
      (msg) => logged.push(msg),
    );
    for (const k of ['a', 'b', 'c', 'a']) q.add(k);
    q.add('a');
    while (!done.includes('b')) await new Promise((r) => setTimeout(r, 5));
    expect(logged).toEqual(['test: syncing b failed, retrying', 'test: syncing b failed, retrying']);
    expect(q.numRequeues('b')).toBe(0);
    expect(overlap).toBe(false);
    q.shutDown();
    await workers;
    expect(done.filter((k) => k === 'b')).toEqual(['b']);
  });

  it('retries a write conflict without logging it (optimistic concurrency, not a failure)', async () => {
    const q = new WorkQueue<string>({ rateLimiter: new ItemExponentialRateLimiter(1, 10), name: 'test' });
    const conflict = new ApiStatusError(409, { reason: 'Conflict', message: 'the object has been modified' });
    let attempts = 0;
    const logged: string[] = [];
    const workers = runWorkers(
      q,
      1,
      () => {
        attempts++;
        if (attempts === 1) return Promise.reject(conflict);
        if (attempts === 2) return Promise.reject(new Error('boom'));
        return Promise.resolve();
      },
      (msg) => logged.push(msg),
    );
    q.add('k');
    while (attempts < 3) await new Promise((r) => setTimeout(r, 5));
    expect(logged).toEqual(['test: syncing k failed, retrying']);
    q.shutDown();
    await workers;
  });
});
