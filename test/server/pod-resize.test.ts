/**
 * A pod's `resize` subresource (in-place resize), as kube-apiserver v1.33 serves it (every answer
 * below was read from kube-apiserver first, with the same kubectl commands):
 * - discovery lists it with kind Pod and verbs get, patch and update, and OpenAPI has its
 *   operations;
 * - a write through it changes the containers' and sidecars' `resources` only (the request's
 *   labels, images and other spec fields are dropped), bumps the generation and records the
 *   manager's entry with subresource `resize`;
 * - kube's rules hold: only cpu and memory change, no request or limit is removed, the QoS class
 *   stays, a memory limit is lowered or added only with `RestartContainer`, containers keep
 *   their names and order, regular init containers keep theirs, static pods and pods on a node
 *   that reports no container resources are refused;
 * - the main resource still refuses a change of resources;
 * - ResourceQuota and LimitRanger check a resize as kube's do.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlPath, runKubectl, type KubectlResult } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

interface Pod {
  metadata: {
    generation?: number;
    labels?: Record<string, string>;
    managedFields?: { manager: string; operation: string; subresource?: string; fieldsV1: unknown }[];
  };
  spec: {
    activeDeadlineSeconds?: number;
    containers: { name: string; image: string; resources?: unknown }[];
    initContainers?: { name: string; image: string; resources?: unknown }[];
  };
}

function kubectl(...args: string[]): Promise<KubectlResult> {
  return runKubectl('1.33', args, server.kubeconfigPath);
}

async function create(name: string, body: unknown): Promise<void> {
  const file = join(server.dataDir, `${name}.json`);
  await writeFile(file, JSON.stringify(body));
  const r = await kubectl('create', '-f', file);
  expect(r.code, r.stderr).toBe(0);
}

function pod(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): unknown {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec };
}

function resize(name: string, patch: unknown, type = 'strategic'): Promise<KubectlResult> {
  return kubectl(
    'patch',
    'pod',
    name,
    '--subresource=resize',
    `--type=${type}`,
    '-p',
    JSON.stringify(patch),
    '-o',
    'json',
    '--show-managed-fields',
  );
}

/** A strategic patch of one container's resources. */
function resources(container: string, r: unknown, list = 'containers'): unknown {
  return { spec: { [list]: [{ name: container, resources: r }] } };
}

async function invalid(name: string, patch: unknown, message: string, type = 'strategic'): Promise<void> {
  const r = await resize(name, patch, type);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(`The Pod "${name}" is invalid: ${message}`);
}

beforeAll(async () => {
  if (kubectlPath('1.33') === undefined) throw new Error('kubectl 1.33 is missing');
  server = await startTestServer({ controllers: ['resourcequota'] });
  await create(
    'r1',
    pod(
      'r1',
      {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            resources: {
              requests: { cpu: '100m', memory: '32Mi' },
              limits: { cpu: '200m', memory: '64Mi' },
            },
            resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          },
          { name: 'd', image: 'busybox', resources: { requests: { cpu: '100m' } } },
        ],
      },
      { labels: { a: 'b' } },
    ),
  );
  const guaranteed = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '100m', memory: '32Mi' } };
  await create('r2', pod('r2', { containers: [{ name: 'c', image: 'busybox', resources: guaranteed }] }));
  await create(
    'r3',
    pod('r3', {
      initContainers: [
        { name: 'i', image: 'busybox', resources: { requests: { cpu: '100m' } } },
        { name: 's', image: 'busybox', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
      ],
      containers: [
        { name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' }, limits: { memory: '64Mi' } } },
      ],
    }),
  );
});

afterAll(async () => server?.close());

