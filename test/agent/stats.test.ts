/**
 * The agent's monitoring endpoints on real containers (containerd, kubectl 1.33): the Summary
 * API with the node's, pods' and containers' CPU and memory (a CPU-bound container limited to
 * 100m shows a rate near its limit, an idle one near zero), `/metrics/resource` with kube's
 * names, labels and timestamps, `/metrics/probes` counting a readiness probe, `/metrics`,
 * `/configz` and `/spec`, directly and through the server's `nodes/proxy`.
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { requireContainerd } from '../support/containerd.js';

const enabled = requireContainerd();
const NODE = 'stats-node';

/** GETs a path of the agent's HTTPS API (anonymous; the test agent allows everything). */
function agentGet(port: number, path: string): Promise<{ code: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          code: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface SummaryJson {
  node: {
    nodeName: string;
    cpu?: { time: string; usageNanoCores?: number; usageCoreNanoSeconds?: number };
    memory?: { workingSetBytes?: number; availableBytes?: number; usageBytes?: number };
    fs?: { capacityBytes?: number };
    systemContainers?: { name: string }[];
  };
  pods: {
    podRef: { name: string; namespace: string; uid: string };
    cpu?: { usageNanoCores?: number; usageCoreNanoSeconds?: number };
    memory?: { workingSetBytes?: number };
    containers: {
      name: string;
      startTime: string;
      cpu?: { usageNanoCores?: number; usageCoreNanoSeconds?: number };
      memory?: { workingSetBytes?: number };
    }[];
  }[];
}

describe.runIf(enabled)('agent monitoring endpoints on containerd', () => {
  let node: AgentNode;

  beforeAll(async () => {
    node = await startAgentNode({ node: NODE, podCIDR: '10.244.180.0/24' });
    await node.applyPod('burn', {
      command: ['sh', '-c', 'while :; do :; done'],
      resources: { limits: { cpu: '100m', memory: '32Mi' } },
    });
    await node.applyPod('idle', {
      command: ['sleep', '3600'],
      readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
    });
    await node.running('burn', 'idle');
  }, 120_000);

  afterAll(async () => {
    await node?.stop();
  }, 60_000);

  it('serves the Summary API with node, pod and container CPU and memory', async () => {
    const first = await agentGet(node.agent.port, '/stats/summary');
    expect(first.code).toBe(200);
    expect(first.type).toContain('application/json');
    await new Promise((r) => setTimeout(r, 2_000));
    const s = JSON.parse((await agentGet(node.agent.port, '/stats/summary')).body) as SummaryJson;
    expect(s.node.nodeName).toBe(NODE);
    expect(s.node.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(s.node.cpu?.usageNanoCores).toBeGreaterThan(0);
    expect(s.node.memory?.workingSetBytes).toBeGreaterThan(0);
    expect(s.node.fs?.capacityBytes).toBeGreaterThan(0);
    expect(s.node.systemContainers?.map((c) => c.name)).toEqual(['kubelet', 'pods']);
    expect(s.node.cpu?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const burn = s.pods.find((p) => p.podRef.name === 'burn');
    const idle = s.pods.find((p) => p.podRef.name === 'idle');
    expect(burn?.podRef.namespace).toBe('default');
    expect(burn?.containers.map((c) => c.name)).toEqual(['c']);
    const c = burn?.containers[0];
    expect(c?.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(c?.memory?.workingSetBytes).toBeGreaterThan(0);
    // Limited to 100m: the rate is near 0.1 core (never above it by much), well above idle's.
    expect(burn?.cpu?.usageNanoCores).toBeGreaterThan(30_000_000);
    expect(burn?.cpu?.usageNanoCores).toBeLessThan(150_000_000);
    expect(c?.cpu?.usageNanoCores).toBeGreaterThan(30_000_000);
    expect(idle?.cpu?.usageNanoCores ?? 0).toBeLessThan(20_000_000);
    expect(idle?.memory?.workingSetBytes).toBeGreaterThan(0);
  }, 30_000);

  it('serves /stats/summary?only_cpu_and_memory=true without the filesystem and network', async () => {
    const s = JSON.parse(
      (await agentGet(node.agent.port, '/stats/summary?only_cpu_and_memory=true')).body,
    ) as SummaryJson;
    expect(s.node.cpu).toBeDefined();
    expect(s.node.fs).toBeUndefined();
  });

  it("serves /metrics/resource with kube's names, labels and timestamps", async () => {
    const r = await agentGet(node.agent.port, '/metrics/resource');
    expect(r.code).toBe(200);
    expect(r.type).toContain('text/plain; version=0.0.4');
    expect(r.body).toContain(
      '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
    );
    expect(r.body).toContain('# TYPE container_cpu_usage_seconds_total counter');
    expect(r.body).toMatch(/^node_memory_working_set_bytes \S+ \d{13}$/m);
    expect(r.body).toMatch(
      /^container_cpu_usage_seconds_total\{container="c",namespace="default",pod="burn"\} \S+ \d{13}$/m,
    );
    expect(r.body).toMatch(
      /^container_memory_working_set_bytes\{container="c",namespace="default",pod="idle"\} \S+ \d{13}$/m,
    );
    expect(r.body).toMatch(
      /^container_start_time_seconds\{container="c",namespace="default",pod="burn"\} \S+$/m,
    );
    expect(r.body).toMatch(/^pod_cpu_usage_seconds_total\{namespace="default",pod="burn"\} \S+ \d{13}$/m);
    expect(r.body).toMatch(/^resource_scrape_error 0$/m);
    expect(r.body).toMatch(/^scrape_error 0$/m);
  });

  it('counts probe runs in /metrics/probes and pods in /metrics', async () => {
    const probes = (await agentGet(node.agent.port, '/metrics/probes')).body;
    const m =
      /^prober_probe_total\{container="c",namespace="default",pod="idle",pod_uid="[^"]+",probe_type="Readiness",result="successful"\} (\d+)$/m.exec(
        probes,
      );
    expect(Number(m?.[1])).toBeGreaterThan(0);
    const metrics = (await agentGet(node.agent.port, '/metrics')).body;
    expect(metrics).toMatch(/^kubelet_running_pods 2$/m);
    expect(metrics).toMatch(/^kubelet_running_containers\{container_state="running"\} 2$/m);
    expect(metrics).toContain(`kubelet_node_name{node="${NODE}"} 1`);
  });

  it('serves /configz and /spec, also through nodes/proxy', async () => {
    const configz = JSON.parse(await node.kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/configz`)) as {
      kubeletconfig: { maxPods: number; authorization: { mode: string } };
    };
    expect(configz.kubeletconfig.maxPods).toBe(110);
    expect(configz.kubeletconfig.authorization.mode).toBe('AlwaysAllow');
    const spec = JSON.parse(await node.kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/spec/`)) as {
      num_cores: number;
      memory_capacity: number;
    };
    expect(spec.num_cores).toBeGreaterThan(0);
    expect(spec.memory_capacity).toBeGreaterThan(0);
    const summary = JSON.parse(
      await node.kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`),
    ) as SummaryJson;
    expect(summary.pods.map((p) => p.podRef.name).sort()).toEqual(['burn', 'idle']);
  });

  it('answers kubectl top node and top pod through metrics.k8s.io, without metrics-server', async () => {
    const groups = await node.kubectl('api-versions');
    expect(groups.split('\n')).toContain('metrics.k8s.io/v1beta1');
    const resources = await node.kubectl('api-resources', '--api-group=metrics.k8s.io', '-o', 'name');
    expect(resources.trim().split('\n').sort()).toEqual(['nodes.metrics.k8s.io', 'pods.metrics.k8s.io']);
    const top = await node.kubectl('top', 'node');
    const row = top.split('\n').find((l) => l.startsWith(NODE));
    expect(top).toMatch(/^NAME\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)/);
    expect(row).toMatch(/^stats-node\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/);
    const pods = await node.kubectl('top', 'pod', '--containers');
    const burn = /^burn\s+c\s+(\d+)m\s+(\d+)Mi/m.exec(pods);
    expect(Number(burn?.[1])).toBeGreaterThan(30);
    expect(Number(burn?.[1])).toBeLessThan(150);
    expect(pods).toMatch(/^idle\s+c\s+\d+m\s+\d+Mi/m);
    const one = JSON.parse(
      await node.kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burn'),
    ) as {
      kind: string;
      window: string;
      timestamp: string;
      containers: { name: string; usage: { cpu: string; memory: string } }[];
    };
    expect(one.kind).toBe('PodMetrics');
    expect(one.window).toMatch(/^\d+(\.\d+)?m?s$/);
    expect(one.timestamp).toMatch(/Z$/);
    expect(one.containers.map((c) => c.name)).toEqual(['c']);
    const sel = JSON.parse(
      await node.kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dnone'),
    ) as { kind: string; items: unknown[] };
    expect(sel).toMatchObject({ kind: 'PodMetricsList', items: [] });
    const missing = await node.kubectl('top', 'pod', 'nope').then(
      () => 'ok',
      (err: Error) => err.message,
    );
    expect(missing).toContain('not found');
  }, 60_000);
});
