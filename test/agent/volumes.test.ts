/**
 * Pod volumes on real containers, through an in-process Capstan and `capstan agent` running as
 * its Node identity (`system:node:<name>`, authorized by the Node authorizer and RBAC):
 * - a pod reads its configMap, secret, downwardAPI labels and subPath files; an init container
 *   fills an emptyDir the app container reads; a memory emptyDir and the secret are tmpfs mounts;
 *   the configMap and secret files are read-only in the container; a non-root container reads a
 *   secret of mode 0440 through the pod's fsGroup, which is among its supplemental groups;
 * - an updated ConfigMap shows inside the running container;
 * - the projected service-account token (kube's `kube-api-access-*` volume and a volume with its
 *   own audience) is read inside the pod and used against the API: SelfSubjectReview and
 *   TokenReview show the pod binding;
 * - a missing ConfigMap gives kubelet's FailedMount event and ContainerCreating; the pod starts
 *   once the ConfigMap exists;
 * - a persistentVolumeClaim bound to a hostPath PersistentVolume is mounted;
 * - a hostPath DirectoryOrCreate is made, and a `Directory` that is not there fails the mount;
 * - a deleted pod leaves no mount (`/proc/self/mountinfo`) and no pod directory.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import { DEFAULT_BRIDGE } from '../../src/agent/network/cni.js';
import { writeKubeconfig } from '../../src/pki/kubeconfig.js';
import { BUSYBOX_IMAGE, requireContainerd, startContainerd, type Containerd } from '../support/containerd.js';
import { adminJson, adminTls, kubectlOutput, startTestServer, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer, waitReady } from '../support/users.js';

const run = promisify(execFile);
const enabled = requireContainerd();
const NODE = 'volumes-node-1';

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
}

describe.runIf(enabled)('pod volumes with capstan agent as a node', () => {
  let ctrd: Containerd;
  let server: TestServer;
  let dir: string;
  let root: string;
  let agent: Agent;
  let ownBridge = false;
  const k = (...args: string[]): Promise<string> => kubectlOutput('1.33', args, server.kubeconfigPath);
  const jsonpath = (pod: string, path: string): Promise<string> =>
    k('get', 'pod', pod, '-o', `jsonpath={${path}}`);
  const apply = async (name: string, obj: Record<string, unknown>): Promise<void> => {
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(obj));
    await k('apply', '-f', file);
  };
  const pod = (name: string, spec: Record<string, unknown>): Promise<void> =>
    apply(name, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { app: name, tier: 'test' } },
      spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, ...spec },
    });
  const deleteAndCheckTeardown = async (name: string): Promise<void> => {
    const uid = await jsonpath(name, '.metadata.uid');
    const podDir = join(root, 'pods', uid);
    expect(existsSync(podDir)).toBe(true);
    await k('delete', 'pod', name, '--wait=false');
    await expect
      .poll(async () => (await k('get', 'pods', '-o', 'name')).split('\n').includes(`pod/${name}`), {
        timeout: 60_000,
      })
      .toBe(false);
    await expect.poll(() => existsSync(podDir), { timeout: 10_000 }).toBe(false);
    expect(mountsUnder(podDir)).toEqual([]);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-volumes-e2e-'));
    root = join(dir, 'root');
    ctrd = await startContainerd();
    server = await startTestServer({ args: ['--authorization-mode=Node,RBAC'] });
    await waitReady(server);
    ownBridge = await run('ip', ['link', 'show', DEFAULT_BRIDGE]).then(
      () => false,
      () => true,
    );
    // The agent's own identity: a Node, confined by the Node authorizer.
    const tls = await clientTls(server, await clusterIssuer(server), `system:node:${NODE}`, ['system:nodes']);
    const nodeKubeconfig = join(dir, 'node.kubeconfig');
    await writeKubeconfig(nodeKubeconfig, {
      server: server.url,
      caPem: tls.ca,
      clientCertPem: tls.cert,
      clientKeyPem: tls.key,
      userName: `system:node:${NODE}`,
    });
    agent = new Agent(
      resolveConfig(
        agentFlagSet().parse([
          `--kubeconfig=${nodeKubeconfig}`,
          `--hostname-override=${NODE}`,
          `--container-runtime-endpoint=${ctrd.endpoint}`,
          `--root-dir=${root}`,
          `--pod-logs-dir=${join(dir, 'logs')}`,
          `--cni-conf-dir=${ctrd.cniConfDir}`,
          `--cgroup-root=${ctrd.cgroupParent}`,
          '--address=127.0.0.1',
          '--port=0',
          '--healthz-port=0',
          '--node-ip=127.0.0.1',
          '--pod-cidr=10.244.249.0/24',
        ]),
      ),
    );
    await agent.start();
    await k('create', 'configmap', 'app-config', '--from-literal=color=blue', '--from-literal=size=large');
    await k('create', 'secret', 'generic', 'app-secret', '--from-literal=password=s3cr3t');
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await server?.close();
    await ctrd?.stop();
    if (ownBridge) await run('ip', ['link', 'del', DEFAULT_BRIDGE]).catch(() => undefined);
    if (root) for (const m of mountsUnder(root).reverse()) await run('umount', [m]).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('mounts configMap, secret, downwardAPI, emptyDir and subPath files, and updates the ConfigMap in place', async () => {
    const script = [
      'echo "size=$(cat /cfg/size) password=$(cat /sec/pass) init=$(cat /shared/from-init)"',
      'echo "labels=$(cat /info/labels | tr "\\n" ",") name=$(cat /info/name)"',
      'echo "subpath=$(cat /etc/color.txt) expr=$(cat /per-pod/mark)"',
      'echo "secmode=$(stat -L -c %a /sec/pass)"',
      'if touch /cfg/x 2>/dev/null; then echo cfg=writable; else echo cfg=readonly; fi',
      'while true; do echo "color=$(cat /cfg/color)"; sleep 0.3; done',
    ].join('; ');
    await pod('files', {
      volumes: [
        { name: 'cfg', configMap: { name: 'app-config' } },
        {
          name: 'sec',
          secret: { secretName: 'app-secret', items: [{ key: 'password', path: 'pass', mode: 0o400 }] },
        },
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
            ],
          },
        },
        { name: 'shared', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
      ],
      initContainers: [
        {
          name: 'init',
          image: BUSYBOX_IMAGE,
          command: [
            'sh',
            '-c',
            'echo hello-from-init > /shared/from-init; mkdir -p /mem/files && echo marked > /mem/files/mark',
          ],
          volumeMounts: [
            { name: 'shared', mountPath: '/shared' },
            { name: 'mem', mountPath: '/mem' },
          ],
        },
      ],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', script],
          env: [{ name: 'SUB', value: 'files' }],
          volumeMounts: [
            { name: 'cfg', mountPath: '/cfg' },
            { name: 'sec', mountPath: '/sec' },
            { name: 'info', mountPath: '/info' },
            { name: 'shared', mountPath: '/shared', readOnly: true },
            { name: 'cfg', mountPath: '/etc/color.txt', subPath: 'color' },
            { name: 'mem', mountPath: '/per-pod', subPathExpr: '$(SUB)' },
          ],
        },
      ],
    });
    await expect.poll(() => jsonpath('files', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    await expect.poll(() => k('logs', 'files'), { timeout: 10_000 }).toContain('color=blue');
    const logs = await k('logs', 'files');
    expect(logs).toContain('size=large password=s3cr3t init=hello-from-init\n');
    expect(logs).toContain('labels=app="files",tier="test" name=files\n');
    expect(logs).toContain('subpath=blue expr=marked\n');
    expect(logs).toContain('secmode=400\n');
    expect(logs).toContain('cfg=readonly\n');

    // kube's layout on the host: ..data -> the timestamped payload, key -> ..data/key.
    const uid = await jsonpath('files', '.metadata.uid');
    const cfgDir = join(root, 'pods', uid, 'volumes', 'kubernetes.io~configmap', 'cfg');
    expect(readlinkSync(join(cfgDir, 'color'))).toBe('..data/color');
    expect(readlinkSync(join(cfgDir, '..data'))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\w+$/);
    expect(lstatSync(join(cfgDir, '..data')).isSymbolicLink()).toBe(true);
    const podMounts = mountsUnder(join(root, 'pods', uid));
    expect(podMounts).toContain(join(root, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'mem'));
    expect(podMounts).toContain(join(root, 'pods', uid, 'volumes', 'kubernetes.io~secret', 'sec'));

    await k('patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"color":"green"}}');
    await expect.poll(() => k('logs', 'files', '--tail=1'), { timeout: 20_000 }).toBe('color=green\n');
    expect(await jsonpath('files', '.status.containerStatuses[0].restartCount')).toBe('0');

    await deleteAndCheckTeardown('files');
  }, 150_000);

  it("lets a non-root container read a secret through the pod's fsGroup, a supplemental group", async () => {
    await pod('nonroot', {
      securityContext: { runAsUser: 1000, fsGroup: 1001, supplementalGroups: [1002] },
      restartPolicy: 'Never',
      volumes: [{ name: 'sec', secret: { secretName: 'app-secret', defaultMode: 0o440 } }],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: [
            'sh',
            '-c',
            'echo "groups=$(id -G) mode=$(stat -L -c %a:%g /sec/password) password=$(cat /sec/password)"',
          ],
          volumeMounts: [{ name: 'sec', mountPath: '/sec' }],
        },
      ],
    });
    await expect.poll(() => jsonpath('nonroot', '.status.phase'), { timeout: 60_000 }).toBe('Succeeded');
    // kubelet puts the fsGroup first among the supplemental groups (the primary group is root's 0).
    expect(await k('logs', 'nonroot')).toBe('groups=0 1001 1002 mode=440:1001 password=s3cr3t\n');
    await deleteAndCheckTeardown('nonroot');
  }, 120_000);

  it('projects a bound service-account token that works against the API server', async () => {
    await pod('token', {
      volumes: [
        {
          name: 'vault-token',
          projected: {
            sources: [{ serviceAccountToken: { audience: 'vault', expirationSeconds: 600, path: 'tok' } }],
          },
        },
      ],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: [
            'sh',
            '-c',
            'd=/var/run/secrets/kubernetes.io/serviceaccount; echo "token=$(cat $d/token)"; echo "ns=$(cat $d/namespace)"; ' +
              'echo "ca=$(head -1 $d/ca.crt)"; echo "vault=$(cat /vault/tok)"; exec sleep 3600',
          ],
          volumeMounts: [{ name: 'vault-token', mountPath: '/vault' }],
        },
      ],
    });
    await expect.poll(() => jsonpath('token', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    await expect.poll(() => k('logs', 'token'), { timeout: 10_000 }).toContain('vault=');
    const logs = await k('logs', 'token');
    const field = (name: string): string => new RegExp(`^${name}=(.*)$`, 'm').exec(logs)?.[1] ?? '';
    expect(field('ns')).toBe('default');
    expect(field('ca')).toBe('-----BEGIN CERTIFICATE-----');
    const token = field('token');
    expect(token.split('.')).toHaveLength(3);
    const podUid = await jsonpath('token', '.metadata.uid');

    // The token inside the pod is the pod's identity against the API.
    const ca = adminTls(server.kubeconfigPath).ca;
    const whoami = await adminJson(
      `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca },
      'POST',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { authorization: `Bearer ${token}` },
    );
    expect(whoami.status).toBe(201);
    const userInfo = (
      whoami.json['status'] as { userInfo: { username: string; extra: Record<string, string[]> } }
    ).userInfo;
    expect(userInfo.username).toBe('system:serviceaccount:default:default');
    expect(userInfo.extra['authentication.kubernetes.io/pod-name']).toEqual(['token']);
    expect(userInfo.extra['authentication.kubernetes.io/pod-uid']).toEqual([podUid]);
    expect(userInfo.extra['authentication.kubernetes.io/node-name']).toEqual([NODE]);

    // TokenReview of the pod's token shows the same binding.
    const file = join(dir, 'review.json');
    await writeFile(
      file,
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    );
    const review = (
      JSON.parse(await k('create', '-f', file, '-o', 'json')) as { status: Record<string, unknown> }
    ).status;
    expect(review).toMatchObject({
      authenticated: true,
      user: {
        username: 'system:serviceaccount:default:default',
        extra: { 'authentication.kubernetes.io/pod-uid': [podUid] },
      },
    });

    // The volume with its own audience and lifetime: a token for `vault`, bound to the pod,
    // that the API server (another audience) refuses.
    const vault = field('vault');
    const claims = JSON.parse(Buffer.from(vault.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      aud: string[];
      exp: number;
      iat: number;
      'kubernetes.io': { pod: { name: string; uid: string } };
    };
    expect(claims.aud).toEqual(['vault']);
    expect(claims.exp - claims.iat).toBe(600);
    expect(claims['kubernetes.io'].pod).toEqual({ name: 'token', uid: podUid });
    const refused = await adminJson(
      `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca },
      'POST',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { authorization: `Bearer ${vault}` },
    );
    expect(refused.status).toBe(401);

    await deleteAndCheckTeardown('token');
  }, 150_000);

  it('reports FailedMount for a missing ConfigMap and starts the pod once it exists', async () => {
    await pod('late', {
      volumes: [{ name: 'cfg', configMap: { name: 'late-config' } }],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', 'cat /cfg/greeting; echo; exec sleep 3600'],
          volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
        },
      ],
    });
    const events = (): Promise<string> =>
      k(
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=late,reason=FailedMount',
        '-o',
        'jsonpath={.items[*].message}',
      );
    await expect
      .poll(events, { timeout: 30_000 })
      .toContain('MountVolume.SetUp failed for volume "cfg" : configmap "late-config" not found');
    expect(await jsonpath('late', '.status.phase')).toBe('Pending');
    expect(await jsonpath('late', '.status.containerStatuses[0].state.waiting.reason')).toBe(
      'ContainerCreating',
    );
    expect(
      await k(
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=late,reason=FailedMount',
        '-o',
        'jsonpath={.items[0].type}',
      ),
    ).toBe('Warning');

    await k('create', 'configmap', 'late-config', '--from-literal=greeting=finally');
    await expect.poll(() => jsonpath('late', '.status.phase'), { timeout: 30_000 }).toBe('Running');
    await expect.poll(() => k('logs', 'late'), { timeout: 10_000 }).toBe('finally\n');
    await deleteAndCheckTeardown('late');
  }, 150_000);

  it('mounts a persistentVolumeClaim bound to a hostPath PersistentVolume', async () => {
    const pvDir = join(dir, 'pv-data');
    await apply('claim', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: '',
        volumeName: 'pv-data',
        resources: { requests: { storage: '1Mi' } },
      },
    });
    const claimUid = await k('get', 'pvc', 'data', '-o', 'jsonpath={.metadata.uid}');
    await apply('pv', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-data' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '1Mi' },
        storageClassName: '',
        hostPath: { path: pvDir, type: 'DirectoryOrCreate' },
        claimRef: { namespace: 'default', name: 'data', uid: claimUid },
      },
    });
    // No PV controller runs here: bind the claim by hand.
    await k(
      'patch',
      'pvc',
      'data',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Bound"}}',
    );
    await pod('claimer', {
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', 'echo kept > /data/file; exec sleep 3600'],
          volumeMounts: [{ name: 'd', mountPath: '/data' }],
        },
      ],
    });
    await expect.poll(() => jsonpath('claimer', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    await expect
      .poll(() => (existsSync(join(pvDir, 'file')) ? readFileSync(join(pvDir, 'file'), 'utf8') : ''), {
        timeout: 10_000,
      })
      .toBe('kept\n');
    await deleteAndCheckTeardown('claimer');
    expect(readFileSync(join(pvDir, 'file'), 'utf8')).toBe('kept\n');
  }, 150_000);

  it('checks hostPath types: DirectoryOrCreate is made, a missing Directory fails the mount', async () => {
    const hostDir = join(dir, 'host', 'made');
    await pod('hostpath', {
      volumes: [{ name: 'h', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } }],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', 'echo written-in-pod > /h/out; exec sleep 3600'],
          volumeMounts: [{ name: 'h', mountPath: '/h' }],
        },
      ],
    });
    await expect.poll(() => jsonpath('hostpath', '.status.phase'), { timeout: 60_000 }).toBe('Running');
    await expect
      .poll(() => (existsSync(join(hostDir, 'out')) ? readFileSync(join(hostDir, 'out'), 'utf8') : ''), {
        timeout: 10_000,
      })
      .toBe('written-in-pod\n');

    const missing = join(dir, 'host', 'missing');
    await pod('hostpath-bad', {
      volumes: [{ name: 'h', hostPath: { path: missing, type: 'Directory' } }],
      containers: [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sleep', '3600'],
          volumeMounts: [{ name: 'h', mountPath: '/h' }],
        },
      ],
    });
    await expect
      .poll(
        () =>
          k(
            'get',
            'events',
            '--field-selector',
            'involvedObject.name=hostpath-bad,reason=FailedMount',
            '-o',
            'jsonpath={.items[*].message}',
          ),
        { timeout: 30_000 },
      )
      .toContain(
        `MountVolume.SetUp failed for volume "h" : hostPath type check failed: ${missing} is not a directory`,
      );
    expect(existsSync(missing)).toBe(false);
    await deleteAndCheckTeardown('hostpath');
    await deleteAndCheckTeardown('hostpath-bad');
    // hostPath content is the host's: it stays.
    expect(readFileSync(join(hostDir, 'out'), 'utf8')).toBe('written-in-pod\n');
  }, 150_000);
});
