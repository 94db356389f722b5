/**
 * @kubernetes/client-node informers stay in sync with the server: concurrent writers, a server
 * restart in the middle (LevelDB in a temp dir: the memory store cannot restart), and, on etcd,
 * two server replicas on one etcd with an informer on each. In sync means: every informer's
 * watch events are in strictly increasing resourceVersion order (no duplicates), informers on the
 * same server or store see the same sequence (no gaps on either), the final caches equal the
 * server's list, and after the restart informers resume from their last version (no relist).
 *
 * Scale: 10,000 creates per scenario (every third object then updated, every fourth deleted), from
 * 32 concurrent writers. The writers use raw HTTP/2 sessions (one TLS handshake, many requests in
 * flight) rather than @kubernetes/client-node, which opens a connection per request; the
 * informers under test are real client-node informers.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { ETCD_BINARY, startEtcd } from '../../tools/etcd-local.js';
import { H2Session } from '../support/h2-session.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'default';
/** The ConfigMap the cluster puts in every namespace (not one of the test's writes). */
const ROOT_CA = 'kube-root-ca.crt';
const CREATES = 10_000;
/** Every UPDATE_EVERY-th object is replaced once after its create. */
const UPDATE_EVERY = 3;
/** Every DELETE_EVERY-th object (offset 1) is deleted after its create. */
const DELETE_EVERY = 4;
/** Requests in flight at once. */
const WRITERS = 32;
const PATH = `/api/v1/namespaces/${NS}/configmaps`;
/** A scenario takes tens of seconds on a loaded 2-core machine; this only bounds a hang. */
const TEST_TIMEOUT_MS = 240_000;

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
      // The root-CA publisher's ConfigMap appears in every namespace, as in kube.
      if (obj.metadata?.name === ROOT_CA) return;
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
      this.informer
        .list(NS)
        .filter((o) => o.metadata?.name !== ROOT_CA)
        .map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? '']),
    );
  }
}

/**
 * Creates `prefix-from` … `prefix-(to-1)`, replaces every UPDATE_EVERY-th and deletes every
 * DELETE_EVERY-th (offset 1), from WRITERS concurrent writers spread over `sessions`. Each write
 * must succeed with its documented status.
 */
async function write(sessions: H2Session[], prefix: string, from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const s = sessions[w % sessions.length] as H2Session;
      while (next < to) {
        const i = next++;
        const name = `${prefix}-${i}`;
        await s.expect(201, 'POST', PATH, { metadata: { name }, data: { v: '0' } });
        if (i % UPDATE_EVERY === 0)
          await s.expect(200, 'PUT', `${PATH}/${name}`, { metadata: { name }, data: { v: '1' } });
        if (i % DELETE_EVERY === 1) await s.expect(200, 'DELETE', `${PATH}/${name}`);
      }
    }),
  );
}

async function serverState(core: k8s.CoreV1Api): Promise<Map<string, string>> {
  const list = await core.listNamespacedConfigMap({ namespace: NS });
  return new Map(
    list.items
      .filter((o) => o.metadata?.name !== ROOT_CA)
      .map((o) => [o.metadata?.name ?? '', o.metadata?.resourceVersion ?? '']),
  );
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

/**
 * Every write after the informers started is one event: CREATES adds, one update per replaced
 * object, one delete per deleted object (no gaps: the counts would fall short; no duplicates:
 * they would exceed them).
 */
function expectEveryWrite(events: readonly string[]): void {
  const count = (verb: string) => events.filter((e) => e.startsWith(`${verb}:`)).length;
  let updates = 0;
  let deletes = 0;
  for (let i = 0; i < CREATES; i++) {
    if (i % UPDATE_EVERY === 0) updates++;
    if (i % DELETE_EVERY === 1) deletes++;
  }
  expect({ add: count('add'), update: count('update'), delete: count('delete') }).toEqual({
    add: CREATES,
    update: updates,
    delete: deletes,
  });
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

  it(
    'stay in sync, in the same order, and resume without relisting after the restart',
    async () => {
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
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const sessions = [new H2Session(server.url, server.kubeconfigPath)];
      cleanup.push(async () => {
        for (const s of sessions) await s.close();
      });

      await write(sessions, 'one', 0, CREATES / 2);
      await converged(recorders, core);

      await server.close();
      server = await startTestServer({ store: 'leveldb', dataDir, args });
      // Same port and credentials: the session reconnects on its next request.
      await write(sessions, 'two', CREATES / 2, CREATES);
      const final = await converged(recorders, core);

      expect(final.size).toBeGreaterThan(CREATES / 2);
      for (const r of recorders) {
        expectIncreasing(r.revisions);
        expectEveryWrite(r.events);
        // Resumed from their last version after the restart: the one initial list only.
        expect(r.lists).toBe(1);
      }
      expect(recorders[0]?.events).toEqual(recorders[1]?.events);
    },
    TEST_TIMEOUT_MS,
  );
});

const etcdMissing = !existsSync(ETCD_BINARY);
if (etcdMissing && process.env['CAPSTAN_REQUIRE_ETCD'] === '1')
  throw new Error(`etcd required: ${ETCD_BINARY} missing`);

describe.skipIf(etcdMissing)('informers on two replicas over one etcd', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it(
    'see the same events in the same order on each replica',
    async () => {
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
      // Writers alternate between the replicas.
      const sessions = [new H2Session(a.url, a.kubeconfigPath), new H2Session(b.url, b.kubeconfigPath)];
      cleanup.push(async () => {
        for (const s of sessions) await s.close();
      });
      await write(sessions, 'r', 0, CREATES);
      const final = await converged(recorders, a.kubeConfig.makeApiClient(k8s.CoreV1Api));
      // Each replica lists the same state.
      expect(Object.fromEntries(await serverState(b.kubeConfig.makeApiClient(k8s.CoreV1Api)))).toEqual(
        Object.fromEntries(final),
      );
      expect(final.size).toBeGreaterThan(CREATES / 2);
      for (const r of recorders) {
        expectIncreasing(r.revisions);
        expectEveryWrite(r.events);
        expect(r.lists).toBe(1);
      }
      expect(recorders[0]?.events).toEqual(recorders[1]?.events);
    },
    TEST_TIMEOUT_MS,
  );
});
