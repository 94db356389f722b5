/**
 * managedFields on every write, server-side apply with every ownership transition of the spec's
 * table, and dry run of every verb, through the resource routes (`app.inject`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { createResourceContext } from '../../src/resource/context.js';
import { applyPatch } from '../../src/resource/patch.js';
import { deployment, json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

/** A managedFields entry as the tests read it. */
interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  time: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

function entries(obj: KObj): Entry[] {
  return ((obj.metadata as { managedFields?: Entry[] }).managedFields ?? []).map((e) => ({ ...e }));
}

function entryOf(obj: KObj, manager: string, subresource?: string): Entry | undefined {
  return entries(obj).find((e) => e.manager === manager && e.subresource === subresource);
}

let s: ResourceApp;
beforeEach(async () => {
  s = await startResourceApp();
});
afterEach(async () => {
  await s.close();
});

function apply(url: string, body: unknown, query: string, contentType = 'application/apply-patch+yaml') {
  return s.request({
    method: 'PATCH',
    url: `${url}?${query}`,
    headers: { 'content-type': contentType },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function cm(name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data };
}

async function get(url: string): Promise<KObj> {
  return (await s.request({ method: 'GET', url })).json();
}

describe('managedFields on non-apply writes', () => {
  it('POST records an Update entry of the fieldManager, else of the User-Agent before its first "/"', async () => {
    const a = await s.request({
      ...json('POST', `${CM}?fieldManager=writer`, cm('a', { k: 'v' })),
    });
    expect(a.statusCode).toBe(201);
    const e = entryOf(a.json(), 'writer');
    expect(e).toMatchObject({
      operation: 'Update',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } },
    });
    expect(e?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const b = await s.request({
      ...json('POST', CM, cm('b', { k: 'v' })),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'kubectl/v1.30.0 (linux/amd64) kubernetes/abc',
      },
    });
    expect(entries(b.json()).map((x) => x.manager)).toEqual(['kubectl']);
  });

  it('an update by another manager takes the fields it changes; one manager keeps one entry', async () => {
    await s.request(json('POST', `${CM}?fieldManager=one`, cm('a', { x: '1', y: '1' })));
    const put = await s.request(json('PUT', `${CM}/a?fieldManager=two`, cm('a', { x: '2', y: '1' })));
    expect(put.statusCode).toBe(200);
    expect(entryOf(put.json(), 'one')?.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:y': {} } });
    expect(entryOf(put.json(), 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    const merged = await s.request(
      json('PATCH', `${CM}/a?fieldManager=two`, { data: { z: '3' } }, 'application/merge-patch+json'),
    );
    expect(entries(merged.json()).filter((e) => e.manager === 'two')).toHaveLength(1);
    expect(entryOf(merged.json(), 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {}, 'f:z': {} } });
  });

  it('status and scale writes have their own entries; the main resource does not own status', async () => {
    const created = await s.request(json('POST', `${DEPLOY}?fieldManager=maker`, deployment('d')));
    expect(created.statusCode).toBe(201);
    expect(JSON.stringify(entryOf(created.json(), 'maker')?.fieldsV1)).not.toContain('f:status');
    const status = await s.request(
      json(
        'PATCH',
        `${DEPLOY}/d/status?fieldManager=ctrl`,
        { status: { replicas: 2 } },
        'application/merge-patch+json',
      ),
    );
    expect(status.statusCode).toBe(200);
    expect(entryOf(status.json(), 'ctrl', 'status')?.fieldsV1).toEqual({
      'f:status': { '.': {}, 'f:replicas': {} },
    });
    const scale = await s.request(
      json(
        'PATCH',
        `${DEPLOY}/d/scale?fieldManager=hpa`,
        { spec: { replicas: 5 } },
        'application/merge-patch+json',
      ),
    );
    expect(scale.statusCode).toBe(200);
    const d = await get(`${DEPLOY}/d`);
    expect(entryOf(d, 'hpa', 'scale')?.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    // The creator no longer owns replicas (it set them through defaulting, not at all: nobody did).
    expect(JSON.stringify(entryOf(d, 'maker')?.fieldsV1)).not.toContain('f:replicas');
  });

  it('invalid managedFields from a client are reset to the stored ones; [] clears them', async () => {
    await s.request(json('POST', `${CM}?fieldManager=one`, cm('a', { x: '1' })));
    const bad = await s.request(
      json('PUT', `${CM}/a?fieldManager=two`, {
        ...cm('a', { x: '1', y: '2' }),
        metadata: {
          name: 'a',
          managedFields: [{ manager: 'z', fieldsType: 'FieldsV1', fieldsV1: { bad: 1 } }],
        },
      }),
    );
    expect(bad.statusCode).toBe(200);
    expect(
      entries(bad.json())
        .map((e) => e.manager)
        .sort(),
    ).toEqual(['one', 'two']);
    const cleared = await s.request(
      json('PUT', `${CM}/a?fieldManager=three`, {
        ...cm('a', { x: '1', y: '3' }),
        metadata: { name: 'a', managedFields: [] },
      }),
    );
    expect(cleared.statusCode).toBe(200);
    // As kube: cleared entries stay cleared (an update of an untracked object starts no tracking).
    expect(entries(cleared.json())).toEqual([]);
  });
});

describe('server-side apply', () => {
  it('creates the object (201); re-applying the same configuration writes nothing', async () => {
    const first = await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    expect(first.statusCode).toBe(201);
    expect(entryOf(first.json(), 'alice')).toMatchObject({
      operation: 'Apply',
      apiVersion: 'v1',
      fieldsV1: { 'f:data': { 'f:k': {} } },
    });
    const before = await s.store.currentRevision();
    const again = await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    expect(again.statusCode).toBe(200);
    expect(again.json().metadata.resourceVersion).toBe(first.json().metadata.resourceVersion);
    expect(await s.store.currentRevision()).toBe(before);
  });

  it('accepts YAML and JSON bodies; fieldManager is required (422 on PatchOptions)', async () => {
    const yaml = await apply(
      `${CM}/y`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: b\n',
      'fieldManager=m',
    );
    expect(yaml.statusCode).toBe(201);
    const missing = await apply(`${CM}/y`, cm('y', { a: 'c' }), '');
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toMatchObject({
      reason: 'Invalid',
      message:
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: { kind: 'PatchOptions', group: 'meta.k8s.io' },
    });
    const force = await s.request(
      json('PATCH', `${CM}/y?force=true`, { data: {} }, 'application/merge-patch+json'),
    );
    expect(force.statusCode).toBe(422);
  });

  it('a different value for a field another manager owns is a 409 naming field and manager', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v', own: '1' }), 'fieldManager=alice');
    const r = await apply(`${CM}/a`, cm('a', { k: 'w' }), 'fieldManager=bob');
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "alice": .data.k',
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.k' }],
      },
    });
    expect((await get(`${CM}/a`)).data).toEqual({ k: 'v', own: '1' });
  });

  it('force takes the field and removes it from the other manager', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v', own: '1' }), 'fieldManager=alice');
    const r = await apply(`${CM}/a`, cm('a', { k: 'w' }), 'fieldManager=bob&force=true');
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toEqual({ k: 'w', own: '1' });
    expect(entryOf(r.json(), 'alice')?.fieldsV1).toEqual({ 'f:data': { 'f:own': {} } });
    expect(entryOf(r.json(), 'bob')?.fieldsV1).toEqual({ 'f:data': { 'f:k': {} } });
  });

  it('the same value is shared; a later change by either sharer conflicts', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    const shared = await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=bob');
    expect(shared.statusCode).toBe(200);
    expect(entryOf(shared.json(), 'alice')?.fieldsV1).toEqual({ 'f:data': { 'f:k': {} } });
    expect(entryOf(shared.json(), 'bob')?.fieldsV1).toEqual({ 'f:data': { 'f:k': {} } });
    const change = await apply(`${CM}/a`, cm('a', { k: 'x' }), 'fieldManager=alice');
    expect(change.statusCode).toBe(409);
    expect(change.json().details?.causes?.[0]).toMatchObject({
      field: '.data.k',
      message: 'conflict with "bob"',
    });
  });

  it('an update takes ownership without conflict; the applier then conflicts', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    const upd = await s.request(
      json('PATCH', `${CM}/a?fieldManager=editor`, { data: { k: 'e' } }, 'application/merge-patch+json'),
    );
    expect(upd.statusCode).toBe(200);
    expect(entryOf(upd.json(), 'alice')).toBeUndefined();
    expect(entryOf(upd.json(), 'editor')?.fieldsV1).toEqual({ 'f:data': { 'f:k': {} } });
    const back = await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    expect(back.statusCode).toBe(409);
    expect(back.json().message).toBe(
      'Apply failed with 1 conflict: conflict with "editor" using v1: .data.k',
    );
  });

  it('a field the applier alone owned and stops applying is removed (list-map items too)', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v', gone: 'x' }), 'fieldManager=alice');
    const r = await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    expect(r.json().data).toEqual({ k: 'v' });

    const d = deployment('d');
    const spec = d['spec'] as { template: { spec: { containers: unknown[] } } };
    spec.template.spec.containers = [
      { name: 'a', image: 'nginx' },
      { name: 'b', image: 'busybox' },
    ];
    expect((await apply(`${DEPLOY}/d`, d, 'fieldManager=alice')).statusCode).toBe(201);
    spec.template.spec.containers = [{ name: 'a', image: 'nginx' }];
    const pruned = await apply(`${DEPLOY}/d`, d, 'fieldManager=alice');
    expect(pruned.statusCode).toBe(200);
    const out = pruned.json();
    expect(out.spec?.template?.spec?.containers?.map((c) => c.name)).toEqual(['a']);
  });

  it('a defaulted field the applier stops applying is reset to its default', async () => {
    const d = deployment('r');
    (d['spec'] as Record<string, unknown>)['replicas'] = 4;
    expect((await apply(`${DEPLOY}/r`, d, 'fieldManager=alice')).statusCode).toBe(201);
    delete (d['spec'] as Record<string, unknown>)['replicas'];
    const r = await apply(`${DEPLOY}/r`, d, 'fieldManager=alice');
    expect(r.statusCode).toBe(200);
    expect(r.json().spec?.replicas).toBe(1);
  });

  it('a field another manager also owns stays when one applier drops it', async () => {
    await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice');
    await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=bob');
    const r = await apply(`${CM}/a`, cm('a', {}), 'fieldManager=alice');
    expect(r.json().data).toEqual({ k: 'v' });
  });

  it('apply on status and on scale records subresource entries', async () => {
    await s.request(json('POST', DEPLOY, deployment('d')));
    const status = await apply(
      `${DEPLOY}/d/status`,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, status: { replicas: 3 } },
      'fieldManager=ctrl',
    );
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json().status).toMatchObject({ replicas: 3 });
    expect(entryOf(status.json(), 'ctrl', 'status')).toMatchObject({
      operation: 'Apply',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
    });
    const scale = await apply(
      `${DEPLOY}/d/scale`,
      { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'd' }, spec: { replicas: 4 } },
      // The creator owns the defaulted replicas (kube defaults before ownership is recorded).
      'fieldManager=hpa&force=true',
    );
    expect(scale.statusCode).toBe(200);
    expect(scale.json().spec).toEqual({ replicas: 4 });
    const d = await get(`${DEPLOY}/d`);
    expect(d.spec?.replicas).toBe(4);
    expect(entryOf(d, 'hpa', 'scale')).toMatchObject({
      operation: 'Apply',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    });
    // Applying replicas on the main resource now conflicts with the scale manager.
    const main = deployment('d');
    (main['spec'] as Record<string, unknown>)['replicas'] = 7;
    const conflict = await apply(`${DEPLOY}/d`, main, 'fieldManager=alice');
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().details?.causes).toContainEqual({
      reason: 'FieldManagerConflict',
      message: 'conflict with "hpa" with subresource "scale"',
      field: '.spec.replicas',
    });
  });

  it('a pinned stale resourceVersion is a 409; an unpinned apply applies to the latest', async () => {
    const created = (await apply(`${CM}/a`, cm('a', { k: 'v' }), 'fieldManager=alice')).json();
    const rv = created.metadata.resourceVersion ?? '';
    await apply(`${CM}/a`, cm('a', { k: 'v', l: '1' }), 'fieldManager=alice');
    const stale = await apply(`${CM}/a`, cm('a', { k: 'v' }, { resourceVersion: rv }), 'fieldManager=alice');
    expect(stale.statusCode).toBe(409);
    expect(stale.json().reason).toBe('Conflict');
    const fresh = await apply(`${CM}/a`, cm('a', { k: 'v', m: '2' }), 'fieldManager=alice');
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().data).toEqual({ k: 'v', m: '2' });
  });

  it('a configuration of another kind or name is a 400', async () => {
    expect((await apply(`${CM}/a`, cm('b', {}), 'fieldManager=m')).statusCode).toBe(400);
    const wrongKind = await apply(
      `${CM}/a`,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a' } },
      'fieldManager=m',
    );
    expect(wrongKind.statusCode).toBe(400);
    const unknownField = await apply(`${CM}/a`, { ...cm('a', {}), bogus: 1 }, 'fieldManager=m');
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().message).toContain('.bogus: field not declared in schema');
  });

  it("a configuration without a name applies to the URL's object; it cannot create one", async () => {
    const nameless = { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } };
    const created = await apply(`${CM}/fresh`, nameless, 'fieldManager=m');
    expect(created.statusCode).toBe(400);
    expect(created.json().message).toBe(
      'the name of the object (fresh based on URL) was undeterminable: name must be provided',
    );
    expect((await apply(`${CM}/a`, cm('a', { x: '1' }), 'fieldManager=m')).statusCode).toBe(201);
    const applied = await apply(`${CM}/a`, nameless, 'fieldManager=other');
    expect(applied.statusCode).toBe(200);
    expect(applied.json().metadata.name).toBe('a');
    expect(applied.json()['data']).toEqual({ x: '1', k: 'v' });
  });
});

