/**
 * ClusterIP and NodePort allocation survive crashes: a `capstan server` child process (the built
 * CLI, embedded LevelDB store) gets 100+ concurrent NodePort Service creates across a SIGKILL in
 * the middle of a burst and two restarts. Every Service that exists at the end has a ClusterIP and
 * NodePorts no other Service has, and after the start-time repair the IPAddress objects are
 * exactly the Services' IPs (nothing a killed create left behind survives).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';

const MAIN = resolve(import.meta.dirname, '../../dist/src/cli/main.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-svc-crash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
  readonly kc: k8s.KubeConfig;
}

/** Starts the server and waits until it printed its kubeconfig path. */
async function start(): Promise<Child> {
  const proc = spawn(
    process.execPath,
    [
      MAIN,
      'server',
      `--data-dir=${join(dir, 'data')}`,
      `--cert-dir=${join(dir, 'pki')}`,
      '--secure-port=0',
      '--bind-address=127.0.0.1',
      '--service-cluster-ip-range=10.100.0.0/24',
      '--service-node-port-range=30000-30999',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  proc.stderr?.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  const path = await new Promise<string>((done, fail) => {
    const check = (): void => {
      const m = /admin kubeconfig: (\S+)/.exec(out);
      if (m?.[1] !== undefined) done(m[1]);
    };
    proc.stdout?.on('data', check);
    void exited.then(() => fail(new Error(`server exited before it was ready: ${err}`)));
  });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return { proc, exited, kc };
}

function nodePortService(name: string): k8s.V1Service {
  return {
    metadata: { name },
    spec: {
      type: 'NodePort',
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 81 },
      ],
    },
  };
}

/** Creates `names` concurrently; resolves with how many succeeded (failures tolerated). */
async function burst(kc: k8s.KubeConfig, names: readonly string[]): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const results = await Promise.allSettled(
    names.map((name) => core.createNamespacedService({ namespace: 'default', body: nodePortService(name) })),
  );
  return results.filter((r) => r.status === 'fulfilled').length;
}

const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

it('100 concurrent Service creates across a SIGKILL and two restarts: ClusterIPs and NodePorts unique', async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  // Run 1: one full burst, then a burst cut short by SIGKILL.
  const first = await start();
  expect(await burst(first.kc, names('a', 40))).toBe(40);
  // The kill lands once the first create of this burst is answered: the others are in flight.
  const core1 = first.kc.makeApiClient(k8s.CoreV1Api);
  let answered!: () => void;
  const firstAnswer = new Promise<void>((r) => (answered = r));
  const cut = Promise.allSettled(
    names('b', 40).map((name) =>
      core1.createNamespacedService({ namespace: 'default', body: nodePortService(name) }).finally(answered),
    ),
  );
  await firstAnswer;
  first.proc.kill('SIGKILL');
  await first.exited;
  const outcomes = await cut;
  expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
  // Run 2 (first restart): repair, then a burst; stopped gracefully.
  const second = await start();
  expect(await burst(second.kc, names('c', 40))).toBe(40);
  second.proc.kill('SIGTERM');
  await second.exited;
  // Run 3 (second restart): a last burst, then the checks.
  const third = await start();
  try {
    expect(await burst(third.kc, names('d', 30))).toBe(30);
    const core = third.kc.makeApiClient(k8s.CoreV1Api);
    const services = (await core.listServiceForAllNamespaces()).items;
    const created = services.filter((s) => s.metadata?.name !== 'kubernetes');
    expect(created.length).toBeGreaterThanOrEqual(110);
    const ips = services.flatMap((s) => s.spec?.clusterIPs ?? []);
    expect(ips.every((ip) => ip.startsWith('10.100.0.'))).toBe(true);
    expect(new Set(ips).size).toBe(ips.length);
    const ports = created.flatMap((s) => (s.spec?.ports ?? []).map((p) => p.nodePort ?? 0));
    expect(ports.every((p) => p >= 30000 && p <= 30999)).toBe(true);
    expect(new Set(ports).size).toBe(ports.length);
    const addresses = (await third.kc.makeApiClient(k8s.NetworkingV1Api).listIPAddress()).items;
    expect(addresses.map((a) => a.metadata?.name).sort()).toEqual([...ips].sort());
    for (const a of addresses) {
      const owner = services.find((s) => (s.spec?.clusterIPs ?? []).includes(a.metadata?.name ?? ''));
      expect(a.spec?.parentRef.name).toBe(owner?.metadata?.name);
    }
  } finally {
    third.proc.kill('SIGTERM');
    await third.exited;
  }
}, 120_000);
