/**
 * Every cell of the spec's list table, the Get row and the Errors rows, over HTTP (inject), with
 * the configmaps watch cache ready (so that the cache-served cells are exercised), and a few with
 * `--watch-cache=false`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchCaches } from '../../src/watchcache/cache-set.js';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { readyCache, testCaches } from './watch.support.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';

const CM = '/api/v1/namespaces/default/configmaps';

let s: ResourceApp;
let caches: WatchCaches;
beforeEach(async () => {
  const store = await openMemoryStore();
  caches = testCaches(store);
  s = await startResourceApp({ store, watchCache: caches, freshnessTimeoutMs: 300 });
  await readyCache(caches);
});
afterEach(async () => {
  await s.close();
});

async function post(name: string, labels: Record<string, string> = {}): Promise<string> {
  const r = await s.request(json('POST', CM, { metadata: { name, labels } }));
  expect(r.statusCode, r.body).toBe(201);
  return r.json()['metadata'].resourceVersion ?? '';
}

async function get(
  query: string,
  path = CM,
): Promise<{ code: number; body: KObj; headers: Record<string, unknown> }> {
  const r = await s.request(json('GET', `${path}${query === '' ? '' : '?'}${query}`));
  return { code: r.statusCode, body: r.json(), headers: r.headers };
}

const names = (b: KObj): string[] => (b.items ?? []).map((i) => i.metadata.name ?? '');

/** Objects a..e, returning the resourceVersion after c. */
async function seed(): Promise<{ afterC: string; last: string }> {
  await post('a');
  await post('b');
  const afterC = await post('c');
  await post('d');
  const last = await post('e');
  return { afterC, last };
}

