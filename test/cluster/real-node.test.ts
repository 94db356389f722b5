/**
 * The new user's path on a real node: `bash tools/run.sh` (a temporary data dir, a free port, a
 * pod CIDR and a bridge of this suite's own) starts a whole cluster whose node runs containers on
 * Capstan's own containerd; then kubectl 1.33 creates a Deployment of the busybox development
 * image running a long-lived command, waits for `rollout status`, reads `logs`, runs `exec`, both
 * through the server's kubelet client certificate (the agent refuses anonymous callers). The
 * Deployment's Service is reached from another pod: its DNS names (full and short) resolve to its
 * ClusterIP through the cluster DNS, and the ClusterIP answers through the node's proxy. A pod
 * reaches the API server through the `kubernetes` Service with its service-account token. The
 * node's InternalIP is the bridge's gateway (as kubelet, the agent refuses a loopback node IP):
 * pods see it as `status.hostIP` and reach a host-network pod there. The
 * cluster is stopped and started again on the same data dir: the pod's container keeps running
 * (same container ID, restartCount unchanged) and exec still works. Images without a registry: a
 * tarball in `<data-dir>/images/` is imported at start and `capstan images import` imports another
 * into the running node; pods run both (`imagePullPolicy: Never`). `capstan cluster --reset`
 * then removes everything: the data dir, the shims, the bridge, and the Service range's blackhole
 * route when the cluster added it.
 *
 * Needs root, containerd, runc, busybox-static and the CNI plugins: under `CI=true` a missing one
 * fails the suite.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesMentioning } from '../../src/cluster/containerd-teardown.js';
import { buildImages } from '../../src/cluster/dev-images.js';
import { hasBlackhole } from '../../src/cluster/service-route.js';
import { BUSYBOX_IMAGE, requireContainerd } from '../support/containerd.js';
import { kubectlOutput } from '../support/kubectl.js';

const run = promisify(execFile);
const enabled = requireContainerd();
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const POD_CIDR = '10.244.151.0/24';
const BRIDGE = 'cst-cltest151';
const SERVICE_RANGE = '10.0.0.0/24';
/** The bridge's gateway: the node's InternalIP, where the API server serves pods too. */
const GATEWAY = '10.244.151.1';
const INTERNAL_IP = 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}';
/** The first start may build (tools/run.sh rebuilds when a source changed). */
const FIRST_START_MS = 420_000;
const START_MS = 60_000;

const AIRGAP_IMAGE = 'docker.io/capstan/airgap:1';
const IMPORTED_IMAGE = 'docker.io/capstan/imported:1';

/** Writes to `out` the busybox development image (an OCI layout tarball) named `ref`. */
async function renamedImage(work: string, ref: string, out: string): Promise<void> {
  const built = await buildImages(join(work, 'built'));
  const busybox = built.find((b) => b.ref === BUSYBOX_IMAGE)!;
  const tree = join(work, 'tree');
  await rm(tree, { recursive: true, force: true });
  await mkdir(tree, { recursive: true });
  await run('tar', ['-xf', busybox.path, '-C', tree]);
  const index = await readFile(join(tree, 'index.json'), 'utf8');
  await writeFile(join(tree, 'index.json'), index.replaceAll(BUSYBOX_IMAGE, ref));
  await run('tar', ['-cf', out, '-C', tree, 'oci-layout', 'index.json', 'blobs']);
}

/** A `bash tools/run.sh` process and its output. */
interface Cluster {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the node's start-up line. */
  readonly nodeLine: Promise<string>;
}

function startCluster(dataDir: string, timeoutMs: number): Cluster {
  const child = spawn(
    'bash',
    [
      'tools/run.sh',
      `--data-dir=${dataDir}`,
      `--cert-dir=${dataDir}/pki`,
      '--secure-port=0',
      `--pod-cidr=${POD_CIDR}`,
      `--bridge=${BRIDGE}`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const nodeLine = new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`no node line in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = (): void => {
      const line = out.split('\n').find((l) => l.startsWith('node: '));
      if (line !== undefined) {
        clearTimeout(timer);
        resolveLine(line);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tools/run.sh exited with ${code}:\n${out}`));
    });
  });
  nodeLine.catch(() => undefined);
  return { child, output: () => out, nodeLine };
}

