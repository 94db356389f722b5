/**
 * Deleting pods as kube-apiserver v1.33 does (its store's graceful deletion; every answer below
 * was read from kube-apiserver first):
 * - a pod with no grace period left (unscheduled, or deleted with `gracePeriodSeconds=0`) is first
 *   written with `deletionTimestamp`, `deletionGracePeriodSeconds: 0` and its generation bumped,
 *   then deleted: a watch sees MODIFIED, then DELETED, and the answer is the pod as deleted, at
 *   the revision of the DELETED event;
 * - a negative grace period is 1 s;
 * - a dry run answers the marked pod at its current resourceVersion and writes nothing;
 * - a pod left marked with no grace period and no finalizer (a deletion whose second step never
 *   happened) is deleted by the next DELETE, with no second write;
 * - any other kind's delete answers the removed object at the revision of its deletion too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { openWatchStream, type WatchReader } from './watch.support.js';

const PODS = '/api/v1/namespaces/default/pods';

let s: ResourceApp;
let base: string;
const watches: WatchReader[] = [];
beforeEach(async () => {
  s = await startResourceApp();
  base = await s.listen();
});
afterEach(async () => {
  for (const w of watches.splice(0)) await w.close();
  await s.close();
});

async function createPod(name: string, spec: Record<string, unknown> = {}): Promise<KObj> {
  const body = { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
  const r = await s.request(json('POST', PODS, body));
  expect(r.statusCode).toBe(201);
  return r.json();
}

async function del(path: string): Promise<{ code: number; body: KObj }> {
  const r = await s.request(json('DELETE', path));
  return { code: r.statusCode, body: r.json() };
}

/** Watches `collection` from `rv` (the events after it). */
async function watchFrom(collection: string, rv: string): Promise<WatchReader> {
  const w = await openWatchStream(base, `${collection}?watch=1&resourceVersion=${rv}`);
  watches.push(w);
  return w;
}

/** The next `n` events of `w`: type, name, resourceVersion and deletionGracePeriodSeconds. */
async function events(w: WatchReader, n: number): Promise<string[]> {
  return (await w.take(n)).map((e) => {
    const m = (e['object'] as KObj)['metadata'];
    return `${String(e['type'])} ${m.name ?? ''} ${m.resourceVersion ?? ''} ${String(m.deletionGracePeriodSeconds)}`;
  });
}

describe("pods: kube's two-step deletion", () => {
  it('an unscheduled pod is written marked, then deleted; the answer is the pod as deleted', async () => {
    const created = await createPod('p');
    const rv = Number(created['metadata'].resourceVersion);
    const w = await watchFrom(PODS, String(rv));
    const r = await del(`${PODS}/p`);
    expect(r.code).toBe(200);
    expect(r.body['kind']).toBe('Pod');
    expect(r.body['metadata'].deletionTimestamp).toMatch(/Z$/);
    expect(r.body['metadata'].deletionGracePeriodSeconds).toBe(0);
    expect(r.body['metadata'].generation).toBe(2);
    expect(r.body['metadata'].resourceVersion).toBe(String(rv + 2));
    expect(await events(w, 2)).toEqual([`MODIFIED p ${rv + 1} 0`, `DELETED p ${rv + 2} 0`]);
    expect((await s.request(json('GET', `${PODS}/p`))).statusCode).toBe(404);
  });

  it('a scheduled pod waits out its grace period; a zero one writes, then deletes', async () => {
    const q = await createPod('q', { nodeName: 'n1' });
    await createPod('r', { nodeName: 'n1' });
    const rv = Number(q['metadata'].resourceVersion);
    const w = await watchFrom(PODS, String(rv + 1));
    const graceful = await del(`${PODS}/q`);
    expect(graceful.body['metadata'].deletionGracePeriodSeconds).toBe(30);
    expect(graceful.body['metadata'].resourceVersion).toBe(String(rv + 2));
    const forced = await del(`${PODS}/q?gracePeriodSeconds=0`);
    expect(forced.code).toBe(200);
    expect(forced.body['metadata'].deletionGracePeriodSeconds).toBe(0);
    expect(forced.body['metadata'].resourceVersion).toBe(String(rv + 4));
    const negative = await del(`${PODS}/r?gracePeriodSeconds=-3`);
    expect(negative.body['metadata'].deletionGracePeriodSeconds).toBe(1);
    expect(await events(w, 4)).toEqual([
      `MODIFIED q ${rv + 2} 30`,
      `MODIFIED q ${rv + 3} 0`,
      `DELETED q ${rv + 4} 0`,
      `MODIFIED r ${rv + 5} 1`,
    ]);
  });

  it('a dry run answers the marked pod at its current version and writes nothing', async () => {
    const created = await createPod('p');
    const r = await del(`${PODS}/p?dryRun=All`);
    expect(r.code).toBe(200);
    expect(r.body['metadata'].deletionGracePeriodSeconds).toBe(0);
    expect(r.body['metadata'].generation).toBe(2);
    expect(r.body['metadata'].resourceVersion).toBe(created['metadata'].resourceVersion);
    const stored = (await s.request(json('GET', `${PODS}/p`))).json();
    expect(stored['metadata']).toMatchObject({
      resourceVersion: created['metadata'].resourceVersion,
      generation: 1,
    });
    expect(stored['metadata'].deletionTimestamp).toBeUndefined();
  });

  it('a pod left marked with no grace period and no finalizer is deleted at once', async () => {
    const created = await createPod('p', { nodeName: 'n1' });
    // The state a deletion leaves when its second step never happened, written past the API.
    const key = '/pods/default/p';
    const { kv } = await s.store.get(key);
    if (kv === undefined) throw new Error('no stored pod');
    const pod = JSON.parse(Buffer.from(kv.value).toString('utf8')) as KObj;
    pod['metadata'].deletionTimestamp = '2026-01-01T00:00:00Z';
    pod['metadata'].deletionGracePeriodSeconds = 0;
    const marked = await s.store.update(key, Buffer.from(JSON.stringify(pod)), {
      ifModRevision: kv.modRevision,
    });
    const w = await watchFrom(PODS, String(marked.revision));
    const r = await del(`${PODS}/p`);
    expect(r.code).toBe(200);
    expect(r.body['metadata'].uid).toBe(created['metadata'].uid);
    expect(r.body['metadata'].resourceVersion).toBe(String(marked.revision + 1n));
    expect(await events(w, 1)).toEqual([`DELETED p ${marked.revision + 1n} 0`]);
    expect((await s.request(json('GET', `${PODS}/p`))).statusCode).toBe(404);
  });
});

describe('other kinds', () => {
  it('a deleted object is answered at the revision of its deletion', async () => {
    const url = '/api/v1/namespaces/default/serviceaccounts';
    const created = await s.request(json('POST', url, { metadata: { name: 'sa' } }));
    const rv = Number(created.json()['metadata'].resourceVersion);
    const w = await watchFrom(url, String(rv));
    const dry = await del(`${url}/sa?dryRun=All`);
    expect(dry.body['metadata'].resourceVersion).toBe(String(rv));
    const r = await del(`${url}/sa`);
    expect(r.code).toBe(200);
    expect(r.body['kind']).toBe('ServiceAccount');
    expect(r.body['metadata'].resourceVersion).toBe(String(rv + 1));
    expect(await events(w, 1)).toEqual([`DELETED sa ${rv + 1} undefined`]);
  });
});
