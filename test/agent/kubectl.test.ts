/**
 * `capstan agent` in API mode on real containers, driven by kubectl 1.33 against an in-process
 * Capstan: the node registers and turns Ready, a pod runs, `kubectl logs` reads it through the
 * server's pods/log proxy, a crash-looping container shows CrashLoopBackOff and BackOff events,
 * a missing image gets ErrImagePull/ImagePullBackOff, a restarted agent adopts its pods (same
 * container IDs), pods that do not fit the node are rejected, and a deleted pod goes away. The
 * node is test/support/agent-node.ts, which removes everything afterwards.
 */
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { CriClient } from '../../src/agent/cri/client.js';
import { BUSYBOX_IMAGE } from '../support/containerd.js';
import { requireContainerd } from '../support/containerd.js';
import { runKubectl, runKubectlWith } from '../support/kubectl.js';
import { adminTls } from '../support/https.js';

/** The parts of the `ws` package (in the tree through @kubernetes/client-node) this test uses. */
interface WsSocket {
  readonly protocol: string;
  on(event: 'message', fn: (data: Buffer) => void): void;
  on(event: 'close', fn: () => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (
  url: string,
  protocols: string[],
  opts: { rejectUnauthorized?: boolean; ca?: string; cert?: string; key?: string },
) => WsSocket;

/** Every message of a WebSocket until it closes, and the subprotocol it chose. */
function readWebSocket(ws: WsSocket): Promise<{ protocol: string; messages: Buffer[] }> {
  const messages: Buffer[] = [];
  return new Promise((resolve, reject) => {
    ws.on('message', (data: Buffer) => messages.push(data));
    ws.on('close', () => resolve({ protocol: ws.protocol, messages }));
    ws.on('error', reject);
  });
}
const enabled = requireContainerd();
const NODE = 'agent-node-1';

describe.runIf(enabled)('capstan agent with kubectl 1.33', () => {
  let node: AgentNode;
  const k = (...args: string[]): Promise<string> => node.kubectl(...args);
  const jsonpath = (pod: string, path: string): Promise<string> =>
    k('get', 'pod', pod, '-o', `jsonpath={${path}}`);
  const applyPod = (name: string, container: Record<string, unknown>): Promise<void> =>
    node.applyPod(name, container);

  beforeAll(async () => {
    node = await startAgentNode({ node: NODE, podCIDR: '10.244.174.0/24' });
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it('registers a Ready node with its capacity, addresses and nodeInfo', async () => {
    await expect
      .poll(() => k('get', 'node', NODE, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'), {
        timeout: 30_000,
      })
      .toBe('True');
    const node = JSON.parse(await k('get', 'node', NODE, '-o', 'json')) as {
      status: {
        capacity: Record<string, string>;
        addresses: { type: string; address: string }[];
        nodeInfo: Record<string, string>;
      };
      metadata: { labels: Record<string, string> };
    };
    expect(node.status.capacity['pods']).toBe('110');
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
    expect(node.status.nodeInfo['containerRuntimeVersion']).toMatch(/^containerd:\/\//);
    expect(node.metadata.labels['kubernetes.io/hostname']).toBe(NODE);
    expect(
      await k('get', 'lease', '-n', 'kube-node-lease', NODE, '-o', 'jsonpath={.spec.leaseDurationSeconds}'),
    ).toBe('40');
  }, 60_000);

  it('runs a pod, serves kubectl logs, and survives an agent restart untouched', async () => {
    await applyPod('web', { command: ['sh', '-c', 'echo hello from web; exec sleep 3600'] });
    await expect.poll(() => jsonpath('web', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    expect(await jsonpath('web', '.status.podIP')).toMatch(/^10\.244\.174\./);
    expect(await jsonpath('web', '.status.qosClass')).toBe('BestEffort');
    await expect.poll(() => k('logs', 'web'), { timeout: 10_000 }).toBe('hello from web\n');
    expect(await k('logs', 'web', '--tail=1', '--timestamps')).toMatch(
      /^\d{4}-\d\d-\d\dT\S+ hello from web\n$/,
    );

    const before = await jsonpath('web', '.status.containerStatuses[0].containerID');
    await node.restartAgent();
    // Let the new agent list, sync and write a status.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await jsonpath('web', '.status.containerStatuses[0].containerID')).toBe(before);
    expect(await jsonpath('web', '.status.containerStatuses[0].restartCount')).toBe('0');
    expect(await jsonpath('web', '.status.phase')).toBe('Running');
    // kubelet's managed /etc/hosts: the pod's IP under its name.
    const hosts = await k('exec', 'web', '--', 'cat', '/etc/hosts');
    expect(hosts.split('\n')[0]).toBe('# Kubernetes-managed hosts file.');
    expect(hosts).toContain(`${await jsonpath('web', '.status.podIP')}\tweb\n`);
    // In-cluster clients find the API server by the kubernetes Service's variables.
    const clusterIP = await k(
      'get',
      'service',
      'kubernetes',
      '-n',
      'default',
      '-o',
      'jsonpath={.spec.clusterIP}',
    );
    expect(
      await k('exec', 'web', '--', 'sh', '-c', 'echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT'),
    ).toBe(`${clusterIP}:443\n`);
  }, 120_000);

  it('serves pods/log over WebSocket, in binary or base64 messages, as kube-apiserver does', async () => {
    const tls = adminTls(node.server.kubeconfigPath);
    const url = `${node.server.url.replace(/^https/, 'wss')}/api/v1/namespaces/default/pods/web/log?container=c`;
    const binary = await readWebSocket(new WebSocket(url, ['binary.k8s.io'], tls));
    expect(binary.protocol).toBe('binary.k8s.io');
    expect(Buffer.concat(binary.messages).toString('utf8')).toBe('hello from web\n');
    const base64 = await readWebSocket(new WebSocket(url, ['base64.binary.k8s.io'], tls));
    expect(base64.protocol).toBe('base64.binary.k8s.io');
    const decoded = base64.messages.map((m) => Buffer.from(m.toString('utf8'), 'base64').toString('utf8'));
    expect(decoded.join('')).toBe('hello from web\n');
    // A subprotocol the server does not speak is refused at the handshake.
    await expect(readWebSocket(new WebSocket(url, ['v4.channel.k8s.io'], tls))).rejects.toThrow(/403/);
  }, 30_000);

  it("serves exec on the agent's own API (WebSocket v4.channel.k8s.io, proxied to the runtime)", async () => {
    const url = `wss://127.0.0.1:${node.agent.port}/exec/default/web/c?command=sh&command=-c&command=echo%20out%3B%20echo%20err%20%3E%262&output=1&error=1`;
    const ws = new WebSocket(url, ['v4.channel.k8s.io'], { rejectUnauthorized: false });
    const channels = new Map<number, string>();
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        const ch = data[0] ?? 0;
        channels.set(ch, (channels.get(ch) ?? '') + data.subarray(1).toString('utf8'));
      });
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    expect(ws.protocol).toBe('v4.channel.k8s.io');
    expect(channels.get(1)).toBe('out\n');
    expect(channels.get(2)).toBe('err\n');
    expect(JSON.parse(channels.get(3) ?? '{}')).toMatchObject({ status: 'Success' });
  }, 30_000);

  it('runs a kubectl debug container in the pod, in the process namespace of its target', async () => {
    await k(
      'debug',
      'web',
      `--image=${BUSYBOX_IMAGE}`,
      '--image-pull-policy=IfNotPresent',
      '--target=c',
      '-c',
      'dbg',
      '--attach=false',
      '--',
      'sh',
      '-c',
      'ps -o pid,args; exec sleep 3600',
    );
    await expect
      .poll(() => jsonpath('web', '.status.ephemeralContainerStatuses[0].state.running.startedAt'), {
        timeout: 60_000,
      })
      .not.toBe('');
    expect(await jsonpath('web', '.status.ephemeralContainerStatuses[0].name')).toBe('dbg');
    expect(await jsonpath('web', '.status.ephemeralContainerStatuses[0].containerID')).toMatch(
      /^containerd:\/\//,
    );
    // The target's process (pid 1 of its namespace) is visible to the debugger.
    await expect.poll(() => k('logs', 'web', '-c', 'dbg'), { timeout: 10_000 }).toMatch(/^\s*1 sleep 3600$/m);
    expect(await k('exec', 'web', '-c', 'dbg', '--', 'echo', 'inside')).toBe('inside\n');
    // The app container is untouched and the pod stays Running and Ready.
    expect(await jsonpath('web', '.status.containerStatuses[0].restartCount')).toBe('0');
    expect(await jsonpath('web', '.status.conditions[?(@.type=="Ready")].status')).toBe('True');
  }, 120_000);

  it('attaches kubectl debug -i to its container: stdin in, output back', async () => {
    const res = await runKubectlWith(
      '1.33',
      [
        'debug',
        '-i',
        'web',
        `--image=${BUSYBOX_IMAGE}`,
        '--image-pull-policy=IfNotPresent',
        '-c',
        'dbg-i',
        '--',
        'sh',
        '-c',
        'while read l; do echo got:$l; done; echo bye',
      ],
      node.server.kubeconfigPath,
      { input: 'ping\n' },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('got:ping\n');
    // kubectl debug sets stdin without stdinOnce: the container outlives the session, for a re-attach.
    expect(
      await jsonpath('web', '.status.ephemeralContainerStatuses[?(@.name=="dbg-i")].state.running.startedAt'),
    ).not.toBe('');
  }, 120_000);

  it('does not start an ephemeral container again in a new sandbox', async () => {
    const uid = await jsonpath('web', '.metadata.uid');
    const cri = new CriClient(node.ctrd.endpoint);
    try {
      const [sandbox] = await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
      expect(sandbox).toBeDefined();
      await cri.stopPodSandbox(sandbox?.id ?? '');
    } finally {
      cri.close();
    }
    // The agent makes a new sandbox and runs the app container in it again (a first restart can
    // still meet the old sandbox being torn down, and wait out a back-off).
    await expect
      .poll(() => jsonpath('web', '.status.conditions[?(@.type=="Ready")].status'), { timeout: 90_000 })
      .toBe('True');
    expect(await jsonpath('web', '.status.containerStatuses[0].state.running.startedAt')).not.toBe('');
    // The debug containers stopped with the old sandbox; none was tried again (no waiting reason).
    await new Promise((r) => setTimeout(r, 2000));
    expect(await jsonpath('web', '.status.ephemeralContainerStatuses[*].state.running.startedAt')).toBe('');
    expect(await jsonpath('web', '.status.ephemeralContainerStatuses[*].state.waiting.reason')).toBe('');
    expect(await jsonpath('web', '.status.ephemeralContainerStatuses[*].state.terminated.exitCode')).toBe(
      '137 137',
    );
  }, 120_000);

  it('shows CrashLoopBackOff with BackOff events for a crashing container', async () => {
    await applyPod('crash', { command: ['sh', '-c', 'echo oops; exit 1'] });
    await expect
      .poll(() => jsonpath('crash', '.status.containerStatuses[0].state.waiting.reason'), { timeout: 60_000 })
      .toBe('CrashLoopBackOff');
    expect(
      Number(await jsonpath('crash', '.status.containerStatuses[0].restartCount')),
    ).toBeGreaterThanOrEqual(1);
    expect(await jsonpath('crash', '.status.containerStatuses[0].lastState.terminated.exitCode')).toBe('1');
    const reasons = await k(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=crash',
      '-o',
      'jsonpath={.items[*].reason}',
    );
    expect(reasons.split(' ')).toEqual(expect.arrayContaining(['Pulled', 'Created', 'Started', 'BackOff']));
    expect(await k('logs', 'crash', '--previous')).toBe('oops\n');
  }, 90_000);

  it('reports ErrImagePull then ImagePullBackOff for an image that does not exist', async () => {
    await applyPod('noimage', { image: '127.0.0.1:1/capstan/missing:1', imagePullPolicy: 'IfNotPresent' });
    await expect
      .poll(() => jsonpath('noimage', '.status.containerStatuses[0].state.waiting.reason'), {
        timeout: 60_000,
      })
      .toBe('ImagePullBackOff');
    expect(await jsonpath('noimage', '.status.phase')).toBe('Pending');
    // Events are written after the status, held to --event-qps as kubelet's are.
    const messages = (): Promise<string> =>
      k(
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=noimage',
        '-o',
        'jsonpath={.items[*].message}',
      );
    await expect.poll(messages, { timeout: 20_000 }).toContain('Error: ErrImagePull');
    await expect.poll(messages, { timeout: 20_000 }).toContain('Error: ImagePullBackOff');
  }, 90_000);

  it('rejects a pod bound to it that does not fit, as kubelet does: Failed, OutOfcpu, an event, nothing run', async () => {
    const cpus = Number(await k('get', 'node', NODE, '-o', 'jsonpath={.status.allocatable.cpu}'));
    await applyPod('toobig', { command: ['sleep', '3600'], resources: { requests: { cpu: '1000' } } });
    await expect.poll(() => jsonpath('toobig', '.status.phase'), { timeout: 30_000 }).toBe('Failed');
    const message = `Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: ${cpus * 1000}`;
    expect(await jsonpath('toobig', '.status.reason')).toBe('OutOfcpu');
    expect(await jsonpath('toobig', '.status.message')).toBe(`Pod was rejected: ${message}`);
    await expect
      .poll(
        () =>
          k(
            'get',
            'events',
            '--field-selector',
            'involvedObject.name=toobig',
            '-o',
            'jsonpath={.items[*].type}/{.items[*].reason}/{.items[*].message}',
          ),
        { timeout: 20_000 },
      )
      .toBe(`Warning/OutOfcpu/${message}`);

    // The node's labels decide a nodeSelector; a pod that fits runs beside the rejected ones.
    await node.applyPod('elsewhere', { command: ['sleep', '3600'] }, { nodeSelector: { disk: 'ssd' } });
    await expect
      .poll(() => jsonpath('elsewhere', '.status.reason'), { timeout: 30_000 })
      .toBe('NodeAffinity');
    expect(await jsonpath('elsewhere', '.status.message')).toBe(
      "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    );
    // Sysctls beyond kubelet's safe set are refused before anything else is checked.
    await node.applyPod(
      'sysctl',
      { command: ['sleep', '3600'] },
      { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '10000' }] } },
    );
    await expect
      .poll(() => jsonpath('sysctl', '.status.reason'), { timeout: 30_000 })
      .toBe('SysctlForbidden');
    expect(await jsonpath('sysctl', '.status.message')).toBe(
      'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted',
    );
    expect(await jsonpath('sysctl', '.status.phase')).toBe('Failed');
    await node.applyPod(
      'here',
      { command: ['sleep', '3600'], resources: { requests: { cpu: '100m' } } },
      { nodeSelector: { 'kubernetes.io/hostname': NODE } },
    );
    await expect.poll(() => jsonpath('here', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    const uids = await Promise.all(
      ['toobig', 'elsewhere', 'sysctl'].map((p) => jsonpath(p, '.metadata.uid')),
    );
    for (const uid of uids)
      expect(
        await node.agent.cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } }),
      ).toEqual([]);
    // A label given to the node while the agent runs decides the next pod: the agent watches
    // its Node, as kubelet's node informer does, rather than keep the copy it registered.
    await k('label', 'node', NODE, 'disk=ssd');
    try {
      await node.applyPod('labelled', { command: ['sleep', '3600'] }, { nodeSelector: { disk: 'ssd' } });
      await expect.poll(() => jsonpath('labelled', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    } finally {
      await k('label', 'node', NODE, 'disk-');
    }
  }, 180_000);

  it('reports termination messages: from the file (any user, any path), from the log on failure', async () => {
    const message = (pod: string): Promise<string> =>
      jsonpath(pod, '.status.containerStatuses[0].state.terminated.message');
    const done = (pod: string): Promise<string> => jsonpath(pod, '.status.phase');
    await node.applyPod(
      'msg-file',
      {
        command: ['sh', '-c', 'printf OK > /tmp/my-message'],
        terminationMessagePath: '/tmp/my-message',
        securityContext: { runAsUser: 1234 },
      },
      { restartPolicy: 'Never' },
    );
    await node.applyPod(
      'msg-log',
      {
        command: ['sh', '-c', 'echo first; echo -n DONE; exit 3'],
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
      { restartPolicy: 'Never' },
    );
    await node.applyPod(
      'msg-none',
      { command: ['sh', '-c', 'echo not-a-message'], terminationMessagePolicy: 'FallbackToLogsOnError' },
      { restartPolicy: 'Never' },
    );
    await expect.poll(() => done('msg-file'), { timeout: 60_000 }).toBe('Succeeded');
    expect(await message('msg-file')).toBe('OK');
    await expect.poll(() => done('msg-log'), { timeout: 60_000 }).toBe('Failed');
    expect(await message('msg-log')).toBe('first\nDONE');
    // A success leaves the log alone: no message.
    await expect.poll(() => done('msg-none'), { timeout: 60_000 }).toBe('Succeeded');
    expect(await message('msg-none')).toBe('');
    await k('delete', 'pod', 'msg-file', 'msg-log', 'msg-none', '--wait=false');
  }, 120_000);

  it('runs a pod on the host network: the node’s hostname and /etc/hosts', async () => {
    await node.applyPod(
      'hostnet',
      { command: ['sh', '-c', 'echo "name=$(hostname)"; head -1 /etc/hosts'] },
      { hostNetwork: true, restartPolicy: 'Never' },
    );
    await expect.poll(() => jsonpath('hostnet', '.status.phase'), { timeout: 60_000 }).toBe('Succeeded');
    expect(await k('logs', 'hostnet')).toBe(
      `name=${hostname()}\n# Kubernetes-managed hosts file (host network).\n`,
    );
    await k('delete', 'pod', 'hostnet', '--wait=false');
  }, 90_000);

  it('writes hostAliases into the pod’s /etc/hosts, as kubelet does', async () => {
    await node.applyPod(
      'aliased',
      { command: ['sh', '-c', 'cat /etc/hosts; exec sleep 3600'] },
      { hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo.local', 'bar.local'] }] },
    );
    await expect
      .poll(() => k('logs', 'aliased'), { timeout: 30_000 })
      .toContain('# Entries added by HostAliases.\n123.45.67.89\tfoo.local\tbar.local\n');
    await k('delete', 'pod', 'aliased', '--wait=false');
  }, 60_000);

  it('writes a deleted pod’s final status before it lets go: Failed, its container terminated', async () => {
    // A finalizer keeps the object, as a Job's tracking finalizer does: what the agent wrote last
    // stays readable. sh as PID 1 ignores SIGTERM, so the kill after the grace period ends it.
    await node.applyPod('held', { command: ['sh', '-c', 'sleep 3600'] });
    await k(
      'patch',
      'pod',
      'held',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["capstan.test/hold"]}}',
    );
    await expect.poll(() => jsonpath('held', '.status.phase'), { timeout: 30_000 }).toBe('Running');
    // A condition the agent does not own (an eviction's) stays through its writes, final included.
    await k(
      'patch',
      'pod',
      'held',
      '--subresource=status',
      '-p',
      '{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI"}]}}',
    );
    await k('delete', 'pod', 'held', '--wait=false');
    await expect.poll(() => jsonpath('held', '.status.phase'), { timeout: 30_000 }).toBe('Failed');
    expect(await jsonpath('held', '.status.conditions[?(@.type=="DisruptionTarget")].reason')).toBe(
      'EvictionByEvictionAPI',
    );
    expect(await jsonpath('held', '.status.containerStatuses[0].state.terminated.exitCode')).toBe('137');
    expect(await jsonpath('held', '.status.containerStatuses[0].ready')).toBe('false');
    await k('patch', 'pod', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    await expect
      .poll(async () => (await runKubectl('1.33', ['get', 'pod', 'held'], node.server.kubeconfigPath)).code, {
        timeout: 30_000,
      })
      .toBe(1);
  }, 90_000);

  it('deletes pods: containers stopped, then the object removed', async () => {
    for (const p of ['web', 'crash', 'noimage', 'toobig', 'elsewhere', 'sysctl', 'here', 'labelled'])
      await k('delete', 'pod', p, '--wait=false');
    await expect
      .poll(
        async () =>
          (await runKubectl('1.33', ['get', 'pods', '-o', 'name'], node.server.kubeconfigPath)).stdout.trim(),
        { timeout: 60_000 },
      )
      .toBe('');
    expect(await node.agent.cri.listPodSandbox()).toEqual([]);
  }, 90_000);
});
