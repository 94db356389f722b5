/**
 * Pod routes between two nodes with real pods: each node is a network namespace this test
 * creates, with a private containerd running inside it (started through a wrapper that enters
 * the namespace, so the CNI plugins, the pod bridge and the pods' veths live there), and a
 * `capstan agent` (in-process, configured from its flags with `--run-pod-routes`, `--node-ip`,
 * `--pod-cidr`) whose route syncer's `ip` runs in that namespace. The nodes share one veth link
 * (192.168.79.0/24). A busybox pod on each node serves HTTP; from inside each pod's network
 * namespace (nsenter into its container) the other node's pod answers by its pod IP; once an
 * agent stops (a test agent removes its routes), its node's pods no longer reach the other's.
 * The wrapper enters only the network namespace (nsenter --net): `ip netns exec` would also
 * remount /sys, hiding the cgroup mount runc needs.
 * Needs root, containerd, runc, busybox-static, the CNI plugins, `ip` and `nsenter`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkNamespaces } from '../support/netns.js';

// containerd starts through this wrapper (src/cluster/containerd.ts reads CAPSTAN_CONTAINERD when
// loaded, hence the dynamic imports below); the namespace is the one named at each start.
const wrapperDir = mkdtempSync(join(tmpdir(), 'capstan-ctrd-netns-'));
const WRAPPER = join(wrapperDir, 'containerd');
writeFileSync(
  WRAPPER,
  '#!/bin/sh\nexec nsenter --net=/run/netns/$CAPSTAN_TEST_NODE_NETNS /usr/bin/containerd "$@"\n',
  {
    mode: 0o755,
  },
);
process.env['CAPSTAN_CONTAINERD'] = WRAPPER;
const { BUSYBOX_IMAGE, requireContainerd, startContainerd, unmountUnder } =
  await import('../support/containerd.js');
const { Agent } = await import('../../src/agent/agent.js');
const { agentFlagSet, resolveConfig } = await import('../../src/agent/config.js');
const { DEFAULT_ROUTE_PROTOCOL } = await import('../../src/agent/network/pod-routes.js');
const { Client, CORE_EVENTS, PODS, loadKubeconfig } = await import('../../src/client/index.js');
const { startTestServer } = await import('../support/server.js');
type Containerd = Awaited<ReturnType<typeof startContainerd>>;
type AgentT = InstanceType<typeof Agent>;
type Pod = import('../../src/api/types/core-v1.js').Pod;
type Event = import('../../src/api/types/core-v1.js').Event;

const run = promisify(execFile);
const enabled = requireContainerd();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface TestNode {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
  readonly podCIDR: string;
  ctrd?: Containerd | undefined;
  agent?: AgentT | undefined;
}

describe.runIf(enabled)('the agent’s --run-pod-routes between two nodes with containerd pods', () => {
  const prefix = `net6c${randomBytes(2).toString('hex')}`;
  const nodes: TestNode[] = [
    { name: 'route-node-a', ns: `${prefix}-a`, ip: '192.168.79.1', podCIDR: '10.244.21.0/24' },
    { name: 'route-node-b', ns: `${prefix}-b`, ip: '192.168.79.2', podCIDR: '10.244.22.0/24' },
  ];
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let client: InstanceType<typeof Client>;
  let dir: string;
  let podIPs = { a: '', b: '' };

  const ours = (n: TestNode): string[] =>
    execFileSync('ip', ['-n', n.ns, '-4', 'route', 'show', 'proto', String(DEFAULT_ROUTE_PROTOCOL)], {
      encoding: 'utf8',
    })
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  /** `curl` from inside the network namespace of the pod `pod`'s container on node `n`. */
  async function fromPod(n: TestNode, pod: string, url: string): Promise<string> {
    const tasks = await n.ctrd!.ctr('-n', 'k8s.io', 'containers', 'ls', '-q');
    for (const id of tasks.split('\n').filter((l) => l !== '')) {
      const info = JSON.parse(await n.ctrd!.ctr('-n', 'k8s.io', 'containers', 'info', id)) as {
        Labels?: Record<string, string>;
      };
      if (info.Labels?.['io.kubernetes.pod.name'] !== pod) continue;
      const pid = /^\s*(\d+)/m.exec(
        (await n.ctrd!.ctr('-n', 'k8s.io', 'tasks', 'ps', id)).split('\n')[1] ?? '',
      );
      if (pid === null) continue;
      return run('nsenter', ['-t', pid[1] ?? '', '-n', 'curl', '-s', '-m', '3', url]).then(
        (r) => r.stdout.trim(),
        (err: { code?: number }) => `error ${String(err.code)}`,
      );
    }
    throw new Error(`no running container of pod ${pod} on ${n.name}`);
  }
  async function runningPod(name: string, node: string): Promise<string> {
    await client.resource<Pod>(PODS).create({
      metadata: { name, namespace: 'default' },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: BUSYBOX_IMAGE,
            command: ['sh', '-c', 'mkdir -p /w && hostname > /w/index.html && exec httpd -f -p 8080 -h /w'],
          },
        ],
      },
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      const pod = await client.resource<Pod>(PODS).get(name, { namespace: 'default' });
      if (pod.status?.phase === 'Running' && pod.status.podIP) return pod.status.podIP;
      if (Date.now() > deadline) {
        const events = await client.resource<Event>(CORE_EVENTS).list({ namespace: 'default' });
        const why = events.items.filter((e) => e.involvedObject?.name === name).map((e) => e.message);
        throw new Error(
          `pod ${name} not running: ${JSON.stringify(pod.status?.containerStatuses)}; ${why.join('; ')}`,
        );
      }
      await sleep(500);
    }
  }

  beforeAll(async () => {
    server = await startTestServer();
    client = new Client(loadKubeconfig(server.kubeconfigPath));
    dir = mkdtempSync(join(tmpdir(), 'capstan-agent-routes-ctrd-'));
    for (const n of nodes) {
      execFileSync('ip', ['netns', 'add', n.ns]);
      execFileSync('ip', ['-n', n.ns, 'link', 'set', 'lo', 'up']);
      execFileSync('ip', ['netns', 'exec', n.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    }
    const [a, b] = nodes as [TestNode, TestNode];
    linkNamespaces(a.ns, 'net6c0', `${a.ip}/24`, b.ns, 'net6c1', `${b.ip}/24`);
    for (const n of nodes) {
      process.env['CAPSTAN_TEST_NODE_NETNS'] = n.ns;
      n.ctrd = await startContainerd();
      const root = join(dir, n.name);
      const config = resolveConfig(
        agentFlagSet().parse([
          `--kubeconfig=${server.kubeconfigPath}`,
          `--hostname-override=${n.name}`,
          `--container-runtime-endpoint=${n.ctrd.endpoint}`,
          `--root-dir=${join(root, 'root')}`,
          `--pod-logs-dir=${join(root, 'logs')}`,
          `--cni-conf-dir=${n.ctrd.cniConfDir}`,
          `--cgroup-root=${n.ctrd.cgroupParent}`,
          '--cni-bridge=net6cbr0',
          '--enable-server=false',
          '--healthz-port=0',
          `--node-ip=${n.ip}`,
          `--pod-cidr=${n.podCIDR}`,
          '--run-pod-routes',
        ]),
      );
      n.agent = new Agent(config, { network: { ipCommand: ['ip', '-n', n.ns], removeRulesOnStop: true } });
      await n.agent.start();
    }
    delete process.env['CAPSTAN_TEST_NODE_NETNS'];
  }, 600_000);

  afterAll(async () => {
    for (const n of nodes) await n.agent?.stop().catch((err: unknown) => console.error(err));
    for (const n of nodes) await n.ctrd?.stop().catch((err: unknown) => console.error(err));
    for (const n of nodes) execFileSync('ip', ['netns', 'del', n.ns], { stdio: 'ignore' });
    // Pods' volumes (tmpfs) under the agents' root dirs.
    if (dir) await unmountUnder(dir);
    await client?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    rmSync(wrapperDir, { recursive: true, force: true });
  }, 180_000);

  it('pods on each node reach the other node’s pods through the routes the agents made', async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    const deadline = Date.now() + 30_000;
    while (ours(a).length === 0 || ours(b).length === 0) {
      if (Date.now() > deadline) throw new Error(`routes: ${ours(a).join('; ')} / ${ours(b).join('; ')}`);
      await sleep(250);
    }
    expect(ours(a)).toEqual([`${b.podCIDR} via ${b.ip} dev net6c0`]);
    expect(ours(b)).toEqual([`${a.podCIDR} via ${a.ip} dev net6c1`]);
    const ipA = await runningPod('web-a', a.name);
    const ipB = await runningPod('web-b', b.name);
    expect(ipA.startsWith('10.244.21.')).toBe(true);
    expect(ipB.startsWith('10.244.22.')).toBe(true);
    expect(await fromPod(a, 'web-a', `http://${ipB}:8080/`)).toBe('web-b');
    expect(await fromPod(b, 'web-b', `http://${ipA}:8080/`)).toBe('web-a');
    podIPs = { a: ipA, b: ipB };
  }, 300_000);

  it('without its agent’s routes a node’s pods no longer reach the other node’s', async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    await b.agent?.stop();
    b.agent = undefined;
    expect(ours(b)).toEqual([]);
    expect(await fromPod(b, 'web-b', `http://${podIPs.a}:8080/`)).toMatch(/^error/);
    expect(ours(a)).toEqual([`${b.podCIDR} via ${b.ip} dev net6c0`]);
  }, 120_000);
});
