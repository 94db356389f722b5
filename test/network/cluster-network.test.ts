/**
 * Cluster networking on real containers: one node (private containerd, in-process Capstan,
 * `capstan agent` with `--run-proxy --run-cluster-dns --run-network-policy`), pods on its own
 * bridge and pod CIDR, Services from a Service range of its own, nftables tables of its own
 * (removed on stop), and the DNS forwarder's upstream a tiny responder on a loopback address.
 * Everything is driven through kubectl 1.33 and observed from busybox inside pods.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSYBOX_IMAGE, requireContainerd } from '../support/containerd.js';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { EXTERNAL_ANSWER, startUpstreamDns, type UpstreamDns } from './upstream-dns.js';

const run = promisify(execFile);
const enabled = requireContainerd();

const NODE = 'net-node';
const POD_CIDR = '10.244.160.0/24';
const GATEWAY = '10.244.160.1';
const BRIDGE = 'capnet160';
const SERVICE_RANGE = '10.96.160.0/24';
const CLUSTER_DNS = '10.96.160.10';
const PROXY_TABLE = 'capstan-proxy-nettest';
const NETPOL_TABLE = 'capstan-netpol-nettest';
const UPSTREAM = '127.0.53.160';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(
  what: string,
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (ok(v)) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not after ${ms} ms; last: ${String(last)}`);
    await sleep(300);
  }
}

describe.runIf(enabled)('cluster networking on containerd', () => {
  let node: AgentNode;
  let upstream: UpstreamDns;
  let dir: string;

  const apply = async (name: string, obj: unknown): Promise<void> => {
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(obj));
    await node.kubectl('apply', '-f', file);
  };
  const exec = (pod: string, ...cmd: string[]): Promise<string> => node.kubectl('exec', pod, '--', ...cmd);
  const readyAddresses = async (svc: string): Promise<string[]> => {
    const list = JSON.parse(
      await node.kubectl('get', 'endpointslices', '-l', `kubernetes.io/service-name=${svc}`, '-o', 'json'),
    ) as { items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[] };
    return list.items
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false)
      .flatMap((e) => e.addresses)
      .sort();
  };
  /** The address libc's resolver (search path, ndots) gives `name` in the client pod, as busybox ping prints it. */
  const resolvedByLibc = async (name: string): Promise<string> => {
    const out = await exec('client', 'sh', '-c', `ping -c 1 -W 1 ${name} 2>&1; true`);
    return /^PING \S+ \(([\d.]+)\)/m.exec(out)?.[1] ?? `unresolved: ${out}`;
  };
  const podIP = (pod: string): Promise<string> =>
    node.kubectl('get', 'pod', pod, '-o', 'jsonpath={.status.podIP}');
  const podsOf = async (selector: string): Promise<string[]> =>
    (await node.kubectl('get', 'pods', '-l', selector, '-o', 'jsonpath={.items[*].metadata.name}'))
      .split(' ')
      .filter((s) => s !== '')
      .sort();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-net-test-'));
    upstream = await startUpstreamDns(UPSTREAM);
    await writeFile(join(dir, 'resolv.conf'), `nameserver ${UPSTREAM}\nsearch upstream.example.test\n`);
    node = await startAgentNode({
      node: NODE,
      podCIDR: POD_CIDR,
      bridge: BRIDGE,
      serverArgs: [`--service-cluster-ip-range=${SERVICE_RANGE}`],
      controllers: [
        'deployment-controller',
        'replicaset-controller',
        'statefulset-controller',
        'endpointslice-controller',
      ],
      agentArgs: [
        '--run-proxy',
        '--run-cluster-dns',
        '--run-network-policy',
        `--cluster-dns=${CLUSTER_DNS}`,
        '--cluster-domain=cluster.local',
        `--resolv-conf=${join(dir, 'resolv.conf')}`,
      ],
      extras: {
        network: {
          proxyTable: PROXY_TABLE,
          networkPolicyTable: NETPOL_TABLE,
          minSyncPeriodMs: 100,
          removeRulesOnStop: true,
        },
      },
    });
    await apply('web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            nodeName: NODE,
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'httpd',
                image: BUSYBOX_IMAGE,
                command: [
                  'sh',
                  '-c',
                  'mkdir -p /www && hostname > /www/index.html && touch /tmp/ready && exec httpd -f -p 8080 -h /www',
                ],
                ports: [{ containerPort: 8080, name: 'http' }],
                readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    });
    await apply('web-svc', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        type: 'NodePort',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      },
    });
    await apply('db-svc', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', namespace: 'default' },
      spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'tcp', port: 5432 }] },
    });
    await apply('db', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'default' },
      spec: {
        serviceName: 'db',
        replicas: 1,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            nodeName: NODE,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }],
          },
        },
      },
    });
    await node.applyPod('client', { command: ['sleep', '3600'] });
    await node.kubectl('label', 'pod', 'client', 'role=client');
    await node.running('client');
    await eventually(
      'two ready web endpoints',
      () => readyAddresses('web'),
      (a) => a.length === 2,
      60_000,
    );
    await eventually(
      'a ready db endpoint',
      () => readyAddresses('db'),
      (a) => a.length === 1,
      60_000,
    );
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
    // Nothing of ours is left in the host's ruleset.
    const { stdout } = await run('nft', ['list', 'tables']);
    expect(stdout).not.toContain(PROXY_TABLE);
    expect(stdout).not.toContain(NETPOL_TABLE);
  }, 60_000);

  it('publishes the DNS as kube-dns in kube-system at the clusterDNS address', async () => {
    const svc = JSON.parse(
      await node.kubectl('get', 'service', 'kube-dns', '-n', 'kube-system', '-o', 'json'),
    ) as {
      metadata: { labels: Record<string, string> };
      spec: { clusterIP: string };
    };
    expect(svc.spec.clusterIP).toBe(CLUSTER_DNS);
    expect(svc.metadata.labels['k8s-app']).toBe('kube-dns');
    const slices = await node.kubectl(
      'get',
      'endpointslices',
      '-n',
      'kube-system',
      '-l',
      'kubernetes.io/service-name=kube-dns',
      '-o',
      'jsonpath={.items[*].endpoints[*].addresses[*]}',
    );
    expect(slices).toBe(GATEWAY);
  });

  it("gives a ClusterFirst pod kube's resolv.conf", async () => {
    const text = await exec('client', 'cat', '/etc/resolv.conf');
    expect(text).toMatch(new RegExp(`^nameserver ${CLUSTER_DNS.replace(/\./g, '\\.')}$`, 'm'));
    expect(text).toMatch(
      /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local upstream\.example\.test$/m,
    );
    expect(text).toMatch(/^options ndots:5$/m);
  });

  it('reaches the Deployment through its full and short Service names', async () => {
    const pods = await podsOf('app=web');
    expect(pods).toHaveLength(2);
    const full = await exec(
      'client',
      'timeout',
      '5',
      'wget',
      '-q',
      '-O',
      '-',
      'http://web.default.svc.cluster.local',
    );
    expect(pods).toContain(full.trim());
    const short = await exec('client', 'timeout', '5', 'wget', '-q', '-O', '-', 'http://web');
    expect(pods).toContain(short.trim());
  });

  it('resolves the DNS conformance names (nslookup, and the search path through libc)', async () => {
    const kubernetesIP = await node.kubectl(
      'get',
      'service',
      'kubernetes',
      '-o',
      'jsonpath={.spec.clusterIP}',
    );
    // busybox's nslookup sends the name as given (no search path): the full name
    const out = await exec('client', 'nslookup', 'kubernetes.default.svc.cluster.local');
    expect(out).toMatch(new RegExp(`Address:\\s+${kubernetesIP.replace(/\./g, '\\.')}\\s`));
    // the short names go through the pod's search path and ndots:5, as kube's spec has them
    for (const name of [
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ]) {
      expect(await resolvedByLibc(name), name).toBe(kubernetesIP);
    }
    const ptr = await exec('client', 'nslookup', kubernetesIP);
    expect(ptr).toContain('name = kubernetes.default.svc.cluster.local');
    const srv = await exec(
      'client',
      'nslookup',
      '-type=srv',
      '_https._tcp.kubernetes.default.svc.cluster.local',
    );
    expect(srv).toMatch(/443 kubernetes\.default\.svc\.cluster\.local/);
  });

  it("resolves a headless StatefulSet's pod as pod-0.<svc>", async () => {
    const ip = await podIP('db-0');
    expect(await resolvedByLibc('db-0.db')).toBe(ip);
    const out = await exec('client', 'nslookup', 'db-0.db.default.svc.cluster.local');
    expect(out).toMatch(new RegExp(`Address:\\s+${ip.replace(/\./g, '\\.')}\\s`));
  });

  it("forwards outside names to the --resolv-conf's nameserver", async () => {
    const out = await exec('client', 'nslookup', 'external.example.test');
    expect(out).toContain(`Address: ${EXTERNAL_ANSWER}`);
    expect(upstream.asked.map((n) => n.toLowerCase())).toContain('external.example.test');
    // in-cluster names never leave the node
    expect(upstream.asked.some((n) => n.endsWith('cluster.local'))).toBe(false);
  });

  it('serves the NodePort to the host', async () => {
    const nodePort = await node.kubectl('get', 'service', 'web', '-o', 'jsonpath={.spec.ports[0].nodePort}');
    const pods = await podsOf('app=web');
    const res = await fetch(`http://${GATEWAY}:${nodePort}/`, { signal: AbortSignal.timeout(5000) });
    expect(pods).toContain((await res.text()).trim());
  });

  it('takes a pod that turns unready out of rotation', async () => {
    const [gone, kept] = await podsOf('app=web');
    if (gone === undefined || kept === undefined) throw new Error('expected two web pods');
    await exec(gone, 'rm', '-f', '/tmp/ready');
    const keptIP = await podIP(kept);
    await eventually(
      'one ready web endpoint',
      () => readyAddresses('web'),
      (a) => a.join() === keptIP,
    );
    await sleep(500); // the proxy syncs within its 100 ms min period
    for (let i = 0; i < 8; i++) {
      const out = await exec('client', 'timeout', '5', 'wget', '-q', '-O', '-', 'http://web');
      expect(out.trim()).toBe(kept);
    }
    await exec(gone, 'touch', '/tmp/ready');
    await eventually(
      'two ready web endpoints again',
      () => readyAddresses('web'),
      (a) => a.length === 2,
    );
  });

  it('denies by NetworkPolicy, then allows', async () => {
    const [target] = await podsOf('app=web');
    if (target === undefined) throw new Error('expected a web pod');
    const url = `http://${await podIP(target)}:8080/`;
    const get = (): Promise<string> => exec('client', 'timeout', '2', 'wget', '-q', '-O', '-', url);
    expect((await get()).trim()).toBe(target);
    await apply('deny', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'web-deny', namespace: 'default' },
      spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'] },
    });
    await eventually(
      'the client is denied',
      () =>
        get().then(
          () => 'allowed',
          () => 'denied',
        ),
      (v) => v === 'denied',
    );
    await apply('allow', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'web-allow-clients', namespace: 'default' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 8080 }] }],
      },
    });
    const out = await eventually('the client is allowed', get, () => true);
    expect(out.trim()).toBe(target);
    // a pod without the label stays denied
    const other = (await podsOf('app=db'))[0] ?? 'db-0';
    await expect(exec(other, 'timeout', '2', 'wget', '-q', '-O', '-', url)).rejects.toThrow();
  });
});