/** Sends SIGTERM and resolves with the exit code. */
function stopCluster(c: Cluster): Promise<number | null> {
  if (c.child.exitCode !== null) return Promise.resolve(c.child.exitCode);
  return new Promise((resolveCode) => {
    c.child.once('exit', (code) => resolveCode(code));
    c.child.kill('SIGTERM');
  });
}

describe.runIf(enabled)('capstan cluster with a real node (tools/run.sh)', () => {
  let dataDir: string;
  let cluster: Cluster | undefined;
  let routeBefore = false;
  const kubectl = (...args: string[]): Promise<string> =>
    kubectlOutput('1.33', args, join(dataDir, 'admin.kubeconfig'), 120_000);
  const container = async (): Promise<{ pod: string; id: string; restarts: number; ready: boolean }> => {
    const pod = JSON.parse(await kubectl('get', 'pods', '-l', 'app=web', '-o', 'json')) as {
      items: {
        metadata: { name: string };
        status?: { containerStatuses?: { containerID?: string; restartCount: number; ready: boolean }[] };
      }[];
    };
    expect(pod.items).toHaveLength(1);
    const item = pod.items[0]!;
    const cs = item.status?.containerStatuses?.[0];
    return {
      pod: item.metadata.name,
      id: cs?.containerID ?? '',
      restarts: cs?.restartCount ?? -1,
      ready: cs?.ready ?? false,
    };
  };

  beforeAll(async () => {
    routeBefore = await hasBlackhole(SERVICE_RANGE);
    dataDir = await mkdtemp(join(tmpdir(), 'capstan-cluster-'));
    // Two image tarballs of names the node lacks: one in images/ (imported at start, as k3s's
    // airgap images), one for `capstan images import`.
    const work = join(dataDir, 'work');
    await mkdir(join(dataDir, 'images'), { recursive: true });
    await renamedImage(work, AIRGAP_IMAGE, join(dataDir, 'images/airgap.tar'));
    await renamedImage(work, IMPORTED_IMAGE, join(work, 'imported.tar'));
  }, 120_000);

  afterAll(async () => {
    if (cluster) await stopCluster(cluster);
    if (existsSync(dataDir)) {
      // A failed test still leaves nothing behind.
      await run('node', [
        join(ROOT, 'dist/bundle/capstan.js'),
        'cluster',
        '--reset',
        `--data-dir=${dataDir}`,
        `--cert-dir=${dataDir}/pki`,
      ]).catch((err: unknown) => console.error(err));
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  let first: { pod: string; id: string; restarts: number };

  it(
    'starts with a real node, runs a Deployment: rollout status, logs, exec',
    async () => {
      cluster = startCluster(dataDir, FIRST_START_MS);
      const line = await cluster.nodeLine;
      expect(line).toContain('capstan-node-0 registered');
      expect(line).toContain('real containers');
      expect(line).not.toContain('SIMULATED');
      expect(line).toContain(`imported airgap.tar from ${join(dataDir, 'images')}`);
      expect(await hasBlackhole(SERVICE_RANGE)).toBe(true);

      await kubectl(
        'create',
        'deployment',
        'web',
        `--image=${BUSYBOX_IMAGE}`,
        '--',
        'sh',
        '-c',
        // busybox httpd (it forks into the background) serves the pod's name for the Service test.
        'trap "exit 0" TERM; mkdir -p /tmp/www && hostname > /tmp/www/index.html && httpd -p 8080 -h /tmp/www; echo hello from web; while true; do sleep 1; done',
      );
      expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s')).toContain(
        'successfully rolled out',
      );
      expect(await kubectl('logs', 'deployment/web')).toContain('hello from web');
      first = await container();
      expect(first.id).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
      expect(first.restarts).toBe(0);
      expect((await kubectl('exec', first.pod, '--', 'cat', '/etc/hostname')).trim()).toBe(first.pod);
    },
    FIRST_START_MS + 180_000,
  );

  it('the agent admits only authenticated, authorized callers (the server’s kubelet client certificate)', async () => {
    expect(cluster).toBeDefined();
    const port = Number(
      await kubectl(
        'get',
        'node',
        'capstan-node-0',
        '-o',
        'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}',
      ),
    );
    // kubelet's port, which kube's tools name in `nodes/<name>:10250/proxy` (nothing else in the
    // suite holds it); the server proxies there with its client certificate.
    expect(port).toBe(10250);
    const proxied = JSON.parse(
      await kubectl('get', '--raw', '/api/v1/nodes/capstan-node-0:10250/proxy/pods'),
    ) as { kind: string; items: { metadata: { name: string } }[] };
    expect(proxied.kind).toBe('PodList');
    expect(proxied.items.map((p) => p.metadata.name)).toContain(first.pod);
    const pki = join(dataDir, 'pki');
    // The agent listens on the node's address only (the bridge's gateway), as the Node advertises.
    const host = (await kubectl('get', 'node', 'capstan-node-0', '-o', INTERNAL_IP)).trim();
    expect(host).toBe(GATEWAY);
    const get = async (path: string, cert?: string): Promise<number> => {
      const res = await new Promise<number>((resolveStatus, reject) => {
        const req = httpsRequest(
          {
            host,
            port,
            path,
            rejectUnauthorized: false,
            ...(cert === undefined
              ? {}
              : { cert: readFileSync(`${cert}.crt`), key: readFileSync(`${cert}.key`) }),
          },
          (res) => {
            res.resume();
            resolveStatus(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
      return res;
    };
    // No credentials: 401, as a kubeadm kubelet answers (anonymous auth off).
    expect(await get('/pods')).toBe(401);
    expect(await get(`/containerLogs/default/${first.pod}/busybox`)).toBe(401);
    // The server's own client certificate, authorized by a SubjectAccessReview.
    expect(await get('/pods', join(pki, 'apiserver-kubelet-client'))).toBe(200);
  });

  it('reaches the Deployment through its Service by DNS name, full and short, from another pod', async () => {
    expect(cluster).toBeDefined();
    await kubectl('expose', 'deployment', 'web', '--port=80', '--target-port=8080');
    await kubectl('run', 'client', `--image=${BUSYBOX_IMAGE}`, '--', 'sleep', '100000');
    await kubectl('wait', '--for=condition=Ready', 'pod/client', '--timeout=90s');
    const clusterIP = (await kubectl('get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}')).trim();
    expect(clusterIP).toMatch(/^10\.0\.0\.\d+$/);
    // The image's busybox is Debian's static build: its wget resolves names through glibc's NSS,
    // which a static binary cannot load (it crashes), so the name is resolved by busybox's own
    // DNS client (nslookup, which reads the pod's resolv.conf: the cluster DNS at 10.0.0.10 and
    // the search path) and the address it answers is fetched.
    const resolve = (name: string): Promise<string> =>
      kubectl('exec', 'client', '--', 'sh', '-c', `nslookup ${name} 2>&1; true`);
    // The DNS record, the EndpointSlice and the proxy's rules follow the Service within moments.
    const deadline = Date.now() + 30_000;
    let answer = '';
    while (!answer.includes(`Address: ${clusterIP}`) && Date.now() < deadline) {
      answer = await resolve('web.default.svc.cluster.local');
      if (!answer.includes(`Address: ${clusterIP}`)) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(answer).toContain('10.0.0.10');
    expect(answer).toContain(`Address: ${clusterIP}`);
    expect(await resolve('web')).toContain(`Address: ${clusterIP}`);
    // `web.default` is not asked: busybox's own resolver applies the search path only to names
    // without a dot (it has no `ndots`), so it sends `web.default.` as it is, and NXDOMAIN is the
    // right answer to that (CoreDNS gives the same). glibc's resolver, with ndots:5, would search.
    // An HTTP/1.0 request by nc: that wget crashes even when given an address.
    let reply = '';
    while (!reply.includes(first.pod) && Date.now() < deadline + 30_000) {
      reply = await kubectl(
        'exec',
        'client',
        '--',
        'sh',
        '-c',
        `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${clusterIP} 80 2>&1; true`,
      );
      if (!reply.includes(first.pod)) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(reply).toMatch(/^HTTP\/1\.[01] 200/);
    expect(reply.trim().split('\n').at(-1)?.trim()).toBe(first.pod);
    await kubectl('delete', 'pod', 'client', '--grace-period=1');
  }, 180_000);

  it('the node’s address is its bridge gateway: a pod reaches a host-network pod at status.hostIP', async () => {
    expect(cluster).toBeDefined();
    // kubelet refuses a loopback node IP: in a pod, 127.0.0.1 is the pod's own loopback.
    expect((await kubectl('get', 'node', 'capstan-node-0', '-o', INTERNAL_IP)).trim()).toBe(GATEWAY);
    // A host-network web server, bound to the node's address only (nothing else of the host's).
    const port = 18181;
    await kubectl(
      'run',
      'hostweb',
      `--image=${BUSYBOX_IMAGE}`,
      '--overrides={"spec":{"hostNetwork":true}}',
      '--',
      'sh',
      '-c',
      `mkdir -p /tmp/hw && echo host-web > /tmp/hw/index.html && exec httpd -f -p ${GATEWAY}:${port} -h /tmp/hw`,
    );
    // The client finds its node as an in-cluster agent's client does: the downward API's hostIP.
    const client = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hostclient' },
      spec: {
        containers: [
          {
            name: 'c',
            image: BUSYBOX_IMAGE,
            command: ['sleep', '100000'],
            env: [{ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }],
          },
        ],
      },
    };
    await kubectl('run', 'hostclient', `--image=${BUSYBOX_IMAGE}`, `--overrides=${JSON.stringify(client)}`);
    await kubectl('wait', '--for=condition=Ready', 'pod/hostweb', 'pod/hostclient', '--timeout=90s');
    const ips = (name: string): Promise<string> =>
      kubectl('get', 'pod', name, '-o', 'jsonpath={.status.hostIP} {.status.podIP}');
    expect(await ips('hostweb')).toBe(`${GATEWAY} ${GATEWAY}`);
    expect((await ips('hostclient')).split(' ')[0]).toBe(GATEWAY);
    const fetch = `printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 3 "$HOST_IP" ${port} 2>&1; true`;
    let reply = '';
    const deadline = Date.now() + 30_000;
    while (!reply.includes('host-web') && Date.now() < deadline) {
      reply = await kubectl('exec', 'hostclient', '--', 'sh', '-c', fetch);
      if (!reply.includes('host-web')) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(reply).toMatch(/^HTTP\/1\.[01] 200/);
    expect(reply.trim().split('\n').at(-1)?.trim()).toBe('host-web');
    await kubectl('delete', 'pod', 'hostweb', 'hostclient', '--grace-period=1');
  }, 180_000);

  it('pods reach the API server through the kubernetes Service, as in-cluster clients do', async () => {
    expect(cluster).toBeDefined();
    // The server listens on the loopback only (tools/run.sh's default), so it serves the pods on
    // the bridge's gateway too, and advertises that address as the `kubernetes` endpoint.
    const gateway = GATEWAY;
    expect(await cluster!.nodeLine).toMatch(
      new RegExp(`API server for pods at https://${gateway.replaceAll('.', '\\.')}:\\d+`),
    );
    expect(
      await kubectl('get', 'endpointslice', 'kubernetes', '-o', 'jsonpath={.endpoints[*].addresses[*]}'),
    ).toBe(gateway);
    // An in-cluster client: Node's https in the pod's network namespace (the host's node binary,
    // run in a chroot of the host's root, as busybox has no TLS client kube's server accepts),
    // with the pod's service-account token and CA, the server's name checked against the CA.
    const script = [
      "const req = require('node:https').request({",
      '  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,',
      "  path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', method: 'POST',",
      "  ca: process.env.CA, servername: 'kubernetes.default.svc',",
      "  headers: { authorization: 'Bearer ' + process.env.TOKEN, 'content-type': 'application/json' },",
      '}, (res) => {',
      "  let body = '';",
      "  res.on('data', (d) => (body += d));",
      "  res.on('end', () => console.log(res.statusCode + ' ' + body.replace(/\\n/g, '')));",
      '});',
      "req.on('error', (err) => console.log('error ' + err.message));",
      "req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));",
    ].join('\n');
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'incluster' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'c',
            image: BUSYBOX_IMAGE,
            command: [
              'sh',
              '-c',
              `TOKEN="$(cat ${sa}/token)" CA="$(cat ${sa}/ca.crt)" exec chroot /host ${process.execPath} -e "$SCRIPT"`,
            ],
            env: [{ name: 'SCRIPT', value: script }],
            volumeMounts: [{ name: 'host', mountPath: '/host', readOnly: true }],
          },
        ],
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
      },
    };
    const file = join(dataDir, 'work/incluster.json');
    await writeFile(file, JSON.stringify(manifest));
    await kubectl('apply', '-f', file);
    await kubectl('wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/incluster', '--timeout=90s');
    const out = (await kubectl('logs', 'incluster')).trim();
    expect(out).toMatch(/^201 /);
    const review = JSON.parse(out.slice(4)) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(review.status.userInfo.username).toBe('system:serviceaccount:default:default');
    expect(review.status.userInfo.groups).toEqual(
      expect.arrayContaining(['system:serviceaccounts', 'system:authenticated']),
    );
    await kubectl('delete', 'pod', 'incluster', '--grace-period=1');
  }, 180_000);

  it('imports images: images/ at start, `capstan images import` while running; pods run them', async () => {
    expect(cluster).toBeDefined();
    const capstan = (...args: string[]) =>
      run('node', [join(ROOT, 'dist/bundle/capstan.js'), 'images', ...args, `--data-dir=${dataDir}`]);
    const { stdout } = await capstan('import', join(dataDir, 'work/imported.tar'));
    expect(stdout).toContain(`imported ${join(dataDir, 'work/imported.tar')}: ${IMPORTED_IMAGE}`);
    const listed = (await capstan('ls')).stdout.split('\n');
    expect(listed).toEqual(expect.arrayContaining([AIRGAP_IMAGE, IMPORTED_IMAGE, BUSYBOX_IMAGE]));
    for (const [name, image] of [
      ['airgap', AIRGAP_IMAGE],
      ['imported', IMPORTED_IMAGE],
    ] as const) {
      await kubectl('run', name, `--image=${image}`, '--image-pull-policy=Never', '--', 'sleep', '100000');
    }
    await kubectl('wait', '--for=condition=Ready', 'pod/airgap', 'pod/imported', '--timeout=90s');
    await kubectl('delete', 'pod', 'airgap', 'imported', '--grace-period=1');
  }, 180_000);

  it(
    'a second run keeps the pod running: same container ID, no restart',
    async () => {
      expect(cluster).toBeDefined();
      expect(await stopCluster(cluster!)).toBe(0);
      // containerd is gone, the pod's shim is not.
      const socket = join(dataDir, 'containerd/containerd.sock');
      expect(processesMentioning(socket).length).toBeGreaterThan(0);

      cluster = startCluster(dataDir, START_MS);
      expect(await cluster.nodeLine).toContain('real containers');
      const deadline = Date.now() + 60_000;
      let now = await container();
      while (!now.ready && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        now = await container();
      }
      expect(now).toEqual({ ...first, ready: true });
      expect((await kubectl('exec', now.pod, '--', 'echo', 'still here')).trim()).toBe('still here');
      expect((await kubectl('logs', now.pod)).match(/hello from web/g)).toHaveLength(1);
    },
    START_MS + 120_000,
  );

  it('--reset removes what the cluster created', async () => {
    expect(await stopCluster(cluster!)).toBe(0);
    cluster = undefined;
    const socket = join(dataDir, 'containerd/containerd.sock');
    const { stdout } = await run('node', [
      join(ROOT, 'dist/bundle/capstan.js'),
      'cluster',
      '--reset',
      `--data-dir=${dataDir}`,
      `--cert-dir=${dataDir}/pki`,
    ]);
    expect(stdout).toContain('reset: removed');
    // Nothing of Capstan's is left in the data dir: only what others wrote there (the test
    // support's kubectl keeps its cache beside the kubeconfig; work/ is this suite's), which a
    // reset leaves alone.
    const left = existsSync(dataDir) ? readdirSync(dataDir) : [];
    expect(left.filter((f) => !f.startsWith('kubectl-cache-') && f !== 'work').sort()).toEqual(['images']);
    // The user's tarballs stay; the record of their import goes with the containerd they went into.
    expect(readdirSync(join(dataDir, 'images'))).toEqual(['airgap.tar']);
    expect(processesMentioning(socket)).toEqual([]);
    const bridge = await run('ip', ['link', 'show', BRIDGE]).then(
      () => true,
      () => false,
    );
    expect(bridge).toBe(false);
    // The route goes only when the cluster added it (one that was there before stays).
    if (!routeBefore) expect(await hasBlackhole(SERVICE_RANGE)).toBe(false);
  }, 120_000);
});
