/**
 * Watch cache benchmarks, measured in one run so that figures read as ratios (the machine is
 * shared):
 *
 *   npm run build && node --expose-gc dist/tools/bench-watchcache.js [--quick]
 *
 * - LIST of 10,000 and 50,000 ConfigMaps of about 1 KiB over HTTP/1.1: from the watch cache
 *   (`resourceVersion=0`) against the same server with `--watch-cache=false` (a storage range):
 *   median latency, MB/s, and peak heap growth while 10 such lists run at once (to compare with
 *   the size of one response: lists are streamed from cached item bytes).
 * - Watch fan-out: 1,000 HTTP watchers of one type while a writer makes 200 writes/s: p50/p99
 *   write-to-delivery latency, process CPU per delivered event (server and clients share this
 *   process), and JSON encodes per event (must be 1).
 */
import { request, Agent } from 'node:http';
import fastify, { type FastifyInstance } from 'fastify';
import type { Store, WriteResult } from '../storage/interface.js';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { installErrorHandler } from '../src/http/error-handler.js';
import { mountResources } from '../src/server/resources.js';
import { loadRegistry } from '../src/registry/registry.js';
import { encodeForStorage } from '../src/api/object.js';
import { WatchCaches } from '../src/watchcache/cache-set.js';
import type { TypeCache } from '../src/watchcache/type-cache.js';
import { fmt, msSince, percentile } from '../src/bench/stats.js';

const CM = '/api/v1/namespaces/default/configmaps';
const quick = process.argv.includes('--quick');
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function app(
  store: Store,
  caches: WatchCaches | false,
): Promise<{ app: FastifyInstance; base: string }> {
  const a = fastify({ logger: false, forceCloseConnections: true });
  installErrorHandler(a);
  mountResources(a, {
    registry: loadRegistry(),
    store,
    eventTtlSeconds: 3600,
    minRequestTimeoutSeconds: 1800,
    watchCache: caches,
    startControllers: false,
  });
  await a.listen({ host: '127.0.0.1', port: 0 });
  const addr = a.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no address');
  return { app: a, base: `http://127.0.0.1:${addr.port}` };
}

async function readyCache(caches: WatchCaches): Promise<TypeCache> {
  const type = loadRegistry().byResource('', 'v1', 'configmaps');
  const cache = type === undefined ? undefined : caches.for(type);
  if (cache === undefined) throw new Error('no cache');
  while (!cache.ready) await new Promise((r) => setTimeout(r, 10));
  await cache.waitConsistent(60_000);
  return cache;
}

/** GET `url`, discarding the body; resolves with its size. */
function getBytes(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Stores ConfigMap `name` of namespace `default` with `data`, as the server would. */
function createConfigMap(store: Store, name: string, data: Record<string, string>): Promise<WriteResult> {
  return store.create(
    `/configmaps/default/${name}`,
    encodeForStorage({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default' }, data }),
  );
}

async function fill(store: Store, n: number, from = 0): Promise<void> {
  const data = { v: 'x'.repeat(900) };
  for (let i = from; i < n; i++) {
    const name = `cm-${String(i).padStart(6, '0')}`;
    await createConfigMap(store, name, data);
  }
}

async function listBench(store: Store, base: string, query: string, runs: number): Promise<string> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    bytes = await getBytes(`${base}${CM}${query}`);
    times.push(msSince(t));
  }
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 2);
  await Promise.all(Array.from({ length: 10 }, () => getBytes(`${base}${CM}${query}`)));
  clearInterval(sampler);
  const p50 = percentile(times, 50);
  void store;
  return `${fmt(p50)} ms p50, ${fmt(bytes / 1e6 / (p50 / 1000))} MB/s, response ${fmt(bytes / 1e6)} MB, heap growth with 10 at once ${fmt((peak - before) / 1e6)} MB`;
}

async function lists(): Promise<void> {
  const store = await openMemoryStore();
  const caches = new WatchCaches({ store, defaultSize: 100, bookmarkIntervalMs: 60_000 });
  const cached = await app(store, caches);
  const direct = await app(store, false);
  let filled = 0;
  for (const n of quick ? [10_000] : [10_000, 50_000]) {
    await fill(store, n, filled);
    filled = n;
    await readyCache(caches);
    console.log(`LIST ${n} ConfigMaps (1 KiB)`);
    console.log(`  cache  (rv=0):          ${await listBench(store, cached.base, '?resourceVersion=0', 5)}`);
    console.log(`  cache  (consistent):    ${await listBench(store, cached.base, '', 5)}`);
    console.log(`  storage (watch-cache=false): ${await listBench(store, direct.base, '', 5)}`);
  }
  await cached.app.close();
  await direct.app.close();
  caches.close();
  await store.close();
}

async function fanout(): Promise<void> {
  const watchers = quick ? 200 : 1000;
  const seconds = quick ? 2 : 4;
  const rate = 200;
  const store = await openMemoryStore();
  const caches = new WatchCaches({ store, defaultSize: 100, bookmarkIntervalMs: 60_000 });
  const served = await app(store, caches);
  const cache = await readyCache(caches);
  const rv = await store.currentRevision();
  const sentAt = new Map<number, bigint>();
  const latencies: number[] = [];
  let delivered = 0;
  const pattern = /"name":"f-(\d+)"/g;
  const streams = await Promise.all(
    Array.from(
      { length: watchers },
      () =>
        new Promise<() => void>((resolve, reject) => {
          const req = request(`${served.base}${CM}?watch=1&resourceVersion=${rv}`, { agent }, (res) => {
            res.setEncoding('utf8');
            res.on('data', (text: string) => {
              const now = process.hrtime.bigint();
              for (const m of text.matchAll(pattern)) {
                const t = sentAt.get(Number(m[1]));
                if (t !== undefined) latencies.push(Number(now - t) / 1e6);
                delivered++;
              }
            });
            res.on('error', () => undefined);
            resolve(() => req.destroy());
          });
          req.on('error', reject);
          req.end();
        }),
    ),
  );
  while (cache.watcherCount < watchers) await new Promise((r) => setTimeout(r, 10));
  const cpu = process.cpuUsage();
  const total = rate * seconds;
  let seq = 0;
  const data = { v: 'x'.repeat(900) };
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      for (let k = 0; k < rate / 100 && seq < total; k++) {
        const i = seq++;
        const name = `f-${i}`;
        sentAt.set(i, process.hrtime.bigint());
        void createConfigMap(store, name, data);
      }
      if (seq >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  const deadline = Date.now() + 30_000;
  while (delivered < total * watchers && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const used = process.cpuUsage(cpu);
  console.log(`Watch fan-out: ${watchers} watchers, ${total} writes at ${rate}/s`);
  console.log(
    `  delivered ${delivered} of ${total * watchers} events; overflowed watchers ${cache.stats.overflows}`,
  );
  console.log(
    `  write-to-delivery p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms`,
  );
  console.log(
    `  CPU per delivered event ${fmt((used.user + used.system) / Math.max(delivered, 1))} µs (server + clients, one process)`,
  );
  for (const stop of streams) stop();
  await served.app.close();
  caches.close();
  await store.close();
}

await lists();
await fanout();
agent.destroy();
