/**
 * Lists (selectors, paging, resourceVersion) and the basic watch, over raw HTTP: `app.inject`
 * for lists, a real socket for watch streams.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { openWatchStream } from './watch.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';

let s: ResourceApp;
beforeEach(async () => {
  s = await startResourceApp({ bookmarkIntervalMs: 200 });
});
afterEach(async () => {
  await s.close();
});

async function post(url: string, body: unknown): Promise<KObj> {
  const r = await s.request(json('POST', url, body));
  expect(r.statusCode, r.body).toBe(201);
  return r.json();
}

async function names(url: string): Promise<string[]> {
  const r = await s.request(json('GET', url));
  expect(r.statusCode, r.body).toBe(200);
  return (r.json()['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name);
}

function pod(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { name, ...extra }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
}

describe('list', () => {
  it('returns a typed list with the list resourceVersion', async () => {
    await post(CM, { metadata: { name: 'a' } });
    const last = await post(CM, { metadata: { name: 'b' } });
    const r = await s.request(json('GET', CM));
    const body = r.json();
    expect(body).toMatchObject({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: last['metadata'].resourceVersion },
    });
    expect(body['metadata'].continue).toBeUndefined();
    expect(body['items']).toHaveLength(2);
    expect(body['items']?.[1]).toEqual(last);
  });

  it('lists across namespaces at the cluster path, and per namespace', async () => {
    await post('/api/v1/namespaces', { metadata: { name: 'other' } });
    await post(CM, { metadata: { name: 'a' } });
    await post('/api/v1/namespaces/other/configmaps', { metadata: { name: 'b' } });
    // In key order: default/a, kube-system's tracking ConfigMap (the server's own), other/b.
    expect(await names('/api/v1/configmaps')).toEqual([
      'a',
      'kube-apiserver-legacy-service-account-token-tracking',
      'b',
    ]);
    expect(await names('/api/v1/namespaces/other/configmaps')).toEqual(['b']);
  });

  it('label selectors: =, ==, !=, in, notin, exists, !key, and combinations', async () => {
    await post(CM, { metadata: { name: 'a', labels: { env: 'prod', tier: 'web' } } });
    await post(CM, { metadata: { name: 'b', labels: { env: 'dev', tier: 'db' } } });
    await post(CM, { metadata: { name: 'c', labels: { env: 'test' } } });
    await post(CM, { metadata: { name: 'd' } });
    const q = (sel: string) => names(`${CM}?labelSelector=${encodeURIComponent(sel)}`);
    expect(await q('env=prod')).toEqual(['a']);
    expect(await q('env==dev')).toEqual(['b']);
    expect(await q('env!=prod')).toEqual(['b', 'c', 'd']);
    expect(await q('env in (prod, dev)')).toEqual(['a', 'b']);
    expect(await q('env notin (prod,dev)')).toEqual(['c', 'd']);
    expect(await q('tier')).toEqual(['a', 'b']);
    expect(await q('!tier')).toEqual(['c', 'd']);
    expect(await q('env,!tier')).toEqual(['c']);
    expect(await q('env in (prod,dev),tier=db')).toEqual(['b']);
    expect(await q('')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a malformed label selector is 400', async () => {
    for (const sel of ['env in prod', 'bad key=1', 'a=b=c', 'x in (a']) {
      const r = await s.request(json('GET', `${CM}?labelSelector=${encodeURIComponent(sel)}`));
      expect(r.statusCode, sel).toBe(400);
      expect(r.json()['reason']).toBe('BadRequest');
    }
  });

  it('field selectors: metadata fields for every kind, per-kind fields, != and combinations', async () => {
    await post(PODS, {
      ...pod('p1'),
      spec: { containers: [{ name: 'c', image: 'x' }], nodeName: 'n1', restartPolicy: 'Never' },
    });
    await post(PODS, { ...pod('p2'), spec: { containers: [{ name: 'c', image: 'x' }], nodeName: 'n2' } });
    await post(PODS, pod('p3'));
    const q = (sel: string) => names(`${PODS}?fieldSelector=${encodeURIComponent(sel)}`);
    expect(await q('metadata.name=p2')).toEqual(['p2']);
    expect(await q('metadata.namespace=default')).toEqual(['p1', 'p2', 'p3']);
    expect(await q('spec.nodeName=n1')).toEqual(['p1']);
    expect(await q('spec.nodeName=')).toEqual(['p3']);
    expect(await q('spec.nodeName!=n1')).toEqual(['p2', 'p3']);
    expect(await q('spec.restartPolicy=Never,metadata.name=p1')).toEqual(['p1']);
    expect(await q('status.phase=Pending')).toEqual(['p1', 'p2', 'p3']);
    expect(await names(`/api/v1/pods?fieldSelector=${encodeURIComponent('spec.nodeName=n2')}`)).toEqual([
      'p2',
    ]);
  });

  it('per-kind fields: secrets type, namespaces status.phase, events involvedObject', async () => {
    await post('/api/v1/namespaces/default/secrets', {
      metadata: { name: 's1' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    await post('/api/v1/namespaces/default/secrets', { metadata: { name: 's2' } });
    expect(
      await names(`/api/v1/namespaces/default/secrets?fieldSelector=type%3Dkubernetes.io%2Ftls`),
    ).toEqual(['s1']);
    expect(await names(`/api/v1/namespaces?fieldSelector=status.phase%3DActive`)).toContain('default');
    await post('/api/v1/namespaces/default/events', {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'p1', namespace: 'default' },
      reason: 'Started',
      type: 'Normal',
    });
    expect(
      await names(
        `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp1,reason%3DStarted`,
      ),
    ).toEqual(['e1']);
  });

  it('an unsupported field is 400 with kube message', async () => {
    const r = await s.request(json('GET', `${CM}?fieldSelector=spec.nodeName%3Dx`));
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({
      reason: 'BadRequest',
      message: '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
  });

  it("a negative limit is no limit; bad numbers are 400s in kube's words", async () => {
    for (const n of ['a', 'b']) await post(CM, { metadata: { name: n } });
    const all = (await s.request(json('GET', `${CM}?limit=-1`))).json();
    expect(all['items']?.map((i) => i.metadata.name)).toEqual(['a', 'b']);
    expect(all['metadata'].continue).toBeUndefined();
    const bad = await s.request(json('GET', `${CM}?limit=abc`));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()['message']).toBe('strconv.ParseInt: parsing "abc": invalid syntax');
    const badRv = await s.request(json('GET', `${CM}?resourceVersion=abc`));
    expect(badRv.statusCode).toBe(400);
    expect(badRv.json()['message']).toBe(
      'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
    const one = await s.request(json('GET', `${CM}/a?resourceVersion=abc`));
    expect(one.statusCode).toBe(400);
    expect(one.json()['message']).toBe(
      'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
  });

  it('pages with limit and continue at one resourceVersion', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await post(CM, { metadata: { name: n } });
    const first = (await s.request(json('GET', `${CM}?limit=2`))).json();
    expect(first['items']?.map((i) => i.metadata.name)).toEqual(['a', 'b']);
    expect(first['metadata'].remainingItemCount).toBe(3);
    expect(typeof first['metadata'].continue).toBe('string');
    const rv = first['metadata'].resourceVersion as string;

    // Changes after the first chunk do not show in later chunks.
    await post(CM, { metadata: { name: 'f' } });
    await s.request(json('DELETE', `${CM}/e`));

    const second = (
      await s.request(
        json('GET', `${CM}?limit=2&continue=${encodeURIComponent(first['metadata'].continue as string)}`),
      )
    ).json();
    expect(second['items']?.map((i) => i.metadata.name)).toEqual(['c', 'd']);
    expect(second['metadata'].resourceVersion).toBe(rv);
    expect(second['metadata'].remainingItemCount).toBe(1);
    const third = (
      await s.request(
        json('GET', `${CM}?limit=2&continue=${encodeURIComponent(second['metadata'].continue as string)}`),
      )
    ).json();
    expect(third['items']?.map((i) => i.metadata.name)).toEqual(['e']);
    expect(third['metadata'].continue).toBeUndefined();
    expect(third['metadata'].remainingItemCount).toBeUndefined();
    expect(third['metadata'].resourceVersion).toBe(rv);
  });

  it('pages with selectors: limit counts matches, remainingItemCount omitted', async () => {
    for (let i = 0; i < 10; i++)
      await post(CM, { metadata: { name: `x${i}`, labels: { odd: String(i % 2 === 1) } } });
    const all: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const url = `${CM}?labelSelector=odd%3Dtrue&limit=2${cont === undefined ? '' : `&continue=${encodeURIComponent(cont)}`}`;
      const body = (await s.request(json('GET', url))).json();
      expect(body['metadata'].remainingItemCount).toBeUndefined();
      expect(body['items']?.length).toBeLessThanOrEqual(2);
      all.push(...(body['items'] ?? []).map((i) => i.metadata.name ?? ''));
      cont = body['metadata'].continue;
      pages++;
    } while (cont !== undefined && pages < 10);
    expect(all).toEqual(['x1', 'x3', 'x5', 'x7', 'x9']);
  });

  it('a garbled continue token is 400; continue with a resourceVersion is 400', async () => {
    await post(CM, { metadata: { name: 'a' } });
    const garbled = await s.request(json('GET', `${CM}?limit=1&continue=garbage`));
    expect(garbled.statusCode).toBe(400);
    // kube's prefix (its store's, then its token decoder's); the reason after it is Capstan's own.
    expect(garbled.json()['message']).toMatch(/^invalid continue token: continue key is not valid: ./);
    const first = (await s.request(json('GET', `${CM}?limit=1`))).json();
    await post(CM, { metadata: { name: 'b' } });
    const first2 = (await s.request(json('GET', `${CM}?limit=1`))).json();
    const r = await s.request(
      json(
        'GET',
        `${CM}?limit=1&resourceVersion=${first['metadata'].resourceVersion}&continue=${encodeURIComponent(first2['metadata'].continue as string)}`,
      ),
    );
    expect(r.statusCode).toBe(400);
  });

  it('a continue token older than compaction is 410 Expired', async () => {
    for (const n of ['a', 'b', 'c']) await post(CM, { metadata: { name: n } });
    const first = (await s.request(json('GET', `${CM}?limit=1`))).json();
    await post(CM, { metadata: { name: 'd' } });
    await s.store.compact(await s.store.currentRevision());
    const r = await s.request(
      json('GET', `${CM}?limit=1&continue=${encodeURIComponent(first['metadata'].continue as string)}`),
    );
    expect(r.statusCode).toBe(410);
    expect(r.json()).toMatchObject({ reason: 'Expired', code: 410 });
  });

  it('resourceVersion semantics: not older than, exact with limit, too large, invalid combinations', async () => {
    const a = await post(CM, { metadata: { name: 'a' } });
    await post(CM, { metadata: { name: 'b' } });
    const rvA = a['metadata'].resourceVersion ?? '';
    // Not older than: the latest state.
    expect(await names(`${CM}?resourceVersion=${rvA}`)).toEqual(['a', 'b']);
    // Exact with a limit: the state at rvA.
    const exact = (await s.request(json('GET', `${CM}?resourceVersion=${rvA}&limit=10`))).json();
    expect(exact['items']?.map((i) => i.metadata.name)).toEqual(['a']);
    expect(exact['metadata'].resourceVersion).toBe(rvA);
    const exact2 = (
      await s.request(json('GET', `${CM}?resourceVersion=${rvA}&resourceVersionMatch=Exact`))
    ).json();
    expect(exact2['items']).toHaveLength(1);
    // Ahead of the store: 504 Timeout with kube's message.
    const ahead = await s.request(json('GET', `${CM}?resourceVersion=999999`));
    expect(ahead.statusCode).toBe(504);
    expect(ahead.json()['message']).toMatch(/^Timeout: Too large resource version: /);
    // Invalid combinations.
    expect((await s.request(json('GET', `${CM}?resourceVersionMatch=Exact`))).statusCode).toBe(422);
    expect(
      (await s.request(json('GET', `${CM}?resourceVersion=0&resourceVersionMatch=Exact`))).statusCode,
    ).toBe(422);
    expect((await s.request(json('GET', `${CM}?resourceVersion=abc`))).statusCode).toBe(400);
  });

  it('get with resourceVersion: 0 and older read the latest, ahead is 504', async () => {
    const a = await post(CM, { metadata: { name: 'a' } });
    expect((await s.request(json('GET', `${CM}/a?resourceVersion=0`))).statusCode).toBe(200);
    expect(
      (await s.request(json('GET', `${CM}/a?resourceVersion=${a['metadata'].resourceVersion}`))).statusCode,
    ).toBe(200);
    expect((await s.request(json('GET', `${CM}/a?resourceVersion=99999`))).statusCode).toBe(504);
  });
});

describe('watch', () => {
  it('resourceVersion unset: ADDED for current state, then ADDED/MODIFIED/DELETED', async () => {
    const base = await s.listen();
    await post(CM, { metadata: { name: 'a' } });
    const w = await openWatchStream(base, `${CM}?watch=1`);
    try {
      expect(w.response.status).toBe(200);
      expect(w.response.headers.get('content-type')).toBe('application/json');
      expect(w.response.headers.get('transfer-encoding')).toBe('chunked');
      const first = await w.next();
      expect(first).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: 'a' } } });
      const b = await post(CM, { metadata: { name: 'b' } });
      expect(await w.next()).toMatchObject({
        type: 'ADDED',
        object: { metadata: { name: 'b', resourceVersion: b['metadata'].resourceVersion } },
      });
      const put = await s.request(json('PUT', `${CM}/b`, { ...b, data: { k: 'v' } }));
      const modified = await w.next();
      expect(modified).toMatchObject({ type: 'MODIFIED', object: { data: { k: 'v' } } });
      expect(modified?.object?.metadata.resourceVersion).toBe(put.json()['metadata'].resourceVersion);
      await s.request(json('DELETE', `${CM}/b`));
      const deleted = await w.next();
      expect(deleted).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'b' } } });
      expect(BigInt(deleted?.object?.metadata.resourceVersion ?? '')).toBeGreaterThan(
        BigInt(modified?.object?.metadata.resourceVersion ?? ''),
      );
    } finally {
      await w.close();
    }
  });

  it('resourceVersion N: only changes after N, no synthetic events', async () => {
    const base = await s.listen();
    const a = await post(CM, { metadata: { name: 'a' } });
    await post(CM, { metadata: { name: 'b' } });
    const w = await openWatchStream(
      base,
      `${CM}?watch=true&resourceVersion=${a['metadata'].resourceVersion}`,
    );
    try {
      expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
      await post(CM, { metadata: { name: 'c' } });
      expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'c' } } });
    } finally {
      await w.close();
    }
  });

  it('a compacted resourceVersion gets an ERROR event with a 410 Expired Status', async () => {
    const base = await s.listen();
    const a = await post(CM, { metadata: { name: 'a' } });
    await post(CM, { metadata: { name: 'b' } });
    await post(CM, { metadata: { name: 'c' } });
    await s.store.compact(await s.store.currentRevision());
    const w = await openWatchStream(base, `${CM}?watch=1&resourceVersion=${a['metadata'].resourceVersion}`);
    try {
      const ev = await w.next();
      expect(ev).toMatchObject({
        type: 'ERROR',
        object: { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 },
      });
      expect(ev?.object?.message).toMatch(/^too old resource version: /);
      expect(await w.next()).toBeUndefined();
    } finally {
      await w.close();
    }
  });

  it('selectors: entering the selection is ADDED, leaving it DELETED', async () => {
    const base = await s.listen();
    const a = await post(CM, { metadata: { name: 'a', labels: { app: 'x' } } });
    await post(CM, { metadata: { name: 'other', labels: { app: 'y' } } });
    const w = await openWatchStream(base, `${CM}?watch=1&labelSelector=app%3Dx`);
    try {
      expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
      const moved = await s.request(
        json('PUT', `${CM}/a`, { ...a, metadata: { ...a['metadata'], labels: { app: 'y' } } }),
      );
      const left = await w.next();
      expect(left).toMatchObject({
        type: 'DELETED',
        object: { metadata: { name: 'a', labels: { app: 'x' } } },
      });
      expect(left?.object?.metadata.resourceVersion).toBe(moved.json()['metadata'].resourceVersion);
      const m = moved.json();
      await s.request(json('PUT', `${CM}/other`, { metadata: { name: 'other', labels: { app: 'z' } } }));
      await s.request(json('PUT', `${CM}/a`, { ...m, metadata: { ...m['metadata'], labels: { app: 'x' } } }));
      expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    } finally {
      await w.close();
    }
  });

  it('fieldSelector metadata.name watches one object; the item path with watch too', async () => {
    const base = await s.listen();
    await post(CM, { metadata: { name: 'a' } });
    await post(CM, { metadata: { name: 'ab' } });
    for (const path of [
      `${CM}?watch=1&fieldSelector=metadata.name%3Da`,
      `${CM}/a?watch=1`,
      `/api/v1/watch/namespaces/default/configmaps/a`,
    ]) {
      const w = await openWatchStream(base, path);
      try {
        expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
        await s.request(json('PUT', `${CM}/ab`, { metadata: { name: 'ab' }, data: { n: path } }));
        await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'a' }, data: { n: path } }));
        expect(await w.next()).toMatchObject({
          type: 'MODIFIED',
          object: { metadata: { name: 'a' }, data: { n: path } },
        });
      } finally {
        await w.close();
      }
    }
  });

  it('bookmarks with allowWatchBookmarks carry only the resourceVersion', async () => {
    const base = await s.listen();
    const a = await post(CM, { metadata: { name: 'a' } });
    const w = await openWatchStream(
      base,
      `${CM}?watch=1&allowWatchBookmarks=true&resourceVersion=${a['metadata'].resourceVersion}`,
    );
    try {
      const ev = await w.next();
      expect(ev).toMatchObject({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1' } });
      expect(Object.keys(ev?.object?.metadata ?? {})).toEqual(['resourceVersion']);
      expect(BigInt(ev?.object?.metadata.resourceVersion ?? '')).toBeGreaterThanOrEqual(
        BigInt(a['metadata'].resourceVersion ?? ''),
      );
    } finally {
      await w.close();
    }
  });

  it('timeoutSeconds ends the stream', async () => {
    const base = await s.listen();
    const w = await openWatchStream(base, `${CM}?watch=1&timeoutSeconds=1&resourceVersion=1`);
    expect(await w.next()).toBeUndefined();
    await w.close();
  });

  it('a bad selector on a watch is a plain 400', async () => {
    const base = await s.listen();
    const r = await fetch(`${base}${CM}?watch=1&fieldSelector=spec.bogus%3D1`);
    expect(r.status).toBe(400);
    expect(((await r.json()) as Record<string, unknown>)['reason']).toBe('BadRequest');
  });
});
