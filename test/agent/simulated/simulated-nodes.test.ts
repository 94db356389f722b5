/**
 * Simulated nodes against a real in-process Capstan, through the client library: registration
 * and leases, the pod lifecycle a kubelet would report, deletion with the grace period, declared
 * outcomes, a node told to stop heartbeating or to turn NotReady, bad annotations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../../src/api/types/coordination-v1.js';
import type { Node, Pod } from '../../../src/api/types/core-v1.js';
import type { Event } from '../../../src/api/types/events-v1.js';
import {
  Client,
  EVENTS,
  LEASES,
  loadKubeconfig,
  NAMESPACES,
  NODES,
  PODS,
  type ClientConfig,
} from '../../../src/client/index.js';
import { parseCidr, cidrContains } from '../../../src/agent/simulated/ip-pool.js';
import { startSimulatedNodes, type SimulatedNodes } from '../../../src/agent/simulated/simulator.js';
import { kubectlOutput, startTestServer, type TestServer } from '../../support/server.js';

const NS = 'sim-test';
const RENEW_MS = 300;

let server: TestServer;
let config: ClientConfig;
let client: Client;
let sim: SimulatedNodes;
const logs: string[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: Error | undefined;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err instanceof Error ? err : new Error(JSON.stringify(err));
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last === undefined ? '' : `: ${last.message}`}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createPod(
  name: string,
  node: string,
  extra: { annotations?: Record<string, string>; spec?: Partial<Pod['spec']> } = {},
): Promise<Pod> {
  return client.resource<Pod>(PODS).create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
    },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra.spec },
  });
}

async function podWhen(name: string, ok: (p: Pod) => boolean, timeoutMs?: number): Promise<Pod> {
  return until(
    `pod ${name}`,
    async () => {
      const p = await client.resource<Pod>(PODS).get(name, { namespace: NS });
      return ok(p) ? p : undefined;
    },
    timeoutMs,
  );
}

async function renewTime(node: string): Promise<string | undefined> {
  const lease = await client.resource<Lease>(LEASES).get(node, { namespace: 'kube-node-lease' });
  return lease.spec?.renewTime;
}

beforeAll(async () => {
  server = await startTestServer();
  config = { ...loadKubeconfig(server.kubeconfigPath), qps: -1 };
  client = new Client(config);
  await client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  sim = await startSimulatedNodes(
    config,
    { nodes: 4, nodeNamePrefix: 'sim-', leaseRenewIntervalMs: RENEW_MS, labels: { 'example.com/pool': 'a' } },
    undefined,
    { log: (line) => logs.push(line) },
  );
  await sim.registered;
}, 60_000);

afterAll(async () => {
  await sim?.stop();
  await client?.close();
  await server?.close();
});

describe('simulated nodes', () => {
  it('register Ready, labelled, addressed, with renewing Leases', async () => {
    expect(sim.nodeNames).toEqual(['sim-0', 'sim-1', 'sim-2', 'sim-3']);
    const node = await until('sim-1 Ready', async () => {
      const n = await client.resource<Node>(NODES).get('sim-1');
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
        ? n
        : undefined;
    });
    expect(node.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': 'sim-1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'node.capstan.dev/simulated': 'true',
      'example.com/pool': 'a',
    });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('KubeletReady');
    for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(node.status?.conditions?.find((c) => c.type === t)?.status).toBe('False');
    }
    expect(node.status?.addresses).toContainEqual({ type: 'InternalIP', address: '198.18.0.2' });
    expect(node.status?.allocatable).toMatchObject({ pods: '110', cpu: '32' });
    expect(node.status?.nodeInfo?.kubeletVersion).toBe('v1.33.0');

    const lease = await client.resource<Lease>(LEASES).get('sim-1', { namespace: 'kube-node-lease' });
    expect(lease.spec).toMatchObject({ holderIdentity: 'sim-1', leaseDurationSeconds: 40 });
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: 'sim-1',
      uid: node.metadata.uid,
    });
    const first = lease.spec?.renewTime;
    await until('a renewal', async () => ((await renewTime('sim-1')) !== first ? true : undefined));
  });

  it('runs a bound pod: Running, Ready, an IP of the node podCIDR', async () => {
    await client
      .resource<Node>(NODES)
      .patch('sim-0', { spec: { podCIDR: '10.244.7.0/24', podCIDRs: ['10.244.7.0/24'] } }, { type: 'merge' });
    await new Promise((r) => setTimeout(r, 300)); // the informer sees the CIDR
    await createPod('web', 'sim-0', {
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
    });
    const p = await podWhen('web', (x) => x.status?.phase === 'Running');
    expect(cidrContains(parseCidr('10.244.7.0/24')!, p.status?.podIP ?? '')).toBe(true);
    expect(p.status?.podIPs).toEqual([{ ip: p.status?.podIP }]);
    expect(p.status?.hostIP).toBe('198.18.0.1');
    expect(p.status?.startTime).toBeDefined();
    expect(p.status?.qosClass).toBe('Burstable');
    const types: Record<string, string | undefined> = Object.fromEntries(
      (p.status?.conditions ?? []).map((c) => [c.type ?? '', c.status]),
    );
    expect(types).toMatchObject({
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'True',
      ContainersReady: 'True',
      PodScheduled: 'True',
    });
    expect(p.status?.containerStatuses?.[0]).toMatchObject({
      name: 'app',
      ready: true,
      started: true,
      restartCount: 0,
      image: 'docker.io/library/nginx:1.27',
    });
    expect(p.status?.containerStatuses?.[0]?.containerID).toMatch(/^sim:\/\//);
    expect(p.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBeDefined();
  });

  it('runs a kubectl debug container at once, never ready, and stops it with the pod', async () => {
    await createPod('debugged', 'sim-1', {
      annotations: { 'sim.capstan.dev/complete-after': '3s' },
      spec: { restartPolicy: 'Never' },
    });
    await podWhen('debugged', (x) => x.status?.phase === 'Running');
    await kubectlOutput(
      '1.33',
      ['debug', 'debugged', '-n', NS, '--image=busybox:1.36', '-c', 'dbg', '--attach=false'],
      server.kubeconfigPath,
    );
    const p = await podWhen('debugged', (x) => (x.status?.ephemeralContainerStatuses ?? []).length === 1);
    const s = p.status?.ephemeralContainerStatuses?.[0];
    expect(s).toMatchObject({
      name: 'dbg',
      ready: false,
      restartCount: 0,
      image: 'docker.io/library/busybox:1.36',
    });
    expect(s?.state?.running?.startedAt).toBeDefined();
    expect(s?.started).toBeUndefined();
    expect(p.status?.phase).toBe('Running');
    expect(p.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const done = await podWhen('debugged', (x) => x.status?.phase === 'Succeeded', 20_000);
    expect(done.status?.ephemeralContainerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  });

  it('reports container resources and applies an in-place resize at once', async () => {
    const resources = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } };
    await createPod('resized', 'sim-1', {
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources }] },
    });
    const running = await podWhen('resized', (x) => x.status?.phase === 'Running');
    expect(running.status?.containerStatuses?.[0]?.resources).toEqual(resources);
    await kubectlOutput(
      '1.33',
      [
        'patch',
        'pod',
        'resized',
        '-n',
        NS,
        '--subresource=resize',
        '-p',
        JSON.stringify({ spec: { containers: [{ name: 'app', resources: { limits: { cpu: '300m' } } }] } }),
      ],
      server.kubeconfigPath,
    );
    const p = await podWhen(
      'resized',
      (x) => x.status?.containerStatuses?.[0]?.resources?.limits?.['cpu'] === '300m',
    );
    expect(p.status?.containerStatuses?.[0]).toMatchObject({
      restartCount: 0,
      resources: { requests: resources.requests, limits: { cpu: '300m', memory: '64Mi' } },
    });
  });

  it('gives pods of one node distinct IPs and a fallback range without a podCIDR', async () => {
    await Promise.all(['a', 'b', 'c'].map((s) => createPod(`many-${s}`, 'sim-2')));
    const ips = await Promise.all(
      ['a', 'b', 'c'].map(
        async (s) => (await podWhen(`many-${s}`, (x) => x.status?.phase === 'Running')).status?.podIP,
      ),
    );
    expect(new Set(ips).size).toBe(3);
    for (const ip of ips) expect(ip).toMatch(/^100\.64\.2\./);
  });

  it('honours the grace period on kubectl delete', async () => {
    // Containers that ignore SIGTERM are killed when the grace period ends.
    await createPod('slow', 'sim-1', {
      annotations: { 'sim.capstan.dev/stop-after': '1h' },
      spec: { terminationGracePeriodSeconds: 2 },
    });
    await podWhen('slow', (x) => x.status?.phase === 'Running');
    const watch = client.resource<Pod>(PODS).watch({ namespace: NS, fieldSelector: 'metadata.name=slow' });
    const seen: Pod[] = [];
    const watched = (async () => {
      for await (const ev of watch) {
        seen.push(ev.object);
        if (ev.type === 'DELETED') break;
      }
    })();
    const started = Date.now();
    await kubectlOutput('1.33', ['delete', 'pod', 'slow', '-n', NS], server.kubeconfigPath);
    const took = Date.now() - started;
    await watched;
    watch.close();
    // The deletionTimestamp has seconds precision: at least a second of the grace period passed.
    expect(took).toBeGreaterThanOrEqual(1000);
    const last = seen.at(-2);
    expect(last?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 137,
      reason: 'Error',
    });
    expect(last?.status?.phase).toBe('Failed');

    // Containers that stop at once: deleted long before the default 30 s grace period.
    await createPod('quick', 'sim-1');
    await podWhen('quick', (x) => x.status?.phase === 'Running');
    await kubectlOutput('1.33', ['delete', 'pod', 'quick', '-n', NS], server.kubeconfigPath, 20_000);
    await expect(client.resource<Pod>(PODS).get('quick', { namespace: NS })).rejects.toMatchObject({
      code: 404,
    });
  }, 40_000);

  it('finishes its part of a deletion and leaves a pod to its finalizers without looping', async () => {
    await createPod('held', 'sim-1');
    const running = await podWhen('held', (x) => x.status?.phase === 'Running');
    await client
      .resource<Pod>(PODS)
      .patch('held', { metadata: { finalizers: ['example.com/hold'] } }, { type: 'merge', namespace: NS });
    await kubectlOutput('1.33', ['delete', 'pod', 'held', '-n', NS, '--wait=false'], server.kubeconfigPath);
    const held = await podWhen(
      'held',
      (x) => x.metadata.deletionGracePeriodSeconds === 0 && x.status?.phase !== 'Running',
    );
    expect(held.status?.phase).toBe('Succeeded'); // stopped on SIGTERM with exit 0
    expect(held.metadata.uid).toBe(running.metadata.uid);
    await new Promise((r) => setTimeout(r, 1000));
    const later = await client.resource<Pod>(PODS).get('held', { namespace: NS });
    expect(later.metadata.resourceVersion).toBe(held.metadata.resourceVersion);
    await client
      .resource<Pod>(PODS)
      .patch('held', { metadata: { finalizers: null } }, { type: 'merge', namespace: NS });
    await until('held gone', async () => {
      try {
        await client.resource<Pod>(PODS).get('held', { namespace: NS });
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
  });

  it('ends pods that declare an outcome with their exit codes', async () => {
    await createPod('ok', 'sim-3', {
      annotations: { 'sim.capstan.dev/complete-after': '1s' },
      spec: { restartPolicy: 'Never' },
    });
    await createPod('bad', 'sim-3', {
      annotations: { 'sim.capstan.dev/complete-after': '500ms', 'sim.capstan.dev/exit-code': '3' },
      spec: { restartPolicy: 'Never' },
    });
    await createPod('flaky', 'sim-3', {
      annotations: { 'sim.capstan.dev/complete-after': '1s', 'sim.capstan.dev/exit-code': '1' },
      spec: { restartPolicy: 'OnFailure' },
    });
    const ok = await podWhen('ok', (x) => x.status?.phase === 'Succeeded');
    expect(ok.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    expect(ok.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PodCompleted',
    });
    const bad = await podWhen('bad', (x) => x.status?.phase === 'Failed');
    expect(bad.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 3,
      reason: 'Error',
    });
    const flaky = await podWhen('flaky', (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    expect(flaky.status?.phase).toBe('Running');
    expect(flaky.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
  });

  it('warns about an unreadable outcome annotation and runs the pod anyway', async () => {
    await createPod('typo', 'sim-3', { annotations: { 'sim.capstan.dev/complete-after': 'two seconds' } });
    await podWhen('typo', (x) => x.status?.phase === 'Running');
    const ev = await until('a FailedSimulation event', async () => {
      const list = await client.resource<Event>(EVENTS).list({ namespace: NS });
      return list.items.find((e) => e.regarding?.name === 'typo' && e.reason === 'FailedSimulation');
    });
    expect(ev.type).toBe('Warning');
    expect(ev.note).toContain('sim.capstan.dev/complete-after');
  });

  it('stops renewing the Lease of a node told to stop heartbeating, and resumes', async () => {
    sim.setHeartbeat('sim-2', false);
    await new Promise((r) => setTimeout(r, RENEW_MS * 2)); // a renewal in flight lands
    const frozen = await renewTime('sim-2');
    await new Promise((r) => setTimeout(r, RENEW_MS * 5));
    expect(await renewTime('sim-2')).toBe(frozen);
    sim.setHeartbeat('sim-2', undefined);
    await until('renewals again', async () => ((await renewTime('sim-2')) !== frozen ? true : undefined));

    // The same through the Node's annotation, as a user would.
    await kubectlOutput(
      '1.33',
      ['annotate', 'node', 'sim-3', 'sim.capstan.dev/heartbeat=stopped'],
      server.kubeconfigPath,
    );
    await new Promise((r) => setTimeout(r, RENEW_MS * 2));
    const stopped = await renewTime('sim-3');
    await new Promise((r) => setTimeout(r, RENEW_MS * 5));
    expect(await renewTime('sim-3')).toBe(stopped);
    await kubectlOutput(
      '1.33',
      ['annotate', 'node', 'sim-3', 'sim.capstan.dev/heartbeat-'],
      server.kubeconfigPath,
    );
    await until('sim-3 renewals again', async () =>
      (await renewTime('sim-3')) !== stopped ? true : undefined,
    );
  });

  it('turns a node NotReady and Ready again', async () => {
    sim.setReady('sim-1', false);
    const notReady = await until('sim-1 NotReady', async () => {
      const n = await client.resource<Node>(NODES).get('sim-1');
      const c = n.status?.conditions?.find((x) => x.type === 'Ready');
      return c?.status === 'False' ? c : undefined;
    });
    expect(notReady.reason).toBe('KubeletNotReady');
    sim.setReady('sim-1', undefined);
    await until('sim-1 Ready', async () => {
      const n = await client.resource<Node>(NODES).get('sim-1');
      return n.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True' ? true : undefined;
    });
  });
});

describe('a restarted agent', () => {
  it('takes its nodes, leases and running pods back without new IPs', async () => {
    const before = await client.resource<Pod>(PODS).get('web', { namespace: NS });
    await sim.stop();
    sim = await startSimulatedNodes(
      config,
      { nodes: 4, nodeNamePrefix: 'sim-', leaseRenewIntervalMs: RENEW_MS },
      undefined,
      { log: (line) => logs.push(line) },
    );
    await sim.registered;
    const renewed = await renewTime('sim-0');
    await until('a renewal by the new agent', async () =>
      (await renewTime('sim-0')) !== renewed ? true : undefined,
    );
    await createPod('web-2', 'sim-0');
    const next = await podWhen('web-2', (x) => x.status?.phase === 'Running');
    const after = await client.resource<Pod>(PODS).get('web', { namespace: NS });
    expect(after.status?.podIP).toBe(before.status?.podIP);
    expect(after.status?.containerStatuses?.[0]?.containerID).toBe(
      before.status?.containerStatuses?.[0]?.containerID,
    );
    expect(next.status?.podIP).not.toBe(before.status?.podIP);
    expect(cidrContains(parseCidr('10.244.7.0/24')!, next.status?.podIP ?? '')).toBe(true);
  });
});

describe('the agent log', () => {
  it('has no failed writes', () => {
    expect(logs.filter((l) => /failed|stopped:/.test(l) && !l.includes('FailedSimulation'))).toEqual([]);
  });
});

describe('many simulated nodes', () => {
  it('registers 200 nodes', async () => {
    const many = await startSimulatedNodes(config, { nodes: 200, nodeNamePrefix: 'bulk-' }, undefined, {
      log: (line) => logs.push(line),
    });
    try {
      await many.registered;
      const list = await client
        .resource<Node>(NODES)
        .list({ labelSelector: 'node.capstan.dev/simulated=true' });
      const bulk = list.items.filter((n) => n.metadata.name?.startsWith('bulk-'));
      expect(bulk).toHaveLength(200);
      const ready = bulk.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      expect(ready).toHaveLength(200);
      const leases = await client.resource<Lease>(LEASES).list({ namespace: 'kube-node-lease' });
      expect(leases.items.filter((l) => l.metadata.name?.startsWith('bulk-'))).toHaveLength(200);
    } finally {
      await many.stop();
    }
  }, 120_000);
});
