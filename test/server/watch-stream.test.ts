/**
 * The watch response stream (`serveWatch` in src/http/resource-routes.ts) over a real socket,
 * with a client that stops reading: the server holds the stream back until the client reads
 * again, losing and reordering nothing, and a client that goes away meanwhile ends its watcher.
 */
import { get, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TypeCache } from '../../src/watchcache/type-cache.js';
import type { Watch } from '../../storage/interface.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { overriding } from '../support/store-wrappers.js';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { readyCache, testCaches } from './watch.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
/** 80 objects of 256 KiB: far more than loopback's socket buffers hold, so writes must wait. */
const OBJECTS = 80;
const DATA = 'x'.repeat(256 * 1024);

let s: ResourceApp;
let cache: TypeCache;
let base: string;
beforeEach(async () => {
  const store = await openMemoryStore();
  const caches = testCaches(store, { defaultSize: 1000 });
  s = await startResourceApp({ store, watchCache: caches });
  cache = await readyCache(caches);
  base = await s.listen();
});
afterEach(async () => {
  await s.close();
});

/** A watch whose response the client does not read until told to. */
function openPaused(path: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = get(`${base}${path}`, (res) => {
      res.pause();
      resolve({ req, res });
    });
    req.on('error', reject);
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition(), what).toBe(true);
}

async function createBig(): Promise<void> {
  for (let i = 0; i < OBJECTS; i++) {
    const r = await s.request(json('POST', CM, { metadata: { name: `cm-${i}` }, data: { d: DATA } }));
    expect(r.statusCode, r.body).toBe(201);
  }
}

describe('a watch whose client stops reading', () => {
  it('gets every event, in order, once the client reads again', async () => {
    const { res } = await openPaused(`${CM}?watch=1`);
    await until(() => cache.watcherCount === 1, 'the watch is open');
    await createBig();
    // Let the server fill the socket and wait for the client.
    await new Promise((r) => setTimeout(r, 200));

    const seen: string[] = [];
    let buffer = '';
    await new Promise<void>((resolve, reject) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const event = JSON.parse(buffer.slice(0, nl)) as { type: string; object: KObj };
          buffer = buffer.slice(nl + 1);
          expect(event.type).toBe('ADDED');
          expect(event.object.data?.['d']).toHaveLength(DATA.length);
          seen.push(event.object.metadata.name ?? '');
          if (seen.length === OBJECTS) resolve();
        }
      });
      res.on('error', reject);
      res.resume();
    });
    expect(seen).toEqual(Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`));
    res.destroy();
  });

  it('ends its watcher when the client goes away while the server waits for it', async () => {
    const { req } = await openPaused(`${CM}?watch=1`);
    await until(() => cache.watcherCount === 1, 'the watch is open');
    await createBig();
    await new Promise((r) => setTimeout(r, 200));
    req.destroy();
    await until(() => cache.watcherCount === 0, 'the watcher ended');

    // The server still serves watches.
    const { res } = await openPaused(`${CM}?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Dlast`);
    await s.request(json('POST', CM, { metadata: { name: 'last' } }));
    res.setEncoding('utf8');
    res.resume();
    const line = await new Promise<string>((resolve) => res.once('data', (chunk: string) => resolve(chunk)));
    expect(JSON.parse(line.split('\n')[0] ?? '')).toMatchObject({ object: { metadata: { name: 'last' } } });
    res.destroy();
  });
});

describe('a client that leaves while its watch is opening', () => {
  it('has its storage watch closed once the watch is open', async () => {
    // Without the watch cache a watch from "now" reads the state first: hold that read.
    const store = await openMemoryStore();
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reading = (): void => undefined;
    const reached = new Promise<void>((resolve) => (reading = resolve));
    let opened = 0;
    let closed = 0;
    const wrapped = overriding(store, {
      range: async (...args) => {
        const [span] = args;
        if ('prefix' in span && span.prefix.includes('/configmaps/')) {
          reading();
          await held;
        }
        return store.range(...args);
      },
      watch: (...args): Watch => {
        const inner = store.watch(...args);
        const [span] = args;
        if (!('prefix' in span && span.prefix.includes('/configmaps/'))) return inner;
        opened++;
        let done = false;
        return {
          requestProgress: () => inner.requestProgress(),
          close: () => {
            if (!done) closed++;
            done = true;
            inner.close();
          },
          [Symbol.asyncIterator]: () => inner[Symbol.asyncIterator](),
        };
      },
    });
    const app = await startResourceApp({ store: wrapped, watchCache: false });
    try {
      const url = await app.listen();
      const req = get(`${url}${CM}?watch=1`);
      req.on('error', () => undefined);
      await reached;
      req.destroy();
      await new Promise((r) => setTimeout(r, 100));
      release();
      await until(() => opened === 1 && closed === 1, 'the storage watch was opened and closed');
    } finally {
      release();
      await app.close();
    }
  });
});
