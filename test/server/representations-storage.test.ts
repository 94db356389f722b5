/**
 * The storage encoding (`--storage-media-type`, issue 5): protobuf envelopes in the store by
 * default (as kube-apiserver), JSON on request, and values of either encoding readable whatever
 * the flag says now, including values kube-apiserver would write (protobuf with a
 * resourceVersion inside).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Store } from '../../storage/interface.js';
import { decodeEnvelope, encodeEnvelope, hasProtobufMagic } from '../../src/codec/index.js';
import { protocDecode, testCodec } from '../codec/support.js';
import { deployment, json, startResourceApp, type ResourceApp } from './resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const KEY = '/configmaps/default/';

const apps: ResourceApp[] = [];
afterEach(async () => {
  // Apps sharing one store: close the apps, then the store once.
  for (const a of apps.splice(0)) await a.app.close();
});

async function app(
  store: Store,
  storageMediaType: 'application/json' | 'application/vnd.kubernetes.protobuf',
) {
  const a = await startResourceApp({ store, storageMediaType });
  apps.push(a);
  return a;
}

async function create(a: ResourceApp, name: string): Promise<void> {
  const r = await a.request(json('POST', CM, { metadata: { name }, data: { k: name } }));
  expect(r.statusCode, r.body).toBe(201);
}

describe('--storage-media-type', () => {
  it('protobuf: the store holds envelopes protoc reads, without resourceVersion', async () => {
    const store = await openMemoryStore();
    const a = await app(store, 'application/vnd.kubernetes.protobuf');
    await create(a, 'p');
    const { kv } = await store.get(`${KEY}p`);
    expect(kv !== undefined && hasProtobufMagic(kv.value)).toBe(true);
    const env = decodeEnvelope(kv?.value ?? new Uint8Array());
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const text = protocDecode('k8s.io.api.core.v1.ConfigMap', env.raw);
    expect(text).toContain('name: "p"');
    expect(text).toContain('value: "p"');
    expect(text).not.toMatch(/resourceVersion: "\d/);
    const got = (await a.request({ method: 'GET', url: `${CM}/p` })).json();
    expect(got).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'p', resourceVersion: String(kv?.modRevision) },
    });
    expect(got.data).toEqual({ k: 'p' });
    await store.close();
  });

  it('protobuf: a metadata-only update of a create’s answer keeps the generation', async () => {
    const store = await openMemoryStore();
    const a = await app(store, 'application/vnd.kubernetes.protobuf');
    const url = '/apis/apps/v1/namespaces/default/deployments';
    const d = (await a.request(json('POST', url, deployment('d')))).json();
    const labelled = await a.request(
      json('PUT', `${url}/d`, { ...d, metadata: { ...d.metadata, labels: { a: 'b' } } }),
    );
    expect(labelled.statusCode, labelled.body).toBe(200);
    expect(labelled.json().metadata.generation).toBe(1);
    await store.close();
  });

  it('json: the store holds JSON', async () => {
    const store = await openMemoryStore();
    const a = await app(store, 'application/json');
    await create(a, 'j');
    const { kv } = await store.get(`${KEY}j`);
    expect(Buffer.from(kv?.value ?? []).toString('utf8')).toMatch(/^\{"kind":"ConfigMap"/);
    await store.close();
  });

  it('objects stay readable, listable, watchable and writable when the flag changes', async () => {
    const store = await openMemoryStore();
    const pb = await app(store, 'application/vnd.kubernetes.protobuf');
    await create(pb, 'old');
    await pb.app.close();
    apps.length = 0;
    const js = await app(store, 'application/json');
    await create(js, 'new');
    const list = (await js.request({ method: 'GET', url: CM })).json();
    expect(list.items?.map((i) => [i.metadata.name, i.data])).toEqual([
      ['new', { k: 'new' }],
      ['old', { k: 'old' }],
    ]);
    const current = (await js.request({ method: 'GET', url: `${CM}/old` })).json();
    const put = await js.request(json('PUT', `${CM}/old`, { ...current, data: { k: 'changed' } }));
    expect(put.statusCode, put.body).toBe(200);
    const { kv } = await store.get(`${KEY}old`);
    expect(hasProtobufMagic(kv?.value ?? new Uint8Array())).toBe(false);
    const base = await js.listen();
    const res = await fetch(`${base}${CM}?watch=1&timeoutSeconds=1`);
    const events = (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'new'],
      ['ADDED', 'old'],
    ]);
    await store.close();
  });

  it('reads a value written with a resourceVersion inside (as another server may) at the key’s revision', async () => {
    const store = await openMemoryStore();
    const message = testCodec().encodeMessage('k8s.io.api.core.v1.ConfigMap', {
      metadata: { name: 'kube', namespace: 'default', resourceVersion: '999', uid: 'u-1' },
      data: { from: 'kube' },
    });
    const written = await store.create(`${KEY}kube`, encodeEnvelope('v1', 'ConfigMap', message));
    const a = await app(store, 'application/vnd.kubernetes.protobuf');
    const got = (await a.request({ method: 'GET', url: `${CM}/kube` })).json();
    expect(got).toMatchObject({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'kube', uid: 'u-1', resourceVersion: String(written.revision) },
      data: { from: 'kube' },
    });
    await store.close();
  });
});
