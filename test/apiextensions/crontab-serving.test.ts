/**
 * The documentation's CronTab CRD served live, through raw HTTPS and @kubernetes/client-node:
 * NamesAccepted and Established within a second, the kind in discovery (legacy and aggregated),
 * CRUD, list and watch of CronTabs, the status and scale subresources, Table rows from the
 * printer columns, kube's 406/415 for protobuf, strategic merge patch refused with 415, and
 * deleting the CRD deletes its objects (Terminating condition, cleanup finalizer; objects with
 * finalizers hold it, creates are refused meanwhile).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';

const CRD = parse(readFileSync('fixtures/crds/crontab.yaml', 'utf8')) as Record<string, unknown>;
const CRONTAB = parse(readFileSync('fixtures/crds/my-crontab.yaml', 'utf8')) as Record<string, unknown>;
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS_PATH = '/apis/stable.example.com/v1/namespaces/default/crontabs';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;

async function call(
  path: string,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, unknown>; raw: string }> {
  const res = await adminJson(`${server.url}${path}`, tls, method, body, headers);
  return { ...res, raw: res.text };
}

type Cond = { type: string; status: string; reason?: string; message?: string };

async function conditions(name: string): Promise<Cond[]> {
  const res = await call(`${CRD_PATH}/${name}`);
  return (res.json['status'] as { conditions?: Cond[] } | undefined)?.conditions ?? [];
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('the CronTab CRD', () => {
  it('becomes Established within a second, with its names accepted', async () => {
    const created = await call(CRD_PATH, 'POST', CRD);
    expect(created.status).toBe(201);
    const start = Date.now();
    const conds = await waitFor('Established', async () => {
      const c = await conditions('crontabs.stable.example.com');
      return c.some((x) => x.type === 'Established' && x.status === 'True') ? c : undefined;
    });
    expect(Date.now() - start).toBeLessThan(1000);
    expect(conds.find((c) => c.type === 'NamesAccepted')).toMatchObject({
      status: 'True',
      reason: 'NoConflicts',
      message: 'no conflicts found',
    });
    expect(conds.find((c) => c.type === 'Established')).toMatchObject({
      reason: 'InitialNamesAccepted',
      message: 'the initial names have been accepted',
    });
    const crd = await call(`${CRD_PATH}/crontabs.stable.example.com`);
    const status = crd.json['status'] as Record<string, unknown>;
    expect(status['acceptedNames']).toEqual({
      plural: 'crontabs',
      singular: 'crontab',
      shortNames: ['ct'],
      kind: 'CronTab',
      listKind: 'CronTabList',
    });
    expect(status['storedVersions']).toEqual(['v1']);
  });

  it('is in discovery: /apis, the group, the group version and aggregated discovery', async () => {
    const apis = await call('/apis');
    const groups = apis.json['groups'] as { name: string; preferredVersion: { version: string } }[];
    expect(groups.find((g) => g.name === 'stable.example.com')?.preferredVersion.version).toBe('v1');
    const group = await call('/apis/stable.example.com');
    expect(group.status).toBe(200);
    const list = await call('/apis/stable.example.com/v1');
    const resources = list.json['resources'] as { name: string; kind: string; shortNames?: string[] }[];
    // kube lists a custom resource's subresources unsorted: status, then scale.
    expect(resources.map((r) => r.name)).toEqual(['crontabs', 'crontabs/status', 'crontabs/scale']);
    expect(resources[0]).toMatchObject({ kind: 'CronTab', namespaced: true, shortNames: ['ct'] });
    const agg = await call('/apis', 'GET', undefined, {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    });
    const items = agg.json['items'] as {
      metadata: { name: string };
      versions: { resources: { resource: string }[] }[];
    }[];
    const item = items.find((i) => i.metadata.name === 'stable.example.com');
    expect(item?.versions[0]?.resources.map((r) => r.resource)).toEqual(['crontabs']);
  });

  it('serves CRUD, list and watch through client-node', async () => {
    const api = server.kubeConfig.makeApiClient(CustomObjectsApi);
    const events: string[] = [];
    const watch = new Watch(server.kubeConfig);
    const req = await watch.watch(
      `${NS_PATH}`,
      {},
      (type: string, obj: { metadata: { name: string } }) => events.push(`${type} ${obj.metadata.name}`),
      () => undefined,
    );
    const created = (await api.createNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'crontabs',
      body: CRONTAB,
    })) as { metadata: { generation: number; uid: string } };
    expect(created.metadata.generation).toBe(1);
    const got = (await api.getNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'crontabs',
      name: 'my-new-cron-object',
    })) as { spec: { image: string } };
    expect(got.spec.image).toBe('my-awesome-cron-image');
    const listed = (await api.listNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'crontabs',
    })) as { kind: string; items: unknown[] };
    expect(listed.kind).toBe('CronTabList');
    expect(listed.items).toHaveLength(1);
    await waitFor('the ADDED event', async () =>
      events.includes('ADDED my-new-cron-object') ? true : undefined,
    );
    req.abort();
  });

  it('tracks generation and keeps status out of main writes, spec out of status writes', async () => {
    const path = `${NS_PATH}/my-new-cron-object`;
    const merged = await call(
      path,
      'PATCH',
      { spec: { image: 'v2' }, status: { replicas: 7 } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(merged.status).toBe(200);
    expect((merged.json['metadata'] as { generation: number }).generation).toBe(2);
    expect(merged.json['status']).toBeUndefined();
    const status = await call(
      `${path}/status`,
      'PATCH',
      { spec: { image: 'v3' }, status: { replicas: 3, labelSelector: 'app=cron' } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(status.status).toBe(200);
    expect(status.json['status']).toEqual({ replicas: 3, labelSelector: 'app=cron' });
    expect((status.json['spec'] as { image: string }).image).toBe('v2');
    expect((status.json['metadata'] as { generation: number }).generation).toBe(2);
  });

  it('serves the scale subresource from the scale paths', async () => {
    const path = `${NS_PATH}/my-new-cron-object/scale`;
    const scale = await call(path);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 3, selector: 'app=cron' },
    });
    const patched = await call(
      path,
      'PATCH',
      { spec: { replicas: 5 } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(patched.status).toBe(200);
    const obj = await call(`${NS_PATH}/my-new-cron-object`);
    expect((obj.json['spec'] as { replicas: number }).replicas).toBe(5);
  });

  it('answers a Table with the printer columns', async () => {
    const table = await call(NS_PATH, 'GET', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.status).toBe(200);
    const cols = (table.json['columnDefinitions'] as { name: string }[]).map((c) => c.name);
    expect(cols).toEqual(['Name', 'Spec', 'Replicas', 'Age']);
    const row = (table.json['rows'] as { cells: unknown[] }[])[0];
    expect(row?.cells.slice(0, 3)).toEqual(['my-new-cron-object', '* * * * */5', 5]);
    expect(row?.cells[3]).toMatch(/^\d+s$/);
  });

  it('refuses protobuf (406, 415) and strategic merge patch (415) as kube', async () => {
    const get = await call(NS_PATH, 'GET', undefined, { accept: 'application/vnd.kubernetes.protobuf' });
    expect(get.status).toBe(406);
    // A well-formed envelope (runtime.Unknown with TypeMeta only): refused for its media type.
    const av = 'stable.example.com/v1';
    const typeMeta = `\u000a${String.fromCharCode(av.length)}${av}\u0012\u0007CronTab`;
    const envelope = `k8s\u0000\u000a${String.fromCharCode(typeMeta.length)}${typeMeta}`;
    const post = await call(NS_PATH, 'POST', envelope, {
      'content-type': 'application/vnd.kubernetes.protobuf',
    });
    expect(post.json['reason']).toBe('UnsupportedMediaType');
    expect(post.status).toBe(415);
    const smp = await call(
      `${NS_PATH}/my-new-cron-object`,
      'PATCH',
      { spec: { image: 'x' } },
      {
        'content-type': 'application/strategic-merge-patch+json',
      },
    );
    expect(smp.status).toBe(415);
    expect(smp.json['reason']).toBe('UnsupportedMediaType');
    // kube-apiserver v1.33.13's words: the patch formats custom resources take, on every
    // subresource (the scale subresource's Scale included), and nothing about what was sent.
    const patchFormats =
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
    expect(smp.json['message']).toBe(patchFormats);
    for (const [sub, type] of [
      ['/scale', 'application/strategic-merge-patch+json'],
      ['/status', 'text/plain'],
      ['', 'application/json'],
    ] as const) {
      const refused = await call(
        `${NS_PATH}/my-new-cron-object${sub}`,
        'PATCH',
        { spec: {} },
        { 'content-type': type },
      );
      expect([refused.status, refused.json['message']], `${sub} ${type}`).toEqual([415, patchFormats]);
    }
  });

  it("reads a custom object's metadata as kube's typed ObjectMeta: empty maps and lists go", async () => {
    const created = await call(`${NS_PATH}?fieldManager=maker`, 'POST', {
      ...CRONTAB,
      metadata: { name: 'bare-meta', labels: {}, annotations: {}, finalizers: [] },
    });
    expect(created.status).toBe(201);
    const meta = created.json['metadata'] as Record<string, unknown>;
    expect(meta['labels']).toBeUndefined();
    expect(meta['annotations']).toBeUndefined();
    expect(meta['finalizers']).toBeUndefined();
    const entries = meta['managedFields'] as { fieldsV1: Record<string, unknown> }[];
    expect(entries.map((e) => Object.keys(e.fieldsV1))).toEqual([['f:spec']]);
    expect((await call(`${NS_PATH}/bare-meta`, 'DELETE')).status).toBe(200);
  });

  it('stores custom objects as JSON under /registry/<group>/<plural>/<ns>/<name>', async () => {
    const { kv } = await server.store.get('/stable.example.com/crontabs/default/my-new-cron-object');
    expect(kv).toBeDefined();
    expect(Buffer.from(kv?.value ?? []).toString('utf8')).toMatch(/^\{"kind":"CronTab"/);
  });

  it('deletes its objects when the CRD is deleted, then itself and its routes', async () => {
    await call(NS_PATH, 'POST', { ...CRONTAB, metadata: { name: 'second' } });
    // An object with a finalizer holds the CRD in Terminating until the finalizer goes.
    await call(NS_PATH, 'POST', { ...CRONTAB, metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const deleted = await call(`${CRD_PATH}/crontabs.stable.example.com`, 'DELETE');
    expect(deleted.status).toBe(200);
    expect((deleted.json['metadata'] as { finalizers?: string[] }).finalizers).toContain(
      'customresourcecleanup.apiextensions.k8s.io',
    );
    expect((deleted.json['status'] as { conditions: Cond[] }).conditions).toContainEqual(
      expect.objectContaining({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending' }),
    );
    await waitFor('the held object to be deleting', async () => {
      const held = await call(`${NS_PATH}/held`);
      return (held.json['metadata'] as { deletionTimestamp?: string }).deletionTimestamp;
    });
    const terminating = await conditions('crontabs.stable.example.com');
    expect(terminating.find((c) => c.type === 'Terminating')).toMatchObject({
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
    const refused = await call(NS_PATH, 'POST', { ...CRONTAB, metadata: { name: 'late' } });
    expect(refused.status).toBe(405);
    expect(refused.json['message']).toBe(
      'create not allowed while custom resource definition is terminating',
    );
    const released = await call(
      `${NS_PATH}/held`,
      'PATCH',
      { metadata: { finalizers: null } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(released.status).toBe(200);
    await waitFor('the CRD to go', async () =>
      (await call(`${CRD_PATH}/crontabs.stable.example.com`)).status === 404 ? true : undefined,
    );
    const left = await server.store.range({ prefix: '/stable.example.com/crontabs/' });
    expect(left.items).toHaveLength(0);
    expect((await call(NS_PATH)).status).toBe(404);
    expect((await call('/apis/stable.example.com/v1')).status).toBe(404);
  });
});
