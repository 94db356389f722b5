/**
 * The README's first command, as a new user runs it: `bash tools/run.sh --simulated-nodes=1` starts
 * a whole single-node cluster (here on its own port and directories) with a simulated node (the
 * real node's path is real-node.test.ts), kubectl 1.33 creates a Deployment that rolls out on it,
 * a Service gets its endpoints, and a second run on the same state keeps the pods running. Also:
 * where containerd is missing, the start-up line says so with the command that installs it.
 * Needs the build (`npm run build`, as tools/test.sh does).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedBecause, splitClusterArgs } from '../../src/cluster/command.js';
import { kubectlOutput, runKubectl } from '../support/kubectl.js';

const root = join(import.meta.dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

interface Cluster {
  readonly child: ChildProcess;
  readonly output: string[];
}

/** Starts `bash tools/run.sh` and waits for its node line. */
async function runCluster(dataDir: string, port: number): Promise<Cluster> {
  const child = spawn(
    'bash',
    [
      'tools/run.sh',
      '--simulated-nodes=1',
      `--secure-port=${port}`,
      `--data-dir=${dataDir}`,
      `--cert-dir=${join(dataDir, 'pki')}`,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: string[] = [];
  const collect = (chunk: Buffer): void => void output.push(...chunk.toString().split('\n'));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const deadline = Date.now() + 120_000;
  while (!output.some((l) => l.startsWith('node: '))) {
    if (child.exitCode !== null) throw new Error(`run.sh exited ${child.exitCode}:\n${output.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`no node line in 120 s:\n${output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, output };
}

async function stop(cluster: Cluster | undefined): Promise<number | null> {
  if (cluster === undefined || cluster.child.exitCode !== null) return cluster?.child.exitCode ?? null;
  cluster.child.kill('SIGTERM');
  return new Promise((resolve) => cluster.child.once('exit', (code) => resolve(code)));
}

describe('bash tools/run.sh: one command, one cluster', () => {
  let dataDir: string;
  let port: number;
  let cluster: Cluster | undefined;
  let kubeconfig: string;
  const k = (...args: string[]) => runKubectl('1.33', args, kubeconfig, 100_000);

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist', 'bundle', 'capstan.js')))
      throw new Error('build first: npm run build');
    // run.sh installs the packages when the lock file is newer than them: never under a running suite.
    const lock = statSync(join(root, 'package-lock.json')).mtimeMs;
    if (statSync(join(root, 'node_modules', '.package-lock.json')).mtimeMs < lock)
      throw new Error('the packages are older than package-lock.json: run npm ci first');
    dataDir = await mkdtemp(join(tmpdir(), 'capstan-cluster-'));
    port = await freePort();
    kubeconfig = join(dataDir, 'admin.kubeconfig');
    cluster = await runCluster(dataDir, port);
  }, 180_000);

  afterAll(async () => {
    await stop(cluster);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('says the node is simulated and how to get real containers', () => {
    const line = cluster!.output.find((l) => l.startsWith('node: ')) ?? '';
    expect(line).toMatch(/^node: capstan-node-0 SIMULATED \(asked for with --simulated-nodes=1\)/);
    const args = splitClusterArgs([]);
    expect(simulatedBecause(args, [])).toBeUndefined();
    expect(simulatedBecause(args, ['/usr/bin/containerd'])).toMatch(
      /containerd is not installed: missing \/usr\/bin\/containerd\. For real containers: apt-get install containerd runc containernetworking-plugins/,
    );
    expect(cluster!.output.some((l) => l.startsWith(`admin kubeconfig: ${kubeconfig}`))).toBe(true);
  });

  it('rolls out a Deployment and gives its Service endpoints', async () => {
    expect((await k('get', 'nodes')).stdout).toMatch(/capstan-node-0\s+Ready/);
    expect((await k('create', 'deployment', 'web', '--image=busybox', '--replicas=2')).code).toBe(0);
    const rollout = await k('rollout', 'status', 'deployment/web', '--timeout=90s');
    expect(rollout.stdout).toMatch(/successfully rolled out/);
    const pods = await kubectlOutput(
      '1.33',
      [
        'get',
        'pods',
        '-l',
        'app=web',
        '-o',
        'jsonpath={range .items[*]}{.spec.nodeName} {.status.phase}{"\\n"}{end}',
      ],
      kubeconfig,
    );
    expect(pods.trim().split('\n')).toEqual(['capstan-node-0 Running', 'capstan-node-0 Running']);
    expect((await k('expose', 'deployment', 'web', '--port=80')).code).toBe(0);
    await expect
      .poll(
        async () =>
          (
            await k(
              'get',
              'endpointslices',
              '-l',
              'kubernetes.io/service-name=web',
              '-o',
              'jsonpath={.items[*].endpoints[*].addresses[0]}',
            )
          ).stdout
            .trim()
            .split(/\s+/)
            .filter((s) => s !== '').length,
        { timeout: 30_000, interval: 500 },
      )
      .toBe(2);
  }, 150_000);

  it('has a default local-path StorageClass whose claims the provisioner binds once a pod uses them', async () => {
    expect((await k('get', 'storageclass')).stdout).toMatch(
      /local-path \(default\)\s+capstan\.dev\/local-path/,
    );
    const manifest = join(dirname(kubeconfig), 'claim.yaml');
    await writeFile(
      manifest,
      [
        'apiVersion: v1',
        'kind: PersistentVolumeClaim',
        'metadata: {name: data}',
        'spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}',
        '---',
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: uses-data}',
        'spec:',
        '  containers: [{name: c, image: busybox, volumeMounts: [{name: d, mountPath: /data}]}]',
        '  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]',
        '',
      ].join('\n'),
    );
    expect((await k('apply', '-f', manifest)).code).toBe(0);
    await expect
      .poll(async () => (await k('get', 'pvc', 'data', '-o', 'jsonpath={.status.phase}')).stdout, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe('Bound');
  }, 90_000);

  it('lets whoever may view pods read their metrics (system:aggregated-metrics-reader into view)', async () => {
    const canI = async (): Promise<string> =>
      (await k('auth', 'can-i', 'list', 'pods.metrics.k8s.io', '--as=jane', '-n', 'default')).stdout.trim();
    expect(await canI()).toBe('no');
    expect((await k('create', 'rolebinding', 'jane-view', '--clusterrole=view', '--user=jane')).code).toBe(0);
    await expect.poll(canI, { timeout: 30_000, interval: 500 }).toBe('yes');
    const role = await k(
      'get',
      'clusterrole',
      'view',
      '-o',
      'jsonpath={.rules[?(@.apiGroups[0]=="metrics.k8s.io")].verbs}',
    );
    expect(role.stdout).toContain('list');
  }, 60_000);

  it('stops on SIGTERM and, run again on the same state, keeps the pods running', async () => {
    const before = (
      await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[*].metadata.uid}')
    ).stdout.trim();
    expect(await stop(cluster)).toBe(0);
    cluster = await runCluster(dataDir, port);
    await expect
      .poll(
        async () =>
          (await k('get', 'deployment', 'web', '-o', 'jsonpath={.status.availableReplicas}')).stdout.trim(),
        {
          timeout: 60_000,
          interval: 500,
        },
      )
      .toBe('2');
    const after = (
      await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[*].metadata.uid}')
    ).stdout.trim();
    expect(after).toBe(before);
  }, 180_000);
});