describe('the resize subresource', () => {
  it('is in discovery with kind Pod and verbs get, patch and update, and in OpenAPI', async () => {
    const r = await kubectl('get', '--raw', '/api/v1');
    const list = (JSON.parse(r.stdout) as { resources: { name: string; kind: string; verbs: string[] }[] })
      .resources;
    expect(list.find((x) => x.name === 'pods/resize')).toMatchObject({
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
    const v2 = JSON.parse((await kubectl('get', '--raw', '/openapi/v2')).stdout) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const path = v2.paths['/api/v1/namespaces/{namespace}/pods/{name}/resize'] ?? {};
    expect([path['get']?.operationId, path['put']?.operationId, path['patch']?.operationId]).toEqual([
      'readCoreV1NamespacedPodResize',
      'replaceCoreV1NamespacedPodResize',
      'patchCoreV1NamespacedPodResize',
    ]);
  });

  it('changes cpu in place: a new generation and the manager entry of the subresource', async () => {
    const got = await kubectl('get', '--raw', '/api/v1/namespaces/default/pods/r1/resize');
    expect(JSON.parse(got.stdout)).toMatchObject({ kind: 'Pod', metadata: { name: 'r1', generation: 1 } });
    const r = await resize('r1', resources('c', { requests: { cpu: '150m' }, limits: { cpu: '300m' } }));
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout) as Pod;
    expect(p.spec.containers[0]?.resources).toEqual({
      requests: { cpu: '150m', memory: '32Mi' },
      limits: { cpu: '300m', memory: '64Mi' },
    });
    expect(p.metadata.generation).toBe(2);
    const entry = p.metadata.managedFields?.find((m) => m.subresource === 'resize');
    expect(entry).toMatchObject({ manager: 'kubectl-patch', operation: 'Update' });
    expect(entry?.fieldsV1).toEqual({
      'f:spec': {
        'f:containers': {
          'k:{"name":"c"}': { 'f:resources': { 'f:limits': { 'f:cpu': {} }, 'f:requests': { 'f:cpu': {} } } },
        },
      },
    });
  });

  it('lowers a memory limit of a container that restarts for memory', async () => {
    const r = await resize('r1', resources('c', { limits: { memory: '48Mi' } }));
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Pod).spec.containers[0]?.resources).toMatchObject({
      limits: { memory: '48Mi' },
    });
  });

  it('writes nothing but the resources', async () => {
    const r = await resize('r1', {
      metadata: { labels: { x: 'y' } },
      spec: {
        activeDeadlineSeconds: 5,
        containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '160m' } } }],
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout) as Pod;
    expect(p.metadata.labels).toEqual({ a: 'b' });
    expect(p.spec.activeDeadlineSeconds).toBeUndefined();
    expect(p.spec.containers[0]?.image).toBe('busybox');
    expect(p.spec.containers[0]?.resources).toMatchObject({ requests: { cpu: '160m' } });
  });

  it("refuses what kube's resize rules refuse, with kube's messages", async () => {
    await invalid(
      'r2',
      resources('c', { requests: { memory: '16Mi' }, limits: { memory: '16Mi' } }),
      'spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer',
    );
    await invalid(
      'r2',
      resources('c', { limits: { cpu: '200m' } }),
      'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
    );
    await invalid(
      'r1',
      [{ op: 'remove', path: '/spec/containers/1/resources/requests' }],
      'spec.containers[1].resources.requests: Forbidden: resource requests cannot be removed',
      'json',
    );
    await invalid(
      'r1',
      resources('d', { limits: { memory: '64Mi' } }),
      'spec.containers[1].resources.limits[memory]: Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer',
    );
    await invalid(
      'r1',
      resources('d', { requests: { 'ephemeral-storage': '1Gi' } }),
      'spec: Forbidden: only cpu and memory resources are mutable',
    );
    await invalid(
      'r1',
      {
        spec: {
          containers: [
            { name: 'd', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] },
          ],
        },
      },
      'spec: Forbidden: only cpu and memory resources are mutable',
    );
    await invalid(
      'r1',
      [{ op: 'replace', path: '/spec/containers/1/name', value: 'e' }],
      'spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize',
      'json',
    );
    await invalid(
      'r1',
      [{ op: 'add', path: '/spec/containers/-', value: { name: 'f', image: 'busybox' } }],
      'spec.containers: Forbidden: containers may not be added or removed on resize',
      'json',
    );
    await invalid(
      'r3',
      resources('i', { requests: { cpu: '200m' } }, 'initContainers'),
      'spec: Forbidden: resources for non-sidecar init containers are immutable',
    );
  });

  it('resizes a sidecar', async () => {
    const r = await resize('r3', resources('s', { requests: { cpu: '200m' } }, 'initContainers'));
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Pod).spec.initContainers?.[1]?.resources).toEqual({
      requests: { cpu: '200m' },
    });
  });

  it('leaves the main resource refusing a change of resources', async () => {
    const r = await kubectl(
      'patch',
      'pod',
      'r1',
      '-p',
      JSON.stringify(resources('c', { requests: { cpu: '170m' } })),
    );
    expect(r.stderr).toContain('The Pod "r1" is invalid: spec: Forbidden: pod updates may not change fields');
  });

  it('refuses static pods, and pods whose node reports no container resources', async () => {
    await create(
      'm1',
      pod(
        'm1',
        {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
        },
        { annotations: { 'kubernetes.io/config.mirror': 'x' } },
      ),
    );
    await invalid(
      'm1',
      resources('c', { requests: { cpu: '150m' } }),
      '[]: Forbidden: static pods cannot be resized',
    );
    const running = (withResources: boolean): unknown => ({
      status: {
        containerStatuses: [
          {
            name: 'c',
            image: 'busybox',
            imageID: '',
            ready: true,
            restartCount: 0,
            state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
            ...(withResources ? { resources: { requests: { cpu: '100m' } } } : {}),
          },
        ],
      },
    });
    const raise = resources('c', { requests: { cpu: '200m' }, limits: { cpu: '200m' } });
    expect(
      (await kubectl('patch', 'pod', 'r2', '--subresource=status', '-p', JSON.stringify(running(false))))
        .code,
    ).toBe(0);
    await invalid('r2', raise, 'spec: Forbidden: Pod running on node without support for resize');
    expect(
      (await kubectl('patch', 'pod', 'r2', '--subresource=status', '-p', JSON.stringify(running(true)))).code,
    ).toBe(0);
    const r = await resize('r2', raise);
    expect(r.code, r.stderr).toBe(0);
  });

  it('is checked against ResourceQuota and LimitRange', async () => {
    await create('q', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q' },
      spec: { hard: { 'requests.cpu': '300m' } },
    });
    await expect
      .poll(async () => (await kubectl('get', 'quota', 'q', '-o', 'jsonpath={.status.hard}')).stdout, {
        timeout: 10_000,
      })
      .not.toBe('');
    // The quota charges what the resize adds (r2: 200m to 400m).
    const quotaRefusal = await resize(
      'r2',
      resources('c', { requests: { cpu: '400m' }, limits: { cpu: '400m' } }),
    );
    expect(quotaRefusal.stderr).toContain(
      'pods "r2" is forbidden: exceeded quota: q, requested: requests.cpu=200m',
    );
    expect((await kubectl('delete', 'quota', 'q')).code).toBe(0);
    await create('lr', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'lr' },
      spec: { limits: [{ type: 'Container', max: { cpu: '500m' } }] },
    });
    const limitRefusal = await resize(
      'r2',
      resources('c', { requests: { cpu: '600m' }, limits: { cpu: '600m' } }),
    );
    expect(limitRefusal.stderr).toContain(
      'pods "r2" is forbidden: maximum cpu usage per Container is 500m, but limit is 600m',
    );
  });

  it('is not served for other kinds, nor for POST', async () => {
    const other = await kubectl('get', '--raw', '/apis/apps/v1/namespaces/default/deployments/x/resize');
    expect(other.stderr).toContain('NotFound');
    const file = join(server.dataDir, 'empty.json');
    await writeFile(file, '{}');
    const post = await kubectl('create', '--raw', '/api/v1/namespaces/default/pods/r1/resize', '-f', file);
    expect(post.stderr).toContain('MethodNotAllowed');
  });
});
