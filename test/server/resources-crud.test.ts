/**
 * The resource verbs over raw HTTP (`app.inject`): create, get, update, delete, and every
 * metadata rule and error case of the generic handler.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_REQUEST_BODY_BYTES } from '../../src/http/error-handler.js';
import { deployment, json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';

let s: ResourceApp;
beforeEach(async () => {
  s = await startResourceApp();
});
afterEach(async () => {
  await s.close();
});

async function create(url: string, body: unknown) {
  const r = await s.request(json('POST', url, body));
  return { code: r.statusCode, body: r.json() };
}

describe('create and get', () => {
  it('creates with server metadata and reads the same object back', async () => {
    const r = await create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', labels: { x: 'y' } },
      data: { k: 'v' },
    });
    expect(r.code).toBe(201);
    const meta = r.body['metadata'];
    expect(meta.name).toBe('a');
    expect(meta.namespace).toBe('default');
    expect(meta.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(meta.resourceVersion).toMatch(/^[1-9][0-9]*$/);
    expect(meta.generation).toBeUndefined(); // ConfigMaps do not track generation (as kube)
    const g = await s.request(json('GET', `${CM}/a`));
    expect(g.statusCode).toBe(200);
    expect(g.json()).toEqual(r.body);
  });

  it('stores objects without resourceVersion and serves the mod revision', async () => {
    const r = await create(CM, { metadata: { name: 'a' } });
    const { kv } = await s.store.get('/configmaps/default/a');
    expect(kv).toBeDefined();
    const stored = JSON.parse(Buffer.from(kv!.value).toString()) as KObj;
    expect(stored['metadata'].resourceVersion).toBeUndefined();
    expect(r.body['metadata'].resourceVersion).toBe(String(kv!.modRevision));
  });

  it('fills kind and apiVersion when the body omits them', async () => {
    const r = await create(CM, { metadata: { name: 'a' } });
    expect(r.body['kind']).toBe('ConfigMap');
    expect(r.body['apiVersion']).toBe('v1');
  });

  it('ignores client-set uid and creationTimestamp, clears deletion fields', async () => {
    const r = await create(CM, {
      metadata: {
        name: 'a',
        uid: 'mine',
        creationTimestamp: '2000-01-01T00:00:00Z',
        deletionTimestamp: '2000-01-01T00:00:00Z',
      },
    });
    expect(r.code).toBe(201);
    expect(r.body['metadata'].uid).not.toBe('mine');
    expect(r.body['metadata'].creationTimestamp).not.toBe('2000-01-01T00:00:00Z');
    expect(r.body['metadata'].deletionTimestamp).toBeUndefined();
  });

  it('generates names from generateName with a 5-character suffix', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const r = await create(CM, { metadata: { generateName: 'web-' } });
      expect(r.code).toBe(201);
      expect(r.body['metadata'].name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      names.add(r.body['metadata'].name as string);
    }
    expect(names.size).toBe(5);
  });

  it('sets generation 1 on create for kinds that track it', async () => {
    const r = await create('/apis/apps/v1/namespaces/default/deployments', deployment('d'));
    expect(r.code).toBe(201);
    expect(r.body['metadata'].generation).toBe(1);
  });

  it('drops status on create for kinds with a status subresource', async () => {
    const r = await create('/apis/apps/v1/namespaces/default/deployments', {
      ...deployment('d'),
      status: { replicas: 7 },
    });
    expect(r.body['status']).toBeUndefined();
  });

  it('answers 409 AlreadyExists for a taken name, and stores nothing', async () => {
    await create(CM, { metadata: { name: 'a' }, data: { v: '1' } });
    const r = await create(CM, { metadata: { name: 'a' }, data: { v: '2' } });
    expect(r.code).toBe(409);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', code: 409 });
    expect(r.body['message']).toBe('configmaps "a" already exists');
    const g = await s.request(json('GET', `${CM}/a`));
    expect(g.json()['data']).toEqual({ v: '1' });
  });

  it('answers 404 NotFound for a missing object', async () => {
    const r = await s.request(json('GET', `${CM}/nope`));
    expect(r.statusCode).toBe(404);
    expect(r.json()).toMatchObject({
      reason: 'NotFound',
      message: 'configmaps "nope" not found',
      details: { name: 'nope', kind: 'configmaps' },
    });
  });

  it('names the group in errors of named groups', async () => {
    const r = await s.request(json('GET', '/apis/apps/v1/namespaces/default/deployments/nope'));
    expect(r.json()).toMatchObject({
      message: 'deployments.apps "nope" not found',
      details: { group: 'apps' },
    });
  });

  it('serves cluster-scoped kinds at the cluster path', async () => {
    const r = await create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'system:reader' },
      rules: [],
    });
    expect(r.code).toBe(201);
    expect(r.body['metadata'].namespace).toBeUndefined();
    const g = await s.request(json('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:reader'));
    expect(g.statusCode).toBe(200);
  });

  it('accepts YAML bodies', async () => {
    const r = await s.request({
      method: 'POST',
      url: CM,
      headers: { 'content-type': 'application/yaml' },
      payload: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n',
    });
    expect(r.statusCode).toBe(201);
    expect(r.json()['data']).toEqual({ k: 'v' });
  });
});

describe('request errors (nothing stored)', () => {
  /** ConfigMaps stored outside kube-system (where the server keeps its own). */
  async function count(): Promise<number> {
    const all = await s.store.range({ prefix: '/configmaps/' }, { countOnly: true });
    const own = await s.store.range({ prefix: '/configmaps/kube-system/' }, { countOnly: true });
    return all.count - own.count;
  }

  it('malformed JSON → 400', async () => {
    const r = await s.request(json('POST', CM, '{"metadata": {"name": "a"', 'application/json'));
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(await count()).toBe(0);
  });

  it('a body that is not an object → 400', async () => {
    const r = await s.request(json('POST', CM, '[1,2]'));
    expect(r.statusCode).toBe(400);
  });

  it('wrong kind → 400', async () => {
    const r = await create(CM, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a' } });
    expect(r.code).toBe(400);
    expect(r.body['reason']).toBe('BadRequest');
    expect(await count()).toBe(0);
  });

  it('wrong apiVersion → 400 with kube message', async () => {
    const r = await create(CM, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    expect(r.code).toBe(400);
    expect(r.body['message']).toBe(
      'the API version in the data (apps/v1) does not match the expected API version (v1)',
    );
  });

  it('namespace in the body disagreeing with the URL → 400', async () => {
    const r = await create(CM, { metadata: { name: 'a', namespace: 'kube-system' } });
    expect(r.code).toBe(400);
    expect(r.body['message']).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it('metadata field of the wrong type → 400', async () => {
    const r = await create(CM, { metadata: { name: 'a', labels: { x: 1 } } });
    expect(r.code).toBe(400);
  });

  it('invalid name → 422 with a field cause', async () => {
    const r = await create(CM, { metadata: { name: 'Not_Valid' } });
    expect(r.code).toBe(422);
    expect(r.body).toMatchObject({ reason: 'Invalid', details: { name: 'Not_Valid', kind: 'ConfigMap' } });
    expect(r.body['message']).toMatch(
      /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/,
    );
    expect(r.body['details']?.causes?.[0]).toMatchObject({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
    });
    expect(await count()).toBe(0);
  });

  it('missing name → 422 Required', async () => {
    const r = await create(CM, { metadata: {} });
    expect(r.code).toBe(422);
    expect(r.body['details']?.causes?.[0]).toMatchObject({
      reason: 'FieldValueRequired',
      field: 'metadata.name',
    });
  });

  it('names: label rule for namespaces, DNS-1035 for services, path segment for RBAC', async () => {
    expect((await create('/api/v1/namespaces', { metadata: { name: 'a.b' } })).code).toBe(422);
    expect(
      (
        await create('/api/v1/namespaces/default/services', {
          metadata: { name: '1svc' },
          spec: { ports: [{ port: 80 }] },
        })
      ).code,
    ).toBe(422);
    expect((await create(CM, { metadata: { name: 'a.b' } })).code).toBe(201);
    expect(
      (
        await create('/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', {
          metadata: { name: 'Any:Name' },
        })
      ).code,
    ).toBe(201);
  });

  it('bad labels and annotations → 422 naming the field', async () => {
    const bad = await create(CM, { metadata: { name: 'a', labels: { 'bad key': 'v', ok: 'bad value!' } } });
    expect(bad.code).toBe(422);
    const fields = (bad.body['details']?.causes ?? []).map((c) => c.field);
    expect(fields.every((f) => f === 'metadata.labels')).toBe(true);
    expect(fields.length).toBeGreaterThanOrEqual(2);
    const longValue = await create(CM, { metadata: { name: 'a', labels: { k: 'x'.repeat(64) } } });
    expect(longValue.code).toBe(422);
    const annotations = await create(CM, {
      metadata: { name: 'a', annotations: { 'example.com/big': 'x'.repeat(256 * 1024) } },
    });
    expect(annotations.code).toBe(422);
    expect(annotations.body['details']?.causes?.[0]).toMatchObject({
      field: 'metadata.annotations',
      reason: 'FieldValueTooLong',
    });
    const prefixed = await create(CM, {
      metadata: {
        name: 'a',
        labels: { 'example.com/app': 'web' },
        annotations: { 'Example.com/Note': 'free text!' },
      },
    });
    expect(prefixed.code).toBe(201);
  });

  it("unknown resource → 404 Status; unknown group → Go's plain 404, as kube", async () => {
    for (const url of ['/api/v1/namespaces/default/widgets', '/api/v1/pods/x/y/z/w']) {
      const r = await s.request(json('GET', url));
      expect(r.statusCode, url).toBe(404);
      expect(r.json()).toMatchObject({
        kind: 'Status',
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      });
    }
    for (const url of ['/apis/example.com/v1/things']) {
      const r = await s.request(json('GET', url));
      expect(r.statusCode, url).toBe(404);
      expect(r.headers['content-type'], url).toBe('text/plain; charset=utf-8');
      expect(r.headers['x-content-type-options'], url).toBe('nosniff');
      expect(r.body, url).toBe('404 page not found\n');
    }
  });

  it('namespaced kinds are not served at cluster item paths', async () => {
    const r = await s.request(json('GET', '/api/v1/configmaps/x'));
    expect(r.statusCode).toBe(404);
  });

  it('a method the path does not serve → 405', async () => {
    const cases: ['POST' | 'PUT' | 'PATCH' | 'DELETE', string][] = [
      ['POST', `${CM}/a`],
      ['PUT', CM],
      ['PATCH', CM],
      ['POST', '/api/v1/configmaps'], // all-namespaces path: list and watch only
      ['DELETE', '/api/v1/namespaces'], // namespaces have no deletecollection
      ['DELETE', '/api/v1/namespaces/default/status'],
    ];
    for (const [method, url] of cases) {
      const r = await s.request(json(method, url, { metadata: { name: 'a' } }));
      expect(r.statusCode, `${method} ${url}`).toBe(405);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed' });
    }
  });

  it('a body over 3 MiB → 413', async () => {
    const big = JSON.stringify({ metadata: { name: 'a' }, data: { k: 'x'.repeat(MAX_REQUEST_BODY_BYTES) } });
    const r = await s.request(json('POST', CM, big));
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      reason: 'RequestEntityTooLarge',
      code: 413,
      message: 'Request entity too large: limit is 3145728',
    });
  });

  it('an unsupported media type → 415', async () => {
    const r = await s.request(json('POST', CM, 'name: a', 'text/plain'));
    expect(r.statusCode).toBe(415);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType' });
    const patchAsCreate = await s.request(
      json('POST', CM, { metadata: { name: 'a' } }, 'application/merge-patch+json'),
    );
    expect(patchAsCreate.statusCode).toBe(415);
  });

  it('creating in a missing namespace → 404 namespaces "x" not found', async () => {
    const r = await create('/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'a' } });
    expect(r.code).toBe(404);
    expect(r.body).toMatchObject({
      reason: 'NotFound',
      message: 'namespaces "nowhere" not found',
      details: { name: 'nowhere', kind: 'namespaces' },
    });
    expect(await count()).toBe(0);
  });

  it('dryRun=All stores nothing; another dryRun value is 422 on CreateOptions', async () => {
    const r = await s.request(json('POST', `${CM}?dryRun=All`, { metadata: { name: 'a' } }));
    expect(r.statusCode).toBe(201);
    expect(await count()).toBe(0);
    const bad = await s.request(json('POST', `${CM}?dryRun=Some`, { metadata: { name: 'a' } }));
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ reason: 'Invalid', details: { kind: 'CreateOptions' } });
    expect(await count()).toBe(0);
  });
});

