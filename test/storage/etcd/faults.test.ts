/**
 * Connection faults between the store and etcd, injected with a TCP proxy the test can cut or
 * block, and etcd restarts: watches resume from the last delivered revision without losing or
 * repeating events (the etcd3 client's own watch reconnects have lost events), and calls that
 * cannot reach etcd fail with UnavailableError.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../storage/errors.js';
import type { Store, Watch, WatchEvent } from '../../../storage/interface.js';
import { openEtcdStore } from '../../../storage/etcd/index.js';
import { startEtcd, type LocalEtcd } from '../../../tools/etcd-local.js';
import { bytes, CuttableProxy, runEtcdTests, waitFor } from './support.js';

/** Drains a watch in the background. */
function collect(watch: Watch): { events: WatchEvent[]; error: () => unknown; done: Promise<void> } {
  const events: WatchEvent[] = [];
  let error: unknown;
  const done = (async () => {
    try {
      for await (const event of watch) events.push(event);
    } catch (err) {
      error = err;
    }
  })();
  return { events, error: () => error, done };
}

/** The put/delete events' revisions. */
const changeRevisions = (events: readonly WatchEvent[]): bigint[] =>
  events.filter((e) => e.type !== 'progress').map((e) => e.revision);

describe.runIf(runEtcdTests)('etcd store under connection faults', () => {
  let etcd: LocalEtcd;
  let proxy: CuttableProxy;
  /** Writes go straight to etcd; the store under test talks through the proxy. */
  let direct: Store;
  let viaProxy: Store;
  let n = 0;
  const ns = (): string => `/faults/${++n}/`;

  beforeAll(async () => {
    etcd = await startEtcd();
    direct = await openEtcdStore({ endpoints: etcd.endpoints });
  });
  afterAll(async () => {
    await direct?.close();
    await etcd?.stop();
  });
  beforeAll(async () => {
    proxy = await CuttableProxy.start(etcd.endpoints[0] ?? '');
    viaProxy = await openEtcdStore({ endpoints: [proxy.endpoint], requestTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await viaProxy?.close();
    await proxy?.close();
  });
  afterEach(() => proxy.block(false));

  it('a watch resumes across a cut connection with every event once, in order', async () => {
    const p = ns();
    const watch = collect(viaProxy.watch({ prefix: p }));
    const written: bigint[] = [];
    for (let i = 0; i < 5; i++) written.push((await direct.create(`${p}${i}`, bytes('x'))).revision);
    await waitFor(() => watch.events.length === 5, 'the first events');
    const connectionsBefore = proxy.connections;
    proxy.block(true);
    proxy.cut();
    for (let i = 5; i < 15; i++) written.push((await direct.create(`${p}${i}`, bytes('x'))).revision);
    proxy.block(false);
    await waitFor(() => watch.events.length >= 15, 'the events written while cut off');
    expect(proxy.connections).toBeGreaterThan(connectionsBefore);
    expect(changeRevisions(watch.events)).toEqual(written);
    expect(watch.error()).toBeUndefined();
  });

  it('a watch survives repeated cuts while writes stream in (events neither lost nor repeated)', async () => {
    const p = ns();
    const watch = collect(viaProxy.watch({ prefix: p }));
    const written: bigint[] = [];
    // Cut only a stream that is delivering: after each cut, wait for an event from the new one.
    let cuts = 0;
    let seen = 0;
    const writer = (async () => {
      for (let i = 0; i < 150; i++) {
        // However fast the writes go, at least one cut lands in each batch of 30 pairs.
        if (i > 0 && i % 30 === 0) await waitFor(() => cuts >= i / 30, `cut ${i / 30}`);
        const c = await direct.create(`${p}${i}`, bytes(String(i)));
        const u = await direct.update(`${p}${i}`, bytes(`${i}+`), { ifModRevision: c.revision });
        written.push(c.revision, u.revision);
      }
    })();
    while (written.length < 300) {
      await waitFor(() => watch.events.length > seen || written.length >= 300, 'an event on the new stream');
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      if (written.length >= 300) break;
      seen = watch.events.length;
      proxy.cut();
      cuts += 1;
    }
    await writer;
    await waitFor(() => watch.events.length >= 300, 'all 300 events', 30_000);
    expect(cuts).toBeGreaterThan(3);
    expect(changeRevisions(watch.events)).toEqual(written);
    // Each update's prevKv is the create before it, even across reconnects.
    for (let i = 1; i < watch.events.length; i += 2) {
      const event = watch.events[i];
      expect(event?.type === 'put' && event.prevKv?.modRevision).toBe(written[i - 1]);
    }
  });

  it('reads and writes that cannot reach etcd fail with UnavailableError; health too; then recover', async () => {
    const p = ns();
    await viaProxy.create(`${p}a`, bytes('x'));
    proxy.block(true);
    proxy.cut();
    await expect(viaProxy.get(`${p}a`)).rejects.toBeInstanceOf(UnavailableError);
    await expect(viaProxy.create(`${p}b`, bytes('x'))).rejects.toBeInstanceOf(UnavailableError);
    await expect(viaProxy.checkHealth()).rejects.toBeInstanceOf(UnavailableError);
    proxy.block(false);
    await waitFor(
      async () =>
        viaProxy.checkHealth().then(
          () => true,
          () => false,
        ),
      'health after unblocking',
    );
    expect((await viaProxy.get(`${p}a`)).kv?.key).toBe(`${p}a`);
  });

  it('with several endpoints, calls avoid a member that stopped answering', async () => {
    const dead = await CuttableProxy.start(etcd.endpoints[0] ?? '');
    dead.block(true);
    const store = await openEtcdStore({
      endpoints: [dead.endpoint, etcd.endpoints[0] ?? ''],
      requestTimeoutMs: 2_000,
    });
    try {
      const p = ns();
      // Reads retry on another member; one of them meets the dead member and marks it down.
      for (let i = 0; i < 20; i++) expect((await store.get(`${p}x`)).kv).toBeUndefined();
      // Writes are not retried, so they must not be sent to the member marked down.
      for (let i = 0; i < 20; i++) await store.create(`${p}${i}`, bytes('x'));
      expect((await store.range({ prefix: p }, { countOnly: true })).count).toBe(20);
      expect(dead.refused).toBeGreaterThan(0); // the dead member was tried
    } finally {
      await store.close();
      await dead.close();
    }
  });

  it('a watch that cannot reconnect within its retry limit ends with UnavailableError', async () => {
    const store = await openEtcdStore({ endpoints: [proxy.endpoint], watchRetryLimitMs: 500 });
    try {
      const watch = collect(store.watch({ prefix: ns() }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.block(true);
      proxy.cut();
      await watch.done;
      expect(watch.error()).toBeInstanceOf(UnavailableError);
    } finally {
      await store.close();
    }
  });

  it('a slow consumer pauses the stream at the buffer limit and resumes from history', async () => {
    const store = await openEtcdStore({ endpoints: etcd.endpoints, watchBufferLimit: 10 });
    try {
      const p = ns();
      const watch = store.watch({ prefix: p });
      const written: bigint[] = [];
      for (let i = 0; i < 60; i++) written.push((await direct.create(`${p}${i}`, bytes('x'))).revision);
      const seen: bigint[] = [];
      for await (const event of watch) {
        if (event.type !== 'progress') seen.push(event.revision);
        if (seen.length === 60) break;
      }
      expect(seen).toEqual(written);
    } finally {
      await store.close();
    }
  });
});

describe.runIf(runEtcdTests)('etcd store across an etcd restart', () => {
  let etcd: LocalEtcd;
  beforeAll(async () => {
    etcd = await startEtcd();
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  it('keeps data, reconnects, and resumes watches after etcd is killed and restarted', async () => {
    const store = await openEtcdStore({ endpoints: etcd.endpoints, requestTimeoutMs: 2_000 });
    try {
      const watch = collect(store.watch({ prefix: '/r/' }));
      const before = await store.create('/r/a', bytes('1'));
      await waitFor(() => watch.events.length === 1, 'the first event');
      await etcd.kill();
      await expect(store.get('/r/a')).rejects.toBeInstanceOf(UnavailableError);
      await etcd.restart();
      await waitFor(
        async () =>
          store.checkHealth().then(
            () => true,
            () => false,
          ),
        'health after restart',
      );
      expect((await store.get('/r/a')).kv?.modRevision).toBe(before.revision);
      const after = await store.update('/r/a', bytes('2'), { ifModRevision: before.revision });
      await waitFor(() => watch.events.length === 2, 'the event after the restart');
      expect(changeRevisions(watch.events)).toEqual([before.revision, after.revision]);
      expect(watch.error()).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
