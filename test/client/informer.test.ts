/**
 * Reflector and shared informers against a real in-process Capstan: the initial sync, creates,
 * updates and deletes, a forced connection drop (resume from the last resourceVersion, no
 * relist), deletes seen only by a relist after a 410, indexes, and handler order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from '../../src/api/types/core-v1.js';
import {
  CONFIG_MAPS,
  Client,
  NAMESPACES,
  SharedInformerFactory,
  loadKubeconfig,
  stripManagedFields,
  type SharedInformer,
} from '../../src/client/index.js';
import { Reflector } from '../../src/client/reflector.js';
import type { ResourceClient } from '../../src/client/resource-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  // No watch cache: a compacted revision then answers watches with 410, which the relist test needs.
  // Bare: the in-process controllers' own objects (kube-root-ca.crt) would show in the informers.
  server = await startTestServer({ args: ['--watch-cache=false', '--controllers='] });
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
  for (const name of ['inf-a', 'inf-b']) await client.resource(NAMESPACES).create({ metadata: { name } });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

function cm(ns: string, name: string, data: Record<string, string> = {}): ConfigMap {
  return { metadata: { name, namespace: ns, labels: { app: 'x' } }, data };
}

/** A log of handler calls, and a way to wait until a condition over it holds. */
class Recorder {
  readonly events: string[] = [];
  #waiters: (() => void)[] = [];
  constructor(informer: SharedInformer<ConfigMap>) {
    informer.addHandler({
      add: (o) => this.#push(`add ${o.metadata?.namespace}/${o.metadata?.name}`),
      update: (old, cur) =>
        this.#push(
          `update ${cur.metadata?.namespace}/${cur.metadata?.name} ${JSON.stringify(old.data)}->${JSON.stringify(cur.data)}`,
        ),
      delete: (o) => this.#push(`delete ${o.metadata?.namespace}/${o.metadata?.name}`),
    });
  }
  #push(e: string): void {
    this.events.push(e);
    for (const w of this.#waiters.splice(0)) w();
  }
  async until(pred: (events: string[]) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!pred(this.events)) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; saw ${JSON.stringify(this.events)}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }
}

