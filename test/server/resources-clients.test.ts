/**
 * Stock clients against the resource API of a whole `capstan server` (TLS, HTTP/2, the
 * foundation's harness): @kubernetes/client-node's typed APIs (CoreV1Api, AppsV1Api), its
 * KubernetesObjectApi (which resolves resources through discovery) and its Watch; and stock
 * kubectl (oldest and newest installed versions).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  kubectlOutput,
  kubectlPath,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
  clientFailure,
} from '../support/server.js';
import { deployment, type KObj } from './resources.support.js';

const failure = (p: Promise<unknown>) => clientFailure<KObj>(p);

let server: TestServer;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  server = await startTestServer();
  kc = server.kubeConfig;
});
afterAll(async () => {
  await server.close();
});

describe('@kubernetes/client-node typed APIs', () => {
  it('CoreV1Api: create, read, list, replace, patch, delete configmaps', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cm1', labels: { app: 'x' } }, data: { a: '1' } },
    });
    expect(created.metadata?.uid).toBeDefined();
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const read = await core.readNamespacedConfigMap({ name: 'cm1', namespace: 'default' });
    expect(read.data).toEqual({ a: '1' });
    const list = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=x' });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['cm1']);
    expect(list.metadata?.resourceVersion).toBeDefined();
    const replaced = await core.replaceNamespacedConfigMap({
      name: 'cm1',
      namespace: 'default',
      body: { ...read, data: { a: '2' } },
    });
    expect(replaced.data).toEqual({ a: '2' });
    const stale = await failure(
      core.replaceNamespacedConfigMap({
        name: 'cm1',
        namespace: 'default',
        body: { ...read, data: { a: '3' } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.body['reason']).toBe('Conflict');
    const patched = await core.patchNamespacedConfigMap(
      { name: 'cm1', namespace: 'default', body: [{ op: 'add', path: '/data/b', value: '9' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    expect(patched.data).toEqual({ a: '2', b: '9' });
    const merged = await core.patchNamespacedConfigMap(
      { name: 'cm1', namespace: 'default', body: { data: { a: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    expect(merged.data).toEqual({ b: '9' });
    await core.deleteNamespacedConfigMap({ name: 'cm1', namespace: 'default' });
    const gone = await failure(core.readNamespacedConfigMap({ name: 'cm1', namespace: 'default' }));
    expect(gone.code).toBe(404);
    expect(gone.body['message']).toBe('configmaps "cm1" not found');
  });

  it('CoreV1Api: namespaces and pods, errors for missing namespaces', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'client-ns' } } });
    const pod = await core.createNamespacedPod({
      namespace: 'client-ns',
      body: { metadata: { generateName: 'web-' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    });
    expect(pod.metadata?.name).toMatch(/^web-.{5}$/);
    expect(pod.status?.phase).toBe('Pending');
    const all = await core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=client-ns' });
    expect(all.items).toHaveLength(1);
    const missing = await failure(
      core.createNamespacedPod({
        namespace: 'nope',
        body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      }),
    );
    expect(missing.code).toBe(404);
    expect(missing.body['message']).toBe('namespaces "nope" not found');
    // kube answers a namespace DELETE with the namespace (typed V1Status by the generated client).
    const ns = (await core.deleteNamespace({ name: 'client-ns' })) as unknown as k8s.V1Namespace;
    expect(ns.status?.phase).toBe('Terminating');
  });

  it('AppsV1Api: deployments with status and scale subresources', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const d = await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('web') });
    expect(d.metadata?.generation).toBe(1);
    const scale = await apps.readNamespacedDeploymentScale({ name: 'web', namespace: 'default' });
    expect(scale.spec?.replicas).toBe(1);
    expect(scale.status?.selector).toBe('app=web');
    const scaled = await apps.replaceNamespacedDeploymentScale({
      name: 'web',
      namespace: 'default',
      body: { ...scale, spec: { replicas: 4 } },
    });
    expect(scaled.spec?.replicas).toBe(4);
    const current = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      name: 'web',
      namespace: 'default',
      body: { ...current, status: { replicas: 4, availableReplicas: 2 } },
    });
    expect(withStatus.status?.availableReplicas).toBe(2);
    expect(withStatus.spec?.replicas).toBe(4);
    const smp = await apps.patchNamespacedDeployment(
      {
        name: 'web',
        namespace: 'default',
        body: { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    expect(smp.spec?.template.spec?.containers.map((c) => c.image)).toEqual(['nginx:2']);
    expect(smp.metadata?.generation).toBe(3);
    const removed = await apps.deleteNamespacedDeployment({ name: 'web', namespace: 'default' });
    expect(removed.status).toBe('Success');
  });
});

describe('@kubernetes/client-node KubernetesObjectApi and Watch', () => {
  it('KubernetesObjectApi resolves resources by kind and works generically', async () => {
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const spec = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'generic', namespace: 'default' },
      stringData: { k: 'v' },
    };
    const created = (await client.create(spec)) as k8s.KubernetesObject;
    expect(created.metadata?.uid).toBeDefined();
    const read = await client.read({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'generic', namespace: 'default' },
    });
    expect((read as unknown as { data: Record<string, string> }).data).toEqual({
      k: Buffer.from('v').toString('base64'),
    });
    const role = await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'generic-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    } as k8s.KubernetesObject);
    expect(role.metadata?.name).toBe('generic-reader');
    const list = await client.list('v1', 'Secret', 'default');
    expect(list.items.map((i) => i.metadata?.name)).toContain('generic');
    await client.delete({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'generic', namespace: 'default' },
    });
    const gone = await failure(
      client.read({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'generic', namespace: 'default' } }),
    );
    expect(gone.code).toBe(404);
  });

  it('Watch delivers ADDED, MODIFIED, DELETED', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const watch = new k8s.Watch(kc);
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const req = await watch.watch(
      '/api/v1/namespaces/default/configmaps',
      { fieldSelector: 'metadata.name=watched' },
      (type: string, obj: k8s.V1ConfigMap) => {
        seen.push(`${type}:${obj.data?.['v'] ?? ''}`);
        if (type === 'DELETED') done();
      },
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'watched' }, data: { v: '1' } },
      });
      await core.patchNamespacedConfigMap(
        { name: 'watched', namespace: 'default', body: { data: { v: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ name: 'watched', namespace: 'default' });
      await finished;
      expect(seen).toEqual(['ADDED:1', 'MODIFIED:2', 'DELETED:2']);
    } finally {
      req.abort();
    }
  });
});

const VERSIONS = (['1.27', '1.33'] as const).filter((v: KubectlVersion) => kubectlPath(v) !== undefined);

describe.skipIf(VERSIONS.length === 0).each(VERSIONS)('kubectl %s', (version) => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-kubectl-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const kubectl = (...args: string[]): Promise<string> =>
    kubectlOutput(version, args, server.kubeconfigPath, 30_000);
  const v = version.replace('.', '-');

  it('create, get, label, scale, patch, delete --wait', async () => {
    const name = `kd-${v}`;
    const manifest = join(dir, 'd.json');
    writeFileSync(manifest, JSON.stringify(deployment(name)));
    expect(await kubectl('create', '--validate=false', '-f', manifest)).toContain(
      `deployment.apps/${name} created`,
    );
    const got = JSON.parse(await kubectl('get', 'deployment', name, '-o', 'json')) as KObj;
    expect(got['metadata'].name).toBe(name);
    expect(await kubectl('label', 'deployment', name, `tier=web-${v}`)).toContain('labeled');
    expect(await kubectl('get', 'deployments', '-l', `tier=web-${v}`, '-o', 'name')).toBe(
      `deployment.apps/${name}\n`,
    );
    expect(await kubectl('scale', 'deployment', name, '--replicas=3')).toContain('scaled');
    expect(
      await kubectl(
        'patch',
        'deployment',
        name,
        '-p',
        '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:3"}]}}}}',
      ),
    ).toContain('patched');
    const after = JSON.parse(await kubectl('get', 'deployment', name, '-o', 'json')) as KObj;
    expect(after['spec']?.replicas).toBe(3);
    expect(after['spec']?.template?.spec?.containers?.[0]?.image).toBe('nginx:3');
    expect(await kubectl('delete', 'deployment', name, '--wait=true', '--timeout=20s')).toContain('deleted');
    expect(await kubectl('get', 'deployments', '-l', `tier=web-${v}`, '-o', 'name')).toBe('');
  });

  it('delete --wait waits for finalizers, through a watch', async () => {
    const name = `held-${v}`;
    // `kubectl create configmap` sends protobuf (a later issue); a JSON manifest goes through.
    const manifest = join(dir, 'held.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, finalizers: ['example.com/hold'] },
      }),
    );
    await kubectl('create', '--validate=false', '-f', manifest);
    const deleting = kubectl('delete', 'configmap', name, '--wait=true', '--timeout=20s');
    // The object stays while the finalizer is there.
    await new Promise((r) => setTimeout(r, 500));
    const held = JSON.parse(await kubectl('get', 'configmap', name, '-o', 'json')) as KObj;
    expect(held['metadata'].deletionTimestamp).toBeDefined();
    await kubectl(
      'patch',
      'configmap',
      name,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    );
    expect(await deleting).toContain('deleted');
  });

  it('deletes a namespace with its content', async () => {
    const ns = `kns-${v}`;
    const manifest = join(dir, 'ns.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: ns } },
        ],
      }),
    );
    await kubectl('create', '--validate=false', '-f', manifest);
    // The root-CA publisher may already have added kube-root-ca.crt, as in kube.
    const names = (await kubectl('get', 'configmaps', '-n', ns, '-o', 'name')).split('\n');
    expect(names.filter((n) => n !== 'configmap/kube-root-ca.crt' && n !== '')).toEqual(['configmap/c']);
    expect(await kubectl('delete', 'namespace', ns, '--wait=true', '--timeout=30s')).toContain('deleted');
    const gone = await runKubectl(version, ['get', 'namespace', ns], server.kubeconfigPath);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('NotFound');
  });
});