describe('resourceVersionMatch unset, limit unset', () => {
  it('unset: Most Recent (a write just made is listed, at the store revision)', async () => {
    const { last } = await seed();
    const r = await get('');
    expect(r.code).toBe(200);
    expect(names(r.body)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.body.metadata.resourceVersion).toBe(last);
    expect(r.body.metadata.continue).toBeUndefined();
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
  });

  it('0: Any', async () => {
    await seed();
    const r = await get('resourceVersion=0');
    expect(r.code).toBe(200);
    expect(r.body.kind).toBe('ConfigMapList');
    expect(names(r.body).length).toBeGreaterThan(0);
  });

  it('N: Not older than (list version ≥ N)', async () => {
    const { afterC, last } = await seed();
    const r = await get(`resourceVersion=${afterC}`);
    expect(r.code).toBe(200);
    expect(BigInt(r.body.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(BigInt(afterC));
    expect(BigInt(r.body.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(BigInt(last));
  });

  it('N ahead of the server: 504 Too large resource version with Retry-After after a short wait', async () => {
    const { last } = await seed();
    const r = await get(`resourceVersion=${BigInt(last) + 100n}`);
    expect(r.code).toBe(504);
    expect(r.body).toMatchObject({ reason: 'Timeout', code: 504 });
    expect(r.body.message).toMatch(/^Timeout: Too large resource version: /);
    expect(r.headers['retry-after']).toBe('1');
  });

  it('N reached during the wait: 200', async () => {
    const { last } = await seed();
    const pending = get(`resourceVersion=${BigInt(last) + 1n}`);
    await post('late');
    const r = await pending;
    expect(r.code).toBe(200);
    expect(names(r.body)).toContain('late');
  });
});

describe('resourceVersionMatch unset, limit=n, continue unset', () => {
  it('unset: Most Recent, paged with remainingItemCount', async () => {
    const { last } = await seed();
    const r = await get('limit=2');
    expect(names(r.body)).toEqual(['a', 'b']);
    expect(r.body.metadata.resourceVersion).toBe(last);
    expect(r.body.metadata.remainingItemCount).toBe(3);
    expect(typeof r.body.metadata.continue).toBe('string');
  });

  it('0: Any (served from the cache, which ignores the limit as kube-apiserver does)', async () => {
    await seed();
    const r = await get('resourceVersion=0&limit=2');
    expect(r.code).toBe(200);
    expect(names(r.body)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.body.metadata.continue).toBeUndefined();
  });

  it('N: Exact (the list version equals N, items as of N)', async () => {
    const { afterC } = await seed();
    const r = await get(`resourceVersion=${afterC}&limit=2`);
    expect(r.body.metadata.resourceVersion).toBe(afterC);
    expect(names(r.body)).toEqual(['a', 'b']);
    expect(r.body.metadata.remainingItemCount).toBe(1);
    const next = await get(`limit=2&continue=${encodeURIComponent(r.body.metadata.continue ?? '')}`);
    expect(names(next.body)).toEqual(['c']);
    expect(next.body.metadata.resourceVersion).toBe(afterC);
    expect(next.body.metadata.continue).toBeUndefined();
    expect(next.body.metadata.remainingItemCount).toBeUndefined();
  });
});

describe('resourceVersionMatch unset, limit=n, continue=token', () => {
  it('unset: Continue Token, Exact (every chunk at the first chunk version)', async () => {
    await seed();
    const first = await get('limit=2');
    await post('f');
    const second = await get(`limit=2&continue=${encodeURIComponent(first.body.metadata.continue ?? '')}`);
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(names(second.body)).toEqual(['c', 'd']);
  });

  it('0: invalid but treated as Continue Token, Exact', async () => {
    await seed();
    const first = await get('limit=2');
    const r = await get(
      `resourceVersion=0&limit=2&continue=${encodeURIComponent(first.body.metadata.continue ?? '')}`,
    );
    expect(r.code).toBe(200);
    expect(names(r.body)).toEqual(['c', 'd']);
    expect(r.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  });

  it('N: 400', async () => {
    const { afterC } = await seed();
    const first = await get('limit=2');
    const r = await get(
      `resourceVersion=${afterC}&limit=2&continue=${encodeURIComponent(first.body.metadata.continue ?? '')}`,
    );
    expect(r.code).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
  });

  it('a tampered token is 400; a token older than compaction is 410 Expired', async () => {
    await seed();
    const first = await get('limit=2');
    const token = first.body.metadata.continue ?? '';
    const flipped = `${token.slice(0, 5)}${token[5] === 'A' ? 'B' : 'A'}${token.slice(6)}`;
    const bad = await get(`limit=2&continue=${encodeURIComponent(flipped)}`);
    expect(bad.code).toBe(400);
    await post('f');
    await s.store.compact(await s.store.currentRevision());
    const old = await get(`limit=2&continue=${encodeURIComponent(token)}`);
    expect(old.code).toBe(410);
    expect(old.body).toMatchObject({ reason: 'Expired', code: 410 });
  });
});

describe('resourceVersionMatch=Exact', () => {
  it('unset and 0 are invalid (422), with or without limit', async () => {
    for (const q of [
      'resourceVersionMatch=Exact',
      'resourceVersion=0&resourceVersionMatch=Exact',
      'resourceVersionMatch=Exact&limit=1',
      'resourceVersion=0&resourceVersionMatch=Exact&limit=1',
    ]) {
      const r = await get(q);
      expect(r.code, q).toBe(422);
      expect(r.body.reason).toBe('Invalid');
    }
  });

  it('N: Exact without and with limit; compacted N is 410', async () => {
    const { afterC } = await seed();
    const r = await get(`resourceVersion=${afterC}&resourceVersionMatch=Exact`);
    expect(r.body.metadata.resourceVersion).toBe(afterC);
    expect(names(r.body)).toEqual(['a', 'b', 'c']);
    const paged = await get(`resourceVersion=${afterC}&resourceVersionMatch=Exact&limit=1`);
    expect(paged.body.metadata.resourceVersion).toBe(afterC);
    expect(names(paged.body)).toEqual(['a']);
    expect(paged.body.metadata.remainingItemCount).toBe(2);
    await s.store.compact(await s.store.currentRevision());
    const gone = await get(`resourceVersion=${afterC}&resourceVersionMatch=Exact`);
    expect(gone.code).toBe(410);
    expect(gone.body.reason).toBe('Expired');
  });
});

describe('resourceVersionMatch=NotOlderThan', () => {
  it('unset is invalid (422)', async () => {
    expect((await get('resourceVersionMatch=NotOlderThan')).code).toBe(422);
    expect((await get('resourceVersionMatch=NotOlderThan&limit=1')).code).toBe(422);
  });

  it('0: Any, with or without limit', async () => {
    await seed();
    for (const q of [
      'resourceVersion=0&resourceVersionMatch=NotOlderThan',
      'resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=1',
    ]) {
      const r = await get(q);
      expect(r.code, q).toBe(200);
      expect(names(r.body).length).toBeGreaterThan(0);
    }
  });

  it('N: Not older than, with or without limit', async () => {
    const { afterC, last } = await seed();
    const r = await get(`resourceVersion=${afterC}&resourceVersionMatch=NotOlderThan`);
    expect(BigInt(r.body.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(BigInt(last));
    const paged = await get(`resourceVersion=${afterC}&resourceVersionMatch=NotOlderThan&limit=2`);
    expect(BigInt(paged.body.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(BigInt(afterC));
    expect(names(paged.body)).toEqual(['a', 'b']);
    expect(paged.body.metadata.remainingItemCount).toBe(3);
    const ahead = await get(
      `resourceVersion=${BigInt(last) + 50n}&resourceVersionMatch=NotOlderThan&limit=2`,
    );
    expect(ahead.code).toBe(504);
  });

  it('an unknown match value is 422; sendInitialEvents on a list is 422', async () => {
    expect((await get('resourceVersion=1&resourceVersionMatch=Newest')).code).toBe(422);
    expect((await get('sendInitialEvents=true')).code).toBe(422);
  });
});

describe('remainingItemCount', () => {
  it('omitted with selectors and on the last chunk', async () => {
    await post('x1', { k: 'v' });
    await post('x2', { k: 'v' });
    await post('x3', { k: 'v' });
    const sel = await get('labelSelector=k%3Dv&limit=1');
    expect(sel.body.metadata.continue).toBeDefined();
    expect(sel.body.metadata.remainingItemCount).toBeUndefined();
    const all = await get('limit=3');
    expect(all.body.metadata.continue).toBeUndefined();
    expect(all.body.metadata.remainingItemCount).toBeUndefined();
  });
});

describe('get', () => {
  it('unset, 0 and N read the object; ahead is 504 with Retry-After; N from the cache is not older than N', async () => {
    const rv = await post('g');
    for (const q of ['', 'resourceVersion=0', `resourceVersion=${rv}`]) {
      const r = await get(q, `${CM}/g`);
      expect(r.code, q).toBe(200);
      expect(r.body.metadata.resourceVersion).toBe(rv);
    }
    const ahead = await get(`resourceVersion=${BigInt(rv) + 10n}`, `${CM}/g`);
    expect(ahead.code).toBe(504);
    expect(ahead.headers['retry-after']).toBe('1');
    expect(ahead.body.message).toMatch(/^Timeout: Too large resource version: /);
    expect((await get('resourceVersion=0', `${CM}/missing`)).code).toBe(404);
  });
});

describe('--watch-cache=false', () => {
  it('the same cells from storage: Most Recent, Any, Not older than, 504', async () => {
    const store = await openMemoryStore();
    const direct = await startResourceApp({
      store,
      watchCache: false,
      freshnessTimeoutMs: 200,
    });
    try {
      const made = await direct.request(json('POST', CM, { metadata: { name: 'a' } }));
      expect(made.statusCode, made.body).toBe(201);
      const rv = made.json()['metadata'].resourceVersion ?? '';
      for (const q of ['', '?resourceVersion=0', `?resourceVersion=${rv}`]) {
        const r = await direct.request(json('GET', `${CM}${q}`));
        expect(r.statusCode, q).toBe(200);
        expect(r.json()['metadata'].resourceVersion).toBe(rv);
      }
      const ahead = await direct.request(json('GET', `${CM}?resourceVersion=${BigInt(rv) + 5n}`));
      expect(ahead.statusCode).toBe(504);
      expect(ahead.headers['retry-after']).toBe('1');
    } finally {
      await direct.close();
    }
  });
});
