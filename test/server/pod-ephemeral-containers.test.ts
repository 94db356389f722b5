/**
 * A pod's `ephemeralcontainers` subresource, as kube-apiserver v1.33 serves it (every answer
 * below was read from kube-apiserver first, with the same kubectl commands):
 * - discovery lists it with kind Pod and verbs get, patch and update;
 * - `kubectl debug` adds a container through it; the write changes `spec.ephemeralContainers`
 *   only (the request's labels and other spec fields are dropped), bumps the generation and
 *   records the manager's entry with subresource `ephemeralcontainers`;
 * - existing ephemeral containers can be neither removed nor changed, and the fields kube's
 *   allow list leaves out are refused;
 * - the main resource still refuses them, and a static pod's mirror takes none.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlPath, runKubectl, type KubectlResult } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const SUB = '/api/v1/namespaces/default/pods/p1/ephemeralcontainers';

interface Pod {
  metadata: {
    generation?: number;
    labels?: Record<string, string>;
    managedFields?: { manager: string; subresource?: string; fieldsV1: unknown }[];
  };
  spec: { activeDeadlineSeconds?: number; ephemeralContainers?: Record<string, unknown>[] };
}

function kubectl(...args: string[]): Promise<KubectlResult> {
  return runKubectl('1.33', args, server.kubeconfigPath);
}

async function pod(name = 'p1'): Promise<Pod> {
  const r = await kubectl('get', 'pod', name, '-o', 'json', '--show-managed-fields');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Pod;
}

/** PUTs `body` to the subresource of p1 (kubectl's raw replace). */
async function put(body: unknown): Promise<KubectlResult> {
  const file = join(server.dataDir, 'body.json');
  await writeFile(file, JSON.stringify(body));
  return kubectl('replace', '--raw', SUB, '-f', file);
}

function patchSub(name: string, patch: unknown, type = 'strategic'): Promise<KubectlResult> {
  return kubectl(
    'patch',
    'pod',
    name,
    '--subresource=ephemeralcontainers',
    `--type=${type}`,
    '-p',
    JSON.stringify(patch),
    '-o',
    'json',
  );
}

beforeAll(async () => {
  if (kubectlPath('1.33') === undefined) throw new Error('kubectl 1.33 is missing');
  server = await startTestServer();
  const r = await kubectl(
    'run',
    'p1',
    '--image=busybox',
    '--restart=Never',
    '--command',
    '--',
    'sleep',
    '3600',
  );
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => server?.close());

describe('the ephemeralcontainers subresource', () => {
  it('is in discovery with kind Pod and verbs get, patch and update', async () => {
    const r = await kubectl('get', '--raw', '/api/v1');
    const resources = (
      JSON.parse(r.stdout) as { resources: { name: string; kind: string; verbs: string[] }[] }
    ).resources;
    expect(resources.find((x) => x.name === 'pods/ephemeralcontainers')).toMatchObject({
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
  });

  it('takes kubectl debug: the container with its defaults, a new generation, its own manager entry', async () => {
    expect((await pod()).metadata.generation).toBe(1);
    const r = await kubectl('debug', 'p1', '--image=busybox', '--target=p1', '-c', 'dbg', '--attach=false');
    expect(r.code, r.stderr).toBe(0);
    const p = await pod();
    expect(p.spec.ephemeralContainers).toEqual([
      {
        name: 'dbg',
        image: 'busybox',
        imagePullPolicy: 'Always',
        resources: {},
        targetContainerName: 'p1',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ]);
    expect(p.metadata.generation).toBe(2);
    const entry = p.metadata.managedFields?.find((m) => m.subresource === 'ephemeralcontainers');
    expect(Object.keys(entry?.fieldsV1 as object)).toEqual(['f:spec']);
    expect(Object.keys((entry?.fieldsV1 as Record<string, object>)['f:spec'] ?? {})).toEqual([
      'f:ephemeralContainers',
    ]);
  });

  it('answers GET with the pod', async () => {
    const r = await kubectl('get', '--raw', SUB);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Pod', metadata: { name: 'p1' } });
  });

  it('refuses to remove or change an existing ephemeral container', async () => {
    const p = await pod();
    const removed = await put({ ...p, spec: { ...p.spec, ephemeralContainers: [] } });
    expect(removed.code).not.toBe(0);
    expect(removed.stderr).toContain(
      'The Pod "p1" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed',
    );
    const changed = await put({
      ...p,
      spec: { ...p.spec, ephemeralContainers: [{ ...p.spec.ephemeralContainers?.[0], image: 'busybox:2' }] },
    });
    expect(changed.stderr).toContain(
      'The Pod "p1" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed',
    );
  });

  it('refuses the fields an ephemeral container may not set, and names it must not reuse', async () => {
    const r = await patchSub('p1', {
      spec: {
        ephemeralContainers: [
          {
            name: 'e2',
            image: 'busybox',
            ports: [{ containerPort: 80 }],
            resources: { limits: { cpu: '1' } },
            readinessProbe: { exec: { command: ['true'] } },
          },
        ],
      },
    });
    expect(r.stderr).toContain(
      'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
    );
    expect(r.stderr).toContain(
      'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
    );
    expect(r.stderr).toContain(
      'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
    );
    const dup = await patchSub('p1', { spec: { ephemeralContainers: [{ name: 'p1', image: 'busybox' }] } });
    expect(dup.stderr).toContain(
      'The Pod "p1" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "p1"',
    );
    const target = await patchSub('p1', {
      spec: { ephemeralContainers: [{ name: 'e3', image: 'busybox', targetContainerName: 'dbg' }] },
    });
    expect(target.stderr).toContain('spec.ephemeralContainers[0].targetContainerName: Not found: "dbg"');
  });

  it('writes nothing but the ephemeral containers', async () => {
    const before = await pod();
    const r = await patchSub(
      'p1',
      { metadata: { labels: { x: 'y' } }, spec: { activeDeadlineSeconds: 5 } },
      'merge',
    );
    expect(r.code, r.stderr).toBe(0);
    const after = JSON.parse(r.stdout) as Pod;
    expect(after.metadata.labels).toEqual({ run: 'p1' });
    expect(after.spec.activeDeadlineSeconds).toBeUndefined();
    expect(after.metadata.generation).toBe(before.metadata.generation);
  });

  it('leaves the main resource refusing them', async () => {
    const r = await kubectl(
      'patch',
      'pod',
      'p1',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'e6', image: 'busybox' } },
      ]),
    );
    expect(r.stderr).toContain('The Pod "p1" is invalid: spec: Forbidden: pod updates may not change fields');
  });

  it("refuses them on a static pod's mirror", async () => {
    const mirror = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'm1', annotations: { 'kubernetes.io/config.mirror': 'abc' } },
      spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'busybox' }] },
    };
    const file = join(server.dataDir, 'mirror.json');
    await writeFile(file, JSON.stringify(mirror));
    expect((await kubectl('create', '-f', file)).code).toBe(0);
    const r = await patchSub('m1', { spec: { ephemeralContainers: [{ name: 'e1', image: 'busybox' }] } });
    expect(r.stderr).toContain(
      'The Pod "m1" is invalid: []: Forbidden: static pods do not support ephemeral containers',
    );
  });

  it('is not served for other kinds', async () => {
    const r = await kubectl(
      'get',
      '--raw',
      '/apis/apps/v1/namespaces/default/deployments/x/ephemeralcontainers',
    );
    expect(r.stderr).toContain('NotFound');
  });
});
