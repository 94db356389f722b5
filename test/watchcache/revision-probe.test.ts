import { describe, expect, it } from 'vitest';
import { RevisionProbe } from '../../src/watchcache/revision-probe.js';

/** A store whose revision reads are answered by hand, in order. */
function manualStore() {
  const out: { resolve: (r: bigint) => void; reject: (e: Error) => void }[] = [];
  return {
    out,
    store: {
      currentRevision: () =>
        new Promise<bigint>((resolve, reject) => {
          out.push({ resolve, reject });
        }),
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('RevisionProbe', () => {
  it('shares one round trip among callers, never one that started before they asked', async () => {
    const { out, store } = manualStore();
    const probe = new RevisionProbe(store);
    const first = probe.current();
    expect(out).toHaveLength(1);
    // Asked while the first round trip is out: they wait for the next one, together.
    const second = probe.current();
    const third = probe.current();
    expect(second).toBe(third);
    expect(out).toHaveLength(1);
    out[0]?.resolve(5n);
    expect(await first).toBe(5n);
    await settle();
    expect(out).toHaveLength(2);
    const fourth = probe.current(); // the second round trip is out: this one waits for a third
    out[1]?.resolve(7n);
    expect(await second).toBe(7n);
    expect(await third).toBe(7n);
    await settle();
    expect(out).toHaveLength(3);
    out[2]?.resolve(9n);
    expect(await fourth).toBe(9n);
    // Nothing out: the next caller starts its own at once.
    const fifth = probe.current();
    expect(out).toHaveLength(4);
    out[3]?.resolve(11n);
    expect(await fifth).toBe(11n);
  });

  it('hands a failed round trip to its callers only; the waiting ones get a new one', async () => {
    const { out, store } = manualStore();
    const probe = new RevisionProbe(store);
    const first = probe.current();
    const second = probe.current();
    out[0]?.reject(new Error('etcd unavailable'));
    await expect(first).rejects.toThrow('etcd unavailable');
    await settle();
    expect(out).toHaveLength(2);
    out[1]?.resolve(3n);
    expect(await second).toBe(3n);
  });
});
