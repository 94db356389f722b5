/**
 * `kubectl exec`, `attach`, `port-forward` and `cp` through Capstan's API server to pods the node
 * agent runs on a private containerd, from kubectl 1.27 (SPDY/3.1, passed through to the agent
 * and the runtime) and kubectl 1.33 (WebSocket: `v5.channel.k8s.io` exec/attach translated to
 * SPDY by the server, `SPDY/3.1+portforward.k8s.io` port forwarding tunneled; and with its
 * WebSocket features turned off, SPDY). The server's stream translator and tunnel counters prove
 * which path each run took. Also: a user without `create` on pods/exec gets 403, a pod with no
 * node a 400 Status, and the agent's own /portForward.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { BUSYBOX_IMAGE, requireContainerd } from '../support/containerd.js';
import {
  kubectlPath,
  kubectlProcess,
  runKubectl,
  runKubectlWith,
  type KubectlVersion,
} from '../support/kubectl.js';
import { adminFetch, adminTls, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer, waitReady } from '../support/users.js';

/** The parts of the `ws` package (in the tree through @kubernetes/client-node) this test uses. */
interface WsSocket {
  readonly protocol: string;
  send(data: Buffer): void;
  on(event: 'message', fn: (data: Buffer) => void): void;
  on(event: 'close', fn: () => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
  on(event: 'unexpected-response', fn: (req: unknown, res: { statusCode: number }) => void): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (
  url: string,
  protocols: string[],
  opts: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean },
) => WsSocket;

const enabled = requireContainerd();
const NODE = 'stream-node-1';
const NO_WEBSOCKETS = {
  KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false',
  KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false',
};

/** The kubectl runs every check is made with. */
const CLIENTS: readonly {
  name: string;
  version: KubectlVersion;
  env: Record<string, string>;
  ws: boolean;
}[] = [
  { name: 'kubectl 1.27 (SPDY)', version: '1.27', env: {}, ws: false },
  { name: 'kubectl 1.33 (WebSocket)', version: '1.33', env: {}, ws: true },
  { name: 'kubectl 1.33 (WebSockets off: SPDY)', version: '1.33', env: NO_WEBSOCKETS, ws: false },
];

/** Sum of a counter's samples in the server's /metrics (all label sets). */
function counterSum(metrics: string, name: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

describe.runIf(enabled)('exec, attach, port-forward and cp through the API server', () => {
  let node: AgentNode;
  let server: TestServer;
  let dir: string;
  const k = (...args: string[]): Promise<string> => node.kubectl(...args);
  const jsonpath = (pod: string, path: string): Promise<string> =>
    k('get', 'pod', pod, '-o', `jsonpath={${path}}`);
  const metric = async (name: string): Promise<number> =>
    counterSum(await k('get', '--raw', '/metrics'), name);
  const applyPod = (name: string, container: Record<string, unknown>, spec?: Record<string, unknown>) =>
    node.applyPod(name, container, spec);
  const running = (...pods: string[]): Promise<void> => node.running(...pods);

  beforeAll(async () => {
    node = await startAgentNode({
      node: NODE,
      podCIDR: '10.244.251.0/24',
      serverArgs: ['--authorization-mode=Node,RBAC'],
    });
    server = node.server;
    dir = node.dir;
    await waitReady(server);
    await applyPod('shell', { command: ['sleep', '3600'] });
    await applyPod('web', {
      command: [
        'sh',
        '-c',
        'mkdir -p /www && echo hello-from-httpd > /www/index.html && exec httpd -f -p 8080 -h /www',
      ],
      ports: [{ containerPort: 8080 }],
    });
    await running('shell', 'web');
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  describe.each(CLIENTS)('$name', ({ version, env, ws }) => {
    const kx = (args: string[], input?: string) =>
      runKubectlWith(version, args, server.kubeconfigPath, {
        env,
        ...(input === undefined ? {} : { input }),
      });

    it('exec: stdin in, stdout and stderr out, the exit code propagated', async () => {
      const translated = await metric('apiserver_stream_translator_requests_total');
      const piped = await kx(
        ['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; echo to-stderr >&2'],
        'line one\nline two\n',
      );
      expect(piped.stderr).toContain('to-stderr');
      expect(piped).toMatchObject({ code: 0, stdout: 'line one\nline two\n' });

      const failing = await kx(['exec', 'shell', '--', 'sh', '-c', 'echo before; exit 3']);
      expect(failing.stdout).toBe('before\n');
      expect(failing.code).toBe(3);
      expect(failing.stderr).toContain('command terminated with exit code 3');
      // kubectl 1.33 spoke v5.channel.k8s.io to the translator; the others SPDY straight through.
      const runs = (piped.runs ?? 1) + (failing.runs ?? 1);
      expect((await metric('apiserver_stream_translator_requests_total')) - translated).toBe(ws ? runs : 0);
    }, 60_000);

    it('exec -it: a terminal of the client size in the container', async () => {
      // `script` gives kubectl a pseudo-terminal, sized 33x101 before kubectl starts: kubectl
      // asks for a TTY and sends the size on the resize stream.
      const bin = kubectlPath(version);
      if (bin === undefined) throw new Error(`kubectl ${version} is not installed`);
      const cacheDir = join(dir, `kubectl-cache-tty-${version}`);
      const kubectl = `${bin} --kubeconfig ${server.kubeconfigPath} --cache-dir ${cacheDir}`;
      const inner = `stty rows 33 cols 101; exec ${kubectl} exec -it shell -- sh -c 'sleep 1; tty; stty size; exit 4'`;
      const res = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile(
          'script',
          ['-qec', inner, '/dev/null'],
          { env: { ...process.env, KUBECONFIG: '', ...env }, timeout: 30_000 },
          (err, stdout) => resolve({ code: err === null ? 0 : Number(err.code), out: stdout }),
        );
      });
      expect(res.out).toMatch(/\/dev\/pts\/\d+\r?\n/);
      expect(res.out).toMatch(/33 101\r?\n/);
      expect(res.code).toBe(4);
    }, 60_000);

    it('attach: stdin reaches the container, its output comes back', async () => {
      const pod = `attach-${version.replace('.', '-')}-${ws ? 'ws' : 'spdy'}`;
      await applyPod(
        pod,
        {
          command: ['sh', '-c', 'while read l; do echo got:$l; done; echo bye'],
          stdin: true,
          stdinOnce: true,
        },
        { restartPolicy: 'Never' },
      );
      await running(pod);
      const attached = await kx(['attach', '-i', pod, '-c', 'c'], 'ping\n');
      expect(attached.code, attached.stderr).toBe(0);
      expect(attached.stdout).toContain('got:ping\n');
    }, 90_000);

    it('port-forward: an HTTP GET on the local port reaches httpd in the pod', async () => {
      const tunneled = await metric('apiserver_stream_tunnel_requests_total');
      const child = kubectlProcess(version, ['port-forward', 'pod/web', ':8080'], server.kubeconfigPath, {
        env,
      });
      try {
        const localPort = await new Promise<number>((resolve, reject) => {
          let out = '';
          const timer = setTimeout(() => reject(new Error(`port-forward did not start: ${out}`)), 30_000);
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
            if (m) {
              clearTimeout(timer);
              resolve(Number(m[1]));
            }
          });
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          child.on('exit', () => reject(new Error(`port-forward exited: ${out}`)));
        });
        for (let i = 0; i < 2; i++) {
          const body = await new Promise<string>((resolve, reject) => {
            httpRequest({ host: '127.0.0.1', port: localPort, path: '/' }, (res) => {
              let text = '';
              res.on('data', (d: Buffer) => (text += d.toString()));
              res.on('end', () => resolve(text));
            })
              .on('error', reject)
              .end();
          });
          expect(body).toBe('hello-from-httpd\n');
        }
      } finally {
        child.kill('SIGTERM');
      }
      expect((await metric('apiserver_stream_tunnel_requests_total')) - tunneled).toBe(ws ? 1 : 0);
    }, 60_000);

    it('cp: a file copied into the pod and back out is unchanged', async () => {
      const content = `capstan cp ${version} ${ws}\n`.repeat(5000);
      const local = join(dir, `cp-in-${version}-${ws}.txt`);
      const back = join(dir, `cp-out-${version}-${ws}.txt`);
      await writeFile(local, content);
      const remote = `/tmp/cp-${version}-${ws}.txt`;
      const up = await kx(['cp', local, `default/shell:${remote}`]);
      expect(up.code, up.stderr).toBe(0);
      expect((await kx(['exec', 'shell', '--', 'wc', '-c', remote])).stdout.trim()).toBe(
        `${Buffer.byteLength(content)} ${remote}`,
      );
      const down = await kx(['cp', `default/shell:${remote}`, back]);
      expect(down.code, down.stderr).toBe(0);
      expect(await readFile(back, 'utf8')).toBe(content);
    }, 60_000);
  });

  it('speaks v5.channel.k8s.io to a WebSocket client: channels, close of stdin, final Status', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const base = server.url.replace('https://', 'wss://');
    const url = `${base}/api/v1/namespaces/default/pods/shell/exec?command=sh&command=-c&command=cat%3B%20echo%20e%20%3E%262%3B%20exit%205&stdin=true&stdout=true&stderr=true`;
    const sock = new WebSocket(url, ['v5.channel.k8s.io'], { ...tls });
    const channels = new Map<number, string>();
    const firsts: number[] = [];
    await new Promise<void>((resolve, reject) => {
      sock.on('message', (data: Buffer) => {
        const ch = data[0] ?? 0;
        if (data.length === 1) firsts.push(ch);
        channels.set(ch, (channels.get(ch) ?? '') + data.subarray(1).toString('utf8'));
        if (firsts.length === 1 && data.length === 1 && ch === 1) {
          sock.send(Buffer.from([0, ...Buffer.from('hello\n')]));
          sock.send(Buffer.from([255, 0])); // v5: stdin is done
        }
      });
      sock.on('close', () => resolve());
      sock.on('error', reject);
    });
    expect(sock.protocol).toBe('v5.channel.k8s.io');
    expect(firsts[0]).toBe(1); // the empty "ready" message on stdout
    expect(channels.get(1)).toBe('hello\n');
    expect(channels.get(2)).toBe('e\n');
    expect(JSON.parse(channels.get(3) ?? '{}')).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '5' }] },
    });
  }, 30_000);

  it('refuses users without create on pods/exec (403), and a GET needs create too', async () => {
    const issuer = await clusterIssuer(server);
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'exec-get-only', namespace: 'default' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['pods/exec'], verbs: ['get'] },
      ],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'exec-get-only', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'exec-get-only' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'reader' }],
    };
    await writeFile(
      join(dir, 'rbac.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role, binding] }),
    );
    await k('apply', '-f', join(dir, 'rbac.json'));
    const reader = await clientTls(server, issuer, 'reader');
    const kubeconfig = join(dir, 'reader.kubeconfig');
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: server.url,
              'certificate-authority-data': Buffer.from(reader.ca).toString('base64'),
            },
          },
        ],
        users: [
          {
            name: 'u',
            user: {
              'client-certificate-data': Buffer.from(reader.cert).toString('base64'),
              'client-key-data': Buffer.from(reader.key).toString('base64'),
            },
          },
        ],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    for (const { version, env } of CLIENTS) {
      const res = await runKubectlWith(version, ['exec', 'shell', '--', 'echo', 'nope'], kubeconfig, { env });
      expect(res.code).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/forbidden/i);
    }
    const proxied = await runKubectlWith(
      '1.33',
      ['get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/'],
      kubeconfig,
    );
    expect(proxied.code).not.toBe(0);
    expect(proxied.stderr).toMatch(/forbidden/i);
    // The WebSocket GET the role allows as `get` is refused for want of `create`.
    const status = await new Promise<number>((resolve, reject) => {
      const sock = new WebSocket(
        `${server.url.replace('https://', 'wss://')}/api/v1/namespaces/default/pods/shell/exec?command=true&stdout=true`,
        ['v5.channel.k8s.io'],
        { ca: reader.ca, cert: reader.cert, key: reader.key },
      );
      sock.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      sock.on('error', reject);
    });
    expect(status).toBe(403);
  }, 60_000);

  it('answers a clear 400 Status for a pod with no node, and 400 without an upgrade', async () => {
    const file = join(dir, 'nonode.json');
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'nonode', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: BUSYBOX_IMAGE }] },
      }),
    );
    await k('apply', '-f', file);
    const tls = adminTls(server.kubeconfigPath);
    const noHost = await adminFetch(
      `${server.url}/api/v1/namespaces/default/pods/nonode/exec?command=ls&stdout=true`,
      tls,
      { method: 'POST' },
    );
    expect(noHost.status).toBe(400);
    expect(JSON.parse(noHost.body)).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: 'pod nonode does not have a host assigned',
      code: 400,
    });
    for (const { version, env } of CLIENTS) {
      const res = await runKubectlWith(version, ['exec', 'nonode', '--', 'ls'], server.kubeconfigPath, {
        env,
      });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('does not have a host assigned');
    }
    const plain = await adminFetch(
      `${server.url}/api/v1/namespaces/default/pods/shell/exec?command=ls&stdout=true`,
      tls,
      { method: 'POST' },
    );
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body)).toMatchObject({
      reason: 'BadRequest',
      message: 'Upgrade request required',
    });
    const missing = await adminFetch(
      `${server.url}/api/v1/namespaces/default/pods/ghost/exec?command=ls`,
      tls,
      { method: 'POST' },
    );
    expect(missing.status).toBe(404);
    const res = await runKubectl('1.33', ['exec', 'shell', '-c', 'nope', '--', 'ls'], server.kubeconfigPath);
    expect(res.stderr).toContain('container nope is not valid for pod shell');
  }, 60_000);

  it('proxies nodes/proxy to the agent, pods/proxy to the pod, services/proxy to an endpoint', async () => {
    expect(await k('get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`)).toBe('ok');
    const pods = JSON.parse(await k('get', '--raw', `/api/v1/nodes/${NODE}/proxy/pods`)) as {
      kind: string;
      items: { metadata: { name: string } }[];
    };
    expect(pods.kind).toBe('PodList');
    expect(pods.items.map((p) => p.metadata.name)).toContain('web');
    expect(await k('get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/')).toBe(
      'hello-from-httpd\n',
    );
    expect(await k('get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/index.html')).toBe(
      'hello-from-httpd\n',
    );
    // No port named: the first port a container declares, as kube's.
    expect(await k('get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/')).toBe('hello-from-httpd\n');
    const podIP = await jsonpath('web', '.status.podIP');
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: 'default' },
          spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: { name: 'web', namespace: 'default' },
          subsets: [{ addresses: [{ ip: podIP }], ports: [{ name: 'http', port: 8080 }] }],
        },
      ],
    };
    await writeFile(join(dir, 'svc.json'), JSON.stringify(objects));
    await k('apply', '-f', join(dir, 'svc.json'));
    expect(await k('get', '--raw', '/api/v1/namespaces/default/services/web:http/proxy/')).toBe(
      'hello-from-httpd\n',
    );
    const missing = await runKubectl(
      '1.33',
      ['get', '--raw', '/api/v1/namespaces/default/pods/ghost/proxy/'],
      server.kubeconfigPath,
    );
    expect(missing.stderr).toContain('NotFound');
  }, 60_000);

  it('lists the connect subresources in discovery as kube does', async () => {
    const list = JSON.parse(await k('get', '--raw', '/api/v1')) as {
      resources: { name: string; kind: string; verbs: string[] }[];
    };
    for (const [name, kind] of [
      ['pods/exec', 'PodExecOptions'],
      ['pods/attach', 'PodAttachOptions'],
      ['pods/portforward', 'PodPortForwardOptions'],
    ]) {
      expect(list.resources.find((r) => r.name === name)).toMatchObject({ kind, verbs: ['create', 'get'] });
    }
    for (const [name, kind] of [
      ['pods/proxy', 'PodProxyOptions'],
      ['nodes/proxy', 'NodeProxyOptions'],
      ['services/proxy', 'ServiceProxyOptions'],
    ]) {
      expect(list.resources.find((r) => r.name === name)).toMatchObject({
        kind,
        verbs: ['create', 'delete', 'get', 'patch', 'update'],
      });
    }
  });
});