describe('update', () => {
  it('PUT with the current resourceVersion updates; a stale one is 409', async () => {
    const created = (await create(CM, { metadata: { name: 'a' }, data: { v: '1' } })).body;
    const put = await s.request(json('PUT', `${CM}/a`, { ...created, data: { v: '2' } }));
    expect(put.statusCode).toBe(200);
    const updated = put.json();
    expect(updated['data']).toEqual({ v: '2' });
    expect(BigInt(updated['metadata'].resourceVersion as string)).toBeGreaterThan(
      BigInt(created['metadata'].resourceVersion as string),
    );
    expect(updated['metadata'].uid).toBe(created['metadata'].uid);
    expect(updated['metadata'].creationTimestamp).toBe(created['metadata'].creationTimestamp);

    const stale = await s.request(json('PUT', `${CM}/a`, { ...created, data: { v: '3' } }));
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    });
    const g = await s.request(json('GET', `${CM}/a`));
    expect(g.json()['data']).toEqual({ v: '2' });
  });

  it('PUT without resourceVersion is unconditional', async () => {
    await create(CM, { metadata: { name: 'a' }, data: { v: '1' } });
    const put = await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'a' }, data: { v: '9' } }));
    expect(put.statusCode).toBe(200);
    expect(put.json()['data']).toEqual({ v: '9' });
  });

  it('PUT of a missing object is 404 where kube does not create on update', async () => {
    const r = await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'a' } }));
    expect(r.statusCode).toBe(404);
  });

  it('PUT of a missing object creates it (201) where kube allows it (leases)', async () => {
    const url = '/apis/coordination.k8s.io/v1/namespaces/default/leases/l';
    const r = await s.request(json('PUT', url, { metadata: { name: 'l' }, spec: { holderIdentity: 'me' } }));
    expect(r.statusCode).toBe(201);
    expect(r.json()['metadata'].uid).toBeDefined();
  });

  it('PUT with a name disagreeing with the URL → 400', async () => {
    await create(CM, { metadata: { name: 'a' } });
    const r = await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'b' } }));
    expect(r.statusCode).toBe(400);
    expect(r.json()['message']).toBe('the name of the object (b) does not match the name on the URL (a)');
    const nameless = await s.request(json('PUT', `${CM}/a`, { metadata: {} }));
    expect(nameless.statusCode).toBe(400);
    expect(nameless.json()['message']).toBe(
      'the name of the object (a based on URL) was undeterminable: name must be provided',
    );
  });

  it('a changed uid is refused (422)', async () => {
    await create(CM, { metadata: { name: 'a' } });
    const r = await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'a', uid: 'other' } }));
    expect(r.statusCode).toBe(422);
  });

  it('a no-op update keeps the resourceVersion', async () => {
    const created = (await create(CM, { metadata: { name: 'a' }, data: { v: '1' } })).body;
    const put = await s.request(json('PUT', `${CM}/a`, created));
    expect(put.json()['metadata'].resourceVersion).toBe(created['metadata'].resourceVersion);
    // The same content with keys in another order is no change either.
    const reordered = {
      data: created['data'],
      metadata: { ...created['metadata'] },
      kind: 'ConfigMap',
      apiVersion: 'v1',
    };
    const again = await s.request(json('PUT', `${CM}/a`, reordered));
    expect(again.json()['metadata'].resourceVersion).toBe(created['metadata'].resourceVersion);
    expect(await s.store.currentRevision()).toBe(BigInt(created['metadata'].resourceVersion as string));
  });

  it('generation: +1 for spec changes, unchanged for metadata-only changes', async () => {
    const url = '/apis/apps/v1/namespaces/default/deployments';
    const d = (await create(url, deployment('d'))).body;
    const labelled = await s.request(
      json('PUT', `${url}/d`, { ...d, metadata: { ...d['metadata'], labels: { a: 'b' } } }),
    );
    expect(labelled.json()['metadata'].generation).toBe(1);
    const l = labelled.json();
    const scaled = await s.request(json('PUT', `${url}/d`, { ...l, spec: { ...l['spec'], replicas: 3 } }));
    expect(scaled.json()['metadata'].generation).toBe(2);
  });

  it('a main-resource update ignores status for kinds with a status subresource', async () => {
    const url = '/apis/apps/v1/namespaces/default/deployments';
    const d = (await create(url, deployment('d'))).body;
    const r = await s.request(json('PUT', `${url}/d`, { ...d, status: { replicas: 5 } }));
    expect(r.statusCode).toBe(200);
    expect(r.json()['status']).toBeUndefined();
  });

  it('a status update changes only status', async () => {
    const url = '/apis/apps/v1/namespaces/default/deployments';
    const d = (await create(url, deployment('d'))).body;
    const r = await s.request(
      json('PUT', `${url}/d/status`, {
        ...d,
        metadata: { ...d['metadata'], labels: { sneaky: 'yes' } },
        spec: { ...d['spec'], replicas: 9 },
        status: { replicas: 5 },
      }),
    );
    expect(r.statusCode).toBe(200);
    const out = r.json();
    expect(out['status']).toEqual({ replicas: 5 });
    expect(out['spec']?.replicas).toBe(1);
    expect(out['metadata'].labels).toBeUndefined();
    expect(out['metadata'].generation).toBe(1);
    const g = await s.request(json('GET', `${url}/d/status`));
    expect(g.json()['status']).toEqual({ replicas: 5 });
    const stale = await s.request(json('PUT', `${url}/d/status`, { ...d, status: { replicas: 6 } }));
    expect(stale.statusCode).toBe(409);
  });
});

