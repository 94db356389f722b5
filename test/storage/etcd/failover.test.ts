/**
 * Member failover on a real three-member etcd (three `/usr/bin/etcd` processes on loopback) with
 * one Capstan server on all three: under a concurrent create load, followers are stopped (SIGTERM,
 * a routine restart), started again, and killed (SIGKILL, a crash). No create fails, every
 * acknowledged one is in the store afterwards, and watches served by etcd directly
 * (`--watch-cache=false`) see every create exactly once, in order, across the member changes.
 *
 * kube's etcd client fails a write in flight on a member that goes away (its fate is unknown, and
 * clientv3 never repeats a mutable call then; etcd 3.4 closes client connections without GOAWAY
 * when it stops), and so does Capstan: each stop is made between two writes of every writer, so
 * the test is about the member being gone and coming back, not about that race.
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startEtcdCluster,
  type ClusterMember,
  type LocalEtcdCluster,
} from '../../../tools/etcd-local-cluster.js';
import type { LocalEtcd } from '../../../tools/etcd-local.js';
import { ETCD_BINARY } from '../../../tools/etcd-local.js';
import { existsSync } from 'node:fs';
import { adminJson, adminTls, startTestServer, type TestServer } from '../../support/server.js';
import { etcdLeaderOf } from './support.js';

const HAVE_ETCD = existsSync(ETCD_BINARY);
if (!HAVE_ETCD && process.env['CI'] === 'true') throw new Error(`${ETCD_BINARY} is missing (CI=true)`);

const NS = '/api/v1/namespaces/default/configmaps';
const WRITERS = 6;
const WATCHERS = 6;

let cluster: LocalEtcdCluster;
let server: TestServer;

beforeAll(async () => {
  if (!HAVE_ETCD) return;
  cluster = await startEtcdCluster(3);
  const etcd: LocalEtcd = {
    endpoints: cluster.endpoints,
    dataDir: '',
    pid: 0,
    stop: async () => undefined,
    kill: async () => undefined,
    restart: async () => undefined,
  };
  // Bare: the in-process controllers' writes (kube-root-ca.crt) would show in the counts.
  server = await startTestServer({ store: 'etcd', etcd, args: ['--watch-cache=false', '--controllers='] });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await cluster?.close();
});

/** A client watch over HTTPS, collecting the names of ADDED configmaps. */
function openWatch(from: string): { added: string[]; errors: string[]; close(): void } {
  const tls = adminTls(server.kubeconfigPath);
  const added: string[] = [];
  const errors: string[] = [];
  let buffer = '';
  const req = request(
    `${server.url}${NS}?watch=1&resourceVersion=${from}&timeoutSeconds=120`,
    { ...tls, agent: false },
    (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const ev = JSON.parse(buffer.slice(0, nl)) as {
            type: string;
            object: { metadata: { name: string } };
          };
          buffer = buffer.slice(nl + 1);
          if (ev.type === 'ADDED') added.push(ev.object.metadata.name);
          else if (ev.type === 'ERROR') errors.push(JSON.stringify(ev.object));
        }
      });
      res.on('end', () => errors.push('watch ended'));
    },
  );
  req.on('error', (err) => errors.push(String(err)));
  req.end();
  return { added, errors, close: () => req.destroy() };
}

interface Load {
  made: number;
  acknowledged: string[];
  failures: string[];
  stop(): Promise<void>;
  /** Resolves once every writer has finished its current write and waits (for the crash round). */
  pause(): Promise<void>;
  resume(): void;
}

function startLoad(): Load {
  const tls = adminTls(server.kubeconfigPath);
  let running = true;
  let paused: Promise<void> | undefined;
  let resumeAll: () => void = () => undefined;
  const parked: (() => void)[] = [];
  const load: Load = {
    made: 0,
    acknowledged: [],
    failures: [],
    stop: async () => {
      running = false;
      resumeAll();
      await Promise.all(writers);
    },
    pause: () => {
      paused = new Promise((resolve) => {
        resumeAll = resolve;
      });
      return new Promise((resolve) => {
        const check = (): void => {
          if (parked.length === WRITERS) resolve();
          else setTimeout(check, 5);
        };
        check();
      });
    },
    resume: () => {
      paused = undefined;
      parked.splice(0);
      resumeAll();
    },
  };
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; running; i++) {
      if (paused !== undefined) {
        const wait = paused;
        await new Promise<void>((resolve) => {
          parked.push(resolve);
          void wait.then(resolve);
        });
        continue;
      }
      const name = `w${w}-${i}`;
      load.made += 1;
      const r = await adminJson(`${server.url}${NS}`, tls, 'POST', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data: { i: String(i) },
      });
      if (r.status === 201) load.acknowledged.push(name);
      else load.failures.push(`${name}: ${r.status} ${r.text}`);
    }
  };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  return load;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!HAVE_ETCD)('etcd member failover (three members)', () => {
  it('loses no write and no watch event while followers stop, crash and come back', async () => {
    const start = await adminJson(`${server.url}${NS}`, adminTls(server.kubeconfigPath));
    const from = String((start.json['metadata'] as { resourceVersion: string }).resourceVersion);
    const watches = Array.from({ length: WATCHERS }, () => openWatch(from));
    const load = startLoad();
    const kills: string[] = [];
    try {
      await sleep(700);
      // Each round stops a follower between two writes of every writer (a write in flight on a
      // member that goes away has an unknown fate, which kube's client reports as a failure too),
      // then the load goes on while the member is gone and while it comes back.
      const signals = ['SIGTERM', 'SIGTERM', 'SIGKILL'] as const;
      for (const [round, signal] of signals.entries()) {
        const leader = await etcdLeaderOf(cluster.members);
        const victim = cluster.members.filter((m) => m !== leader)[round % 2] as ClusterMember;
        await load.pause();
        await victim.stop(signal);
        kills.push(`${victim.name} ${signal}`);
        load.resume();
        await sleep(1_200);
        await victim.start();
        await sleep(500);
      }
    } finally {
      await load.stop();
    }
    console.log(
      `etcd failover: ${load.made} writes made, ${load.acknowledged.length} acknowledged, ` +
        `${load.failures.length} failed; kills survived: ${kills.join(', ')}`,
    );
    expect(load.failures).toEqual([]);
    expect(load.acknowledged.length).toBe(load.made);
    expect(kills).toHaveLength(3);
    // Every acknowledged write is in the store.
    const list = await adminJson(`${server.url}${NS}`, adminTls(server.kubeconfigPath));
    const stored = new Set(
      ((list.json['items'] ?? []) as { metadata: { name: string } }[]).map((i) => i.metadata.name),
    );
    expect(load.acknowledged.filter((n) => !stored.has(n))).toEqual([]);
    // Every watch saw every create once, each writer's in order.
    const want = new Set(load.acknowledged);
    for (let t = 0; t < 100 && watches.some((w) => w.added.length < want.size); t++) await sleep(50);
    for (const w of watches) {
      w.close();
      expect(w.errors).toEqual([]);
      expect(new Set(w.added)).toEqual(want);
      expect(w.added).toHaveLength(want.size);
      for (let k = 0; k < WRITERS; k++) {
        const seq = w.added.filter((n) => n.startsWith(`w${k}-`)).map((n) => Number(n.split('-')[1]));
        expect(seq).toEqual([...seq].sort((a, b) => a - b));
      }
    }
  }, 60_000);
});