describe('shared informer', () => {
  it('syncs, follows creates, updates and deletes, and survives a dropped connection', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    await cms.create(cm('inf-a', 'pre', { v: '0' }));
    const factory = new SharedInformerFactory(client);
    const informer = factory.informer<ConfigMap>(CONFIG_MAPS, { labelSelector: 'app=x' });
    expect(factory.informer(CONFIG_MAPS, { labelSelector: 'app=x' })).toBe(informer);
    const rec = new Recorder(informer);
    factory.start();
    try {
      await factory.waitForSync();
      expect(informer.hasSynced()).toBe(true);
      expect(informer.store.get('inf-a/pre')?.data).toEqual({ v: '0' });
      expect(informer.store.get('inf-a/pre')?.kind).toBe('ConfigMap');
      expect(rec.events).toEqual(['add inf-a/pre']);
      const syncRv = BigInt(informer.lastSyncResourceVersion());

      const c1 = await cms.create(cm('inf-a', 'one', { v: '1' }));
      await cms.update({ ...c1, data: { v: '2' } });
      await cms.create(cm('inf-b', 'two'));
      await cms.delete('pre', { namespace: 'inf-a' });
      await rec.until((e) => e.includes('delete inf-a/pre'), 'the delete');
      expect(rec.events).toEqual([
        'add inf-a/pre',
        'add inf-a/one',
        'update inf-a/one {"v":"1"}->{"v":"2"}',
        'add inf-b/two',
        'delete inf-a/pre',
      ]);
      expect(informer.store.get('inf-a/pre')).toBeUndefined();
      expect(BigInt(informer.lastSyncResourceVersion())).toBeGreaterThan(syncRv);
      expect(informer.store.byIndex('namespace', 'inf-b').map((o) => o.metadata?.name)).toEqual(['two']);
      informer.store.addIndex('byValue', (o) => Object.values(o.data ?? {}));
      expect(informer.store.byIndex('byValue', '2').map((o) => o.metadata?.name)).toEqual(['one']);

      // Drop the connection, write while the watch is down, and see exactly those changes next.
      client.transport.reset();
      const c3 = await cms.create(cm('inf-b', 'three', { v: '3' }));
      await cms.delete('two', { namespace: 'inf-b' });
      await rec.until((e) => e.includes('delete inf-b/two'), 'changes after the drop');
      expect(rec.events.slice(5)).toEqual(['add inf-b/three', 'delete inf-b/two']);
      expect(informer.store.get('inf-b/three')?.metadata?.resourceVersion).toBe(c3.metadata?.resourceVersion);
      // Objects outside the selector are not seen.
      await cms.create({ metadata: { name: 'other', namespace: 'inf-a' } });
      await cms.update({ ...c3, data: { v: '4' } });
      await rec.until((e) => e.some((x) => x.startsWith('update inf-b/three')), 'the last update');
      expect(rec.events.some((e) => e.includes('other'))).toBe(false);
      // A handler added late sees what is there as adds.
      const late: string[] = [];
      informer.addHandler({ add: (o) => late.push(o.metadata?.name ?? '') });
      expect(late.sort()).toEqual(['one', 'three']);
    } finally {
      await factory.stop();
    }
  });

  it('relists after a 410 and hands deletes it missed with the last known object', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    const keep = await cms.create(cm('inf-b', 'keep', { v: 'k' }));
    const doomed = await cms.create(cm('inf-b', 'doomed', { v: 'd' }));
    const factory = new SharedInformerFactory(client, { namespace: 'inf-b', log: () => undefined });
    const informer = factory.informer<ConfigMap>(CONFIG_MAPS);
    const rec = new Recorder(informer);
    const deleted: ConfigMap[] = [];
    informer.addHandler({ delete: (o) => deleted.push(o) });
    factory.start();
    try {
      await factory.waitForSync();
      expect(informer.store.get('inf-b/doomed')).toBeDefined();
      const before = rec.events.length;
      // Stop the watch from resuming: drop the connection and compact past our RV while we
      // write, so the resumed watch gets 410 and the informer must relist.
      client.transport.reset();
      await cms.delete('doomed', { namespace: 'inf-b' });
      await cms.update({ ...keep, data: { v: 'k2' } });
      await server.server.compactNow();
      await server.server.compactNow();
      await rec.until((e) => e.includes('delete inf-b/doomed'), 'the delete');
      await rec.until((e) => e.some((x) => x.startsWith('update inf-b/keep')), 'the update');
      const after = rec.events.slice(before);
      expect(after).toContain('delete inf-b/doomed');
      expect(after).toContain('update inf-b/keep {"v":"k"}->{"v":"k2"}');
      expect(after.filter((e) => e.startsWith('add'))).toEqual([]);
      // The last known object, not the watch's DELETED event (which carries the delete's RV):
      // proof that the delete was found by the relist.
      expect(deleted.map((o) => o.metadata?.resourceVersion)).toEqual([doomed.metadata?.resourceVersion]);
    } finally {
      await factory.stop();
    }
  });

  it('syncs by WatchList (sendInitialEvents) and then follows changes', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    await cms.create(cm('inf-a', 'wl', { v: '1' }));
    const factory = new SharedInformerFactory(client, { namespace: 'inf-a', watchList: true });
    const informer = factory.informer<ConfigMap>(CONFIG_MAPS);
    const rec = new Recorder(informer);
    factory.start();
    try {
      await factory.waitForSync();
      expect(informer.store.get('inf-a/wl')?.data).toEqual({ v: '1' });
      expect(rec.events).toContain('add inf-a/wl');
      await cms.delete('wl', { namespace: 'inf-a' });
      await rec.until((e) => e.includes('delete inf-a/wl'), 'the delete');
    } finally {
      await factory.stop();
    }
  });

  it('stores and hands objects without managedFields under stripManagedFields; an update from them keeps the stored entries', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    const created = await cms.create(cm('inf-b', 'mf', { v: '1' }));
    expect(created.metadata?.managedFields?.length).toBeGreaterThan(0);
    const factory = new SharedInformerFactory(client, { namespace: 'inf-b', transform: stripManagedFields });
    const informer = factory.informer<ConfigMap>(CONFIG_MAPS);
    const handed: ConfigMap[] = [];
    const mine = (o: ConfigMap): void => {
      if (o.metadata?.name === 'mf') handed.push(o);
    };
    informer.addHandler({ add: mine, update: (_old, cur) => mine(cur) });
    factory.start();
    try {
      await factory.waitForSync();
      const cached = informer.store.get('inf-b/mf');
      if (cached === undefined) throw new Error('inf-b/mf is not in the store');
      expect(cached.metadata).toMatchObject({ name: 'mf', uid: created.metadata?.uid });
      expect(cached.metadata).not.toHaveProperty('managedFields');
      // An update sent from the cached copy: the field is absent, so the server keeps its entries.
      await cms.update({ ...cached, data: { v: '2' } });
      const deadline = Date.now() + 10_000;
      while (informer.store.get('inf-b/mf')?.data?.['v'] !== '2' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(informer.store.get('inf-b/mf')?.data).toEqual({ v: '2' });
      expect(handed.map((o) => o.data?.['v'])).toEqual(['1', '2']);
      for (const o of handed) expect(o.metadata).not.toHaveProperty('managedFields');
      const stored = await cms.get('mf', { namespace: 'inf-b' });
      expect(stored.metadata?.managedFields?.length).toBeGreaterThan(0);
    } finally {
      await factory.stop();
    }
  });

  it('resyncs: update(obj, obj) for every object every resyncMs', async () => {
    const factory = new SharedInformerFactory(client, { namespace: 'inf-a', resyncMs: 100 });
    const informer = factory.informer<ConfigMap>(CONFIG_MAPS);
    const resynced = new Set<string>();
    informer.addHandler({
      update: (old, cur) => {
        if (old === cur) resynced.add(cur.metadata?.name ?? '');
      },
    });
    factory.start();
    try {
      await factory.waitForSync();
      const names = informer.store.list().map((o) => o.metadata?.name ?? '');
      expect(names.length).toBeGreaterThan(0);
      const deadline = Date.now() + 10_000;
      while (resynced.size < names.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect([...resynced].sort()).toEqual(names.sort());
    } finally {
      await factory.stop();
    }
  });

  it('stops at once when stopped during its first list, before its watch opened', async () => {
    // The list is in flight when stop() aborts; the watch that would follow must not open on
    // the aborted signal (it would run to its 5-10 minute timeout, holding stop()).
    for (const watchList of [false, true]) {
      const factory = new SharedInformerFactory(client, { namespace: 'inf-a', watchList });
      factory.informer<ConfigMap>(CONFIG_MAPS);
      factory.start();
      const stopped = factory.stop().then(() => 'stopped');
      const late = new Promise((r) => setTimeout(() => r('still running after 10 s'), 10_000).unref());
      expect(await Promise.race([stopped, late])).toBe('stopped');
    }
  });
});