describe('dryRun=All', () => {
  it('runs create, update, patch, apply, delete and deletecollection without writing', async () => {
    await s.request(json('POST', CM, cm('a', { k: 'v' })));
    const rev = await s.store.currentRevision();
    const stored = await get(`${CM}/a`);

    const created = await s.request(json('POST', `${CM}?dryRun=All`, cm('b', { k: 'v' })));
    expect(created.statusCode).toBe(201);
    expect(created.json().metadata.uid).toBeDefined();
    expect(created.json().metadata.resourceVersion).toBeUndefined();
    const dup = await s.request(json('POST', `${CM}?dryRun=All`, cm('a', {})));
    expect(dup.statusCode).toBe(409);

    const put = await s.request(json('PUT', `${CM}/a?dryRun=All`, cm('a', { k: 'put' })));
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toEqual({ k: 'put' });
    expect(put.json().metadata.resourceVersion).toBe(stored.metadata.resourceVersion);

    const patched = await s.request(
      json('PATCH', `${CM}/a?dryRun=All`, { data: { k: 'p' } }, 'application/merge-patch+json'),
    );
    expect(patched.json().data).toEqual({ k: 'p' });
    const applied = await apply(`${CM}/a`, cm('a', { k: 'x' }), 'fieldManager=m&dryRun=All&force=true');
    expect(applied.statusCode).toBe(200);
    expect(applied.json().data).toEqual({ k: 'x' });
    const applyCreate = await apply(`${CM}/new`, cm('new', { k: 'x' }), 'fieldManager=m&dryRun=All');
    expect(applyCreate.statusCode).toBe(201);

    const del = await s.request({ method: 'DELETE', url: `${CM}/a?dryRun=All` });
    expect(del.statusCode).toBe(200);
    const delBody = await s.request(json('DELETE', `${CM}/a`, { dryRun: ['All'] }));
    expect(delBody.statusCode).toBe(200);
    const coll = await s.request({ method: 'DELETE', url: `${CM}?dryRun=All` });
    expect(coll.statusCode).toBe(200);

    expect(await s.store.currentRevision()).toBe(rev);
    expect(await get(`${CM}/a`)).toEqual(stored);
    expect((await s.request({ method: 'GET', url: `${CM}/b` })).statusCode).toBe(404);
    expect((await s.request({ method: 'GET', url: `${CM}/new` })).statusCode).toBe(404);
  });

  it('any other value is a 422 for every verb', async () => {
    await s.request(json('POST', CM, cm('a', {})));
    for (const r of [
      await s.request(json('POST', `${CM}?dryRun=Yes`, cm('b', {}))),
      await s.request(json('PUT', `${CM}/a?dryRun=Yes`, cm('a', {}))),
      await s.request(json('PATCH', `${CM}/a?dryRun=Yes`, { data: {} }, 'application/merge-patch+json')),
      await s.request({ method: 'DELETE', url: `${CM}/a?dryRun=Yes` }),
    ]) {
      expect(r.statusCode).toBe(422);
      expect(r.json().reason).toBe('Invalid');
    }
    expect((await s.request({ method: 'GET', url: `${CM}/a` })).statusCode).toBe(200);
  });
});

describe('strategic merge patch without a schema', () => {
  it('is a 415 naming the patch types such kinds take', async () => {
    const ctx = createResourceContext({
      registry: loadRegistry(),
      store: s.store,
      eventTtlSeconds: 3600,
      minRequestTimeoutSeconds: 1800,
    });
    const err = (() => {
      try {
        applyPatch(ctx, 'com.example.v1.Widget', {}, { patchType: 'strategic', patch: {} });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(415);
    expect((err as ApiError).message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });
});