describe('delete and finalizers', () => {
  it('deletes an object without finalizers: 200 with a Success Status (configmaps)', async () => {
    const created = (await create(CM, { metadata: { name: 'a' } })).body;
    const r = await s.request(json('DELETE', `${CM}/a`));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'a', kind: 'configmaps', uid: created['metadata'].uid },
    });
    expect((await s.request(json('GET', `${CM}/a`))).statusCode).toBe(404);
    expect((await s.request(json('DELETE', `${CM}/a`))).statusCode).toBe(404);
  });

  it('returns the deleted object for kinds that do (pods, services)', async () => {
    const url = '/api/v1/namespaces/default/pods';
    await create(url, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    const r = await s.request(json('DELETE', `${url}/p`));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Pod', metadata: { name: 'p' } });
  });

  it('two-phase deletion: finalizers hold the object until the last one is removed', async () => {
    await create(CM, { metadata: { name: 'a', finalizers: ['example.com/hold', 'example.com/other'] } });
    const del = await s.request(json('DELETE', `${CM}/a`));
    expect(del.statusCode).toBe(200);
    const marked = del.json();
    expect(marked['kind']).toBe('ConfigMap');
    expect(marked['metadata'].deletionTimestamp).toMatch(/Z$/);
    expect(marked['metadata'].deletionGracePeriodSeconds).toBe(0);

    // Deleting again changes nothing; new finalizers may not be added.
    const again = await s.request(json('DELETE', `${CM}/a`));
    expect(again.statusCode).toBe(200);
    const added = await s.request(
      json('PUT', `${CM}/a`, {
        ...marked,
        metadata: {
          ...marked['metadata'],
          finalizers: ['example.com/hold', 'example.com/other', 'example.com/new'],
        },
      }),
    );
    expect(added.statusCode).toBe(422);

    // A deletionTimestamp cannot be removed by an update.
    const one = await s.request(
      json('PUT', `${CM}/a`, {
        ...marked,
        metadata: { ...marked['metadata'], deletionTimestamp: null, finalizers: ['example.com/hold'] },
      }),
    );
    expect(one.statusCode).toBe(200);
    expect(one.json()['metadata'].deletionTimestamp).toBe(marked['metadata'].deletionTimestamp);
    expect((await s.request(json('GET', `${CM}/a`))).statusCode).toBe(200);

    const last = await s.request(
      json('PUT', `${CM}/a`, { ...one.json(), metadata: { ...one.json()['metadata'], finalizers: [] } }),
    );
    expect(last.statusCode).toBe(200);
    expect((await s.request(json('GET', `${CM}/a`))).statusCode).toBe(404);
  });

  it('delete preconditions: uid and resourceVersion mismatches are 409', async () => {
    const created = (await create(CM, { metadata: { name: 'a' } })).body;
    const uid = await s.request(json('DELETE', `${CM}/a`, { preconditions: { uid: 'other' } }));
    expect(uid.statusCode).toBe(409);
    expect(uid.json()['message']).toContain(
      `Precondition failed: UID in precondition: other, UID in object meta: ${created['metadata'].uid}`,
    );
    const rv = await s.request(json('DELETE', `${CM}/a`, { preconditions: { resourceVersion: '1' } }));
    expect(rv.statusCode).toBe(409);
    const ok = await s.request(
      json('DELETE', `${CM}/a`, {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        preconditions: { uid: created['metadata'].uid, resourceVersion: created['metadata'].resourceVersion },
      }),
    );
    expect(ok.statusCode).toBe(200);
  });

  it('an invalid propagationPolicy is 422', async () => {
    await create(CM, { metadata: { name: 'a' } });
    const r = await s.request(json('DELETE', `${CM}/a?propagationPolicy=Sideways`));
    expect(r.statusCode).toBe(422);
    const ok = await s.request(json('DELETE', `${CM}/a`, { propagationPolicy: 'Background' }));
    expect(ok.statusCode).toBe(200);
  });

  it('deletecollection deletes the selected objects and returns them', async () => {
    await create(CM, { metadata: { name: 'a', labels: { app: 'x' } } });
    await create(CM, { metadata: { name: 'b', labels: { app: 'x' } } });
    await create(CM, { metadata: { name: 'c', labels: { app: 'y' } } });
    const r = await s.request(json('DELETE', `${CM}?labelSelector=app%3Dx`));
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body['kind']).toBe('ConfigMapList');
    expect((body['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'a',
      'b',
    ]);
    const left = await s.request(json('GET', CM));
    expect((left.json()['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual([
      'c',
    ]);
  });
});