describe('reflector', () => {
  it('applies its transform to each list page as it arrives, before asking for the next', async () => {
    const pages = [
      { items: [cm('p', 'a'), cm('p', 'b')], metadata: { resourceVersion: '7', continue: 'next' } },
      { items: [cm('p', 'c')], metadata: { resourceVersion: '7' } },
    ];
    let served = 0;
    const fake = {
      ref: CONFIG_MAPS,
      list: () => Promise.resolve(pages[served++]),
      watch: () => {
        throw new Error('no watch expected');
      },
    } as unknown as ResourceClient<ConfigMap>;
    const seen: string[] = [];
    const stop = new AbortController();
    let replaced: ConfigMap[] = [];
    const reflector = new Reflector<ConfigMap>(
      fake,
      {
        replace: (items) => {
          replaced = items;
          stop.abort();
        },
        apply: () => undefined,
      },
      {
        pageSize: 2,
        transform: (o) => {
          seen.push(`${o.kind} ${o.metadata?.name} after page ${served}`);
          return { ...o, data: { trimmed: 'yes' } };
        },
      },
    );
    await reflector.run(stop.signal);
    // Each page's items were transformed before the next page was asked for (a list's pages are
    // not all held untransformed), and they carry the kind a List's items lack.
    expect(seen).toEqual([
      'ConfigMap a after page 1',
      'ConfigMap b after page 1',
      'ConfigMap c after page 2',
    ]);
    expect(replaced.map((o) => o.data)).toEqual([{ trimmed: 'yes' }, { trimmed: 'yes' }, { trimmed: 'yes' }]);
    expect(reflector.lastSyncResourceVersion).toBe('7');
  });
});
