/**
 * @kubernetes/client-node informers stay in sync with the server: concurrent writers, a server
 * restart in the middle (LevelDB in a temp dir: the memory store cannot restart), and, on etcd,
 * two server replicas on one etcd with an informer on each. In sync means: every informer's
 * watch events are in strictly increasing resourceVersion order (no duplicates), informers on the
 * same server or store see the same sequence (no gaps on either), the final caches equal the
 * server's list, and after the restart informers resume from their last version (no relist).
 *
 * Scale: 400 creates (every third then updated, every fourth deleted) by 4 concurrent writers, not
 * 10,000 objects, to keep this file within seconds on a shared 2-core machine.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { ETCD_BINARY, startEtcd } from '../../tools/etcd-local.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'default';
const CREATES = 400;
const UPDATES = 150;
const DELETES = 100;
const WRITERS = 4;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** An informer that records its events and restarts itself after errors (as controllers do). */
class Recorder {
  readonly events: string[] = [];
  readonly revisions: bigint[] = [];
  lists = 0;
  readonly informer: k8s.Informer<k8s.V1ConfigMap> & k8s.ObjectCache<k8s.V1ConfigMap>;
  #stopped = false;

  constructor(kc: k8s.KubeConfig) {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    this.informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, () => {
      this.lists++;
      return core.listNamespacedConfigMap({ namespace: NS });
    });
    const record = (verb: string) => (obj: k8s.V1ConfigMap) => {
      const rv = obj.metadata?.resourceVersion ?? '0';
      this.events.push(`${verb}:${obj.metadata?.name ?? ''}:${rv}`);
      this.revisions.push(BigInt(rv));
    };
    this.informer.on('add', record('add'));
    this.informer.on('update', record('update'));
    this.informer.on('delete', record('delete'));
    this.informer.on('error', () => {
      if (this.#stopped) return;
      setTimeout(() => {
        if (!this.#stopped) this.informer.start().catch(() => undefined);
      }, 200).unref();
    });
  }

  async start(): Promise<void> {
    await this.informer.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.informer.stop();
  }

  /** name → resourceVersion of the informer's cache. */
  state(): Map<string, string> {
    return new Map(
      this.informer.list(NS).map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? '']),
    );
  }
}

/** Creates, updates and deletes `prefix-*` objects from `WRITERS` concurrent writers. */
async function write(clients: k8s.CoreV1Api[], prefix: string, from: number, to: number): Promise<void> {
  const jobs: (() => Promise<unknown>)[] = [];
  for (let i = from; i < to; i++) {
    const name = `${prefix}-${i}`;
    const core = clients[i % clients.length] as k8s.CoreV1Api;
    jobs.push(async () => {
      await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name }, data: { v: '0' } } });
      if (i % Math.ceil(CREATES / UPDATES) === 0)
        await core.replaceNamespacedConfigMap({
          name,
          namespace: NS,
          body: { metadata: { name }, data: { v: '1' } },
        });
      if (i % Math.ceil(CREATES / DELETES) === 1)
        await core.deleteNamespacedConfigMap({ name, namespace: NS });
    });
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++] as () => Promise<unknown>;
        await job();
      }
    }),
  );
}

async function serverState(core: k8s.CoreV1Api): Promise<Map<string, string>> {
  const list = await core.listNamespacedConfigMap({ namespace: NS });
  return new Map(list.items.map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? '']));
}

async function converged(recorders: Recorder[], core: k8s.CoreV1Api): Promise<Map<string, string>> {
  const want = await serverState(core);
  for (let i = 0; i < 300; i++) {
    if (recorders.every((r) => sameMap(r.state(), want))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const r of recorders) expect(Object.fromEntries(r.state())).toEqual(Object.fromEntries(want));
  return want;
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function expectIncreasing(revs: readonly bigint[]): void {
  for (let i = 1; i < revs.length; i++) {
    if ((revs[i] as bigint) <= (revs[i - 1] as bigint)) {
      expect.fail(`resourceVersion ${revs[i]} after ${revs[i - 1]} at event ${i}`);
    }
  }
}

describe('informers across concurrent writers and a restart (LevelDB)', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('stay in sync, in the same order, and resume without relisting after the restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'capstan-watch-restart-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const args = [`--secure-port=${port}`];
    let server: TestServer = await startTestServer({ store: 'leveldb', dataDir, args });
    cleanup.push(() => server.close());
    const kc = server.kubeConfig;
    const recorders = [new Recorder(kc), new Recorder(kc)];
    cleanup.push(async () => {
      for (const r of recorders) await r.stop();
    });
    for (const r of recorders) await r.start();
    const clients = Array.from({ length: WRITERS }, () => kc.makeApiClient(k8s.CoreV1Api));

    await write(clients, 'one', 0, CREATES / 2);
    await converged(recorders, clients[0] as k8s.CoreV1Api);

    await server.close();
    server = await startTestServer({ store: 'leveldb', dataDir, args });
    await write(clients, 'two', CREATES / 2, CREATES);
    const final = await converged(recorders, clients[0] as k8s.CoreV1Api);

    expect(final.size).toBeGreaterThan(CREATES / 2);
    for (const r of recorders) {
      expectIncreasing(r.revisions);
      // Resumed from their last version after the restart: the one initial list only.
      expect(r.lists).toBe(1);
    }
    expect(recorders[0]?.events).toEqual(recorders[1]?.events);
  });
});

const etcdMissing = !existsSync(ETCD_BINARY);
if (etcdMissing && process.env['CAPSTAN_REQUIRE_ETCD'] === '1')
  throw new Error(`etcd required: ${ETCD_BINARY} missing`);

describe.skipIf(etcdMissing)('informers on two replicas over one etcd', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('see the same events in the same order on each replica', async () => {
    const etcd = await startEtcd();
    cleanup.push(() => etcd.stop());
    const a = await startTestServer({ store: 'etcd', etcd });
    cleanup.push(() => a.close());
    const b = await startTestServer({ store: 'etcd', etcd });
    cleanup.push(() => b.close());
    const recorders = [new Recorder(a.kubeConfig), new Recorder(b.kubeConfig)];
    cleanup.push(async () => {
      for (const r of recorders) await r.stop();
    });
    for (const r of recorders) await r.start();
    const clients = [
      a.kubeConfig.makeApiClient(k8s.CoreV1Api),
      b.kubeConfig.makeApiClient(k8s.CoreV1Api),
      a.kubeConfig.makeApiClient(k8s.CoreV1Api),
      b.kubeConfig.makeApiClient(k8s.CoreV1Api),
    ];
    await write(clients, 'r', 0, CREATES / 2);
    await converged(recorders, clients[0] as k8s.CoreV1Api);
    for (const r of recorders) expectIncreasing(r.revisions);
    expect(recorders[0]?.events).toEqual(recorders[1]?.events);
  });
});
