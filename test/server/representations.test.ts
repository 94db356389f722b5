/**
 * Representations over HTTP (issue 5): protobuf responses and request bodies, watch frames,
 * YAML, Tables, metadata-only responses, and the 406/415/400 cases, checked with independent
 * decoders (protoc for protobuf bytes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, WatchFrameSplitter } from '../../src/codec/index.js';
import { protocDecode, testCodec } from '../codec/support.js';
import { deployment, json, startResourceApp, type ResourceApp } from './resources.support.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CM = '/api/v1/namespaces/default/configmaps';
const CM_TYPE = 'k8s.io.api.core.v1.ConfigMap';
const SCALE_TYPE = 'k8s.io.api.autoscaling.v1.Scale';
const TABLE_V1 = 'application/json;as=Table;g=meta.k8s.io;v=v1';
const KUBECTL_GET = `${TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;

let s: ResourceApp;
let listening: Promise<string> | undefined;
function baseUrl(): Promise<string> {
  return (listening ??= s.listen());
}
beforeAll(async () => {
  s = await startResourceApp();
  for (const name of ['a', 'b']) {
    const r = await s.request(json('POST', CM, { metadata: { name }, data: { k: name } }));
    expect(r.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await s?.close();
});

function raw(body: string): Buffer {
  return Buffer.from(body, 'latin1');
}

describe('protobuf responses', () => {
  it('GET answers the envelope that protoc reads as a ConfigMap', async () => {
    const r = await s.app.inject({ method: 'GET', url: `${CM}/a`, headers: { accept: PB } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe(PB);
    const body = r.rawPayload;
    expect([...body.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
    const env = decodeEnvelope(body);
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const text = protocDecode(CM_TYPE, env.raw);
    expect(text).toContain('name: "a"');
    expect(text).toContain('namespace: "default"');
    expect(text).toMatch(/resourceVersion: "\d+"/);
    expect(text).toContain('key: "k"');
    expect(protocDecode('k8s.io.apimachinery.pkg.runtime.Unknown', body.subarray(4))).toContain(
      'kind: "ConfigMap"',
    );
  });

  it('LIST answers a ConfigMapList whose items protoc reads', async () => {
    const r = await s.app.inject({ method: 'GET', url: CM, headers: { accept: `${PB}, application/json` } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe(PB);
    const env = decodeEnvelope(r.rawPayload);
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMapList' });
    const text = protocDecode('k8s.io.api.core.v1.ConfigMapList', env.raw);
    expect(text.match(/^items \{/gm)).toHaveLength(2);
    expect(text).toMatch(/^metadata \{\n[^}]*resourceVersion: "\d+"/);
  });

  it('a LIST larger than one write streams as parts that still make one ConfigMapList', async () => {
    const app = await startResourceApp();
    try {
      const NS_CM = '/api/v1/namespaces/default/configmaps';
      const big = 'x'.repeat(3000);
      for (let i = 0; i < 60; i++) {
        const r = await app.request(
          json('POST', NS_CM, { metadata: { name: `big-${i}` }, data: { v: big } }),
        );
        expect(r.statusCode).toBe(201);
      }
      // From storage (a consistent list before the cache is warm) and from the watch cache.
      for (let round = 0; round < 2; round++) {
        const r = await app.app.inject({ method: 'GET', url: NS_CM, headers: { accept: PB } });
        expect(r.statusCode).toBe(200);
        expect(r.rawPayload.byteLength).toBeGreaterThan(64 * 1024 * 2);
        const env = decodeEnvelope(r.rawPayload);
        expect(env).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMapList' });
        const text = protocDecode('k8s.io.api.core.v1.ConfigMapList', env.raw);
        expect(text.match(/^items \{/gm)).toHaveLength(60);
      }
    } finally {
      await app.close();
    }
  });

  it('errors are protobuf Status when protobuf was accepted', async () => {
    const r = await s.app.inject({ method: 'GET', url: `${CM}/missing`, headers: { accept: PB } });
    expect(r.statusCode).toBe(404);
    expect(r.headers['content-type']).toBe(PB);
    const env = decodeEnvelope(r.rawPayload);
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'Status' });
    const text = protocDecode('k8s.io.apimachinery.pkg.apis.meta.v1.Status', env.raw);
    expect(text).toContain('reason: "NotFound"');
    expect(text).toContain('code: 404');
  });

  it('POST with a protobuf body creates, and answers in protobuf', async () => {
    const message = testCodec().encodeMessage(CM_TYPE, { metadata: { name: 'pb' }, data: { x: 'y' } });
    const r = await s.app.inject({
      method: 'POST',
      url: CM,
      headers: { 'content-type': PB, accept: PB },
      payload: Buffer.from(encodeEnvelope('v1', 'ConfigMap', message)),
    });
    expect(r.statusCode).toBe(201);
    const back = testCodec().decodeObject(CM_TYPE, r.rawPayload).object as {
      metadata: { name: string; uid: string };
      data: Record<string, string>;
    };
    expect(back.metadata.name).toBe('pb');
    expect(back.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(back.data).toEqual({ x: 'y' });
    const got = await s.request({ method: 'GET', url: `${CM}/pb` });
    expect(got.json().data).toEqual({ x: 'y' });
  });

  it('PUT with a protobuf body updates', async () => {
    const current = (await s.request({ method: 'GET', url: `${CM}/pb` })).json();
    const message = testCodec().encodeMessage(CM_TYPE, { metadata: current.metadata, data: { x: 'z' } });
    const r = await s.app.inject({
      method: 'PUT',
      url: `${CM}/pb`,
      headers: { 'content-type': PB },
      payload: Buffer.from(encodeEnvelope('v1', 'ConfigMap', message)),
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ data: { x: 'z' } });
  });

  it('scale and status subresources speak protobuf', async () => {
    const deploys = '/apis/apps/v1/namespaces/default/deployments';
    expect((await s.request(json('POST', deploys, deployment('web')))).statusCode).toBe(201);
    const got = await s.app.inject({ method: 'GET', url: `${deploys}/web/scale`, headers: { accept: PB } });
    expect(got.statusCode, got.body).toBe(200);
    expect(decodeEnvelope(got.rawPayload)).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale' });
    const message = testCodec().encodeMessage(SCALE_TYPE, {
      metadata: { name: 'web' },
      spec: { replicas: 3 },
    });
    const put = await s.app.inject({
      method: 'PUT',
      url: `${deploys}/web/scale`,
      headers: { 'content-type': PB, accept: PB },
      payload: Buffer.from(encodeEnvelope('autoscaling/v1', 'Scale', message)),
    });
    expect(put.statusCode, put.body).toBe(200);
    const scale = testCodec().decodeObject(SCALE_TYPE, put.rawPayload).object as {
      spec: { replicas: number };
    };
    expect(scale.spec.replicas).toBe(3);
    const status = await s.app.inject({
      method: 'GET',
      url: `${deploys}/web/status`,
      headers: { accept: PB },
    });
    expect(decodeEnvelope(status.rawPayload)).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
  });

  it('deletecollection answers a protobuf ConfigMapList', async () => {
    const ns = '/api/v1/namespaces/default/secrets';
    expect((await s.request(json('POST', ns, { metadata: { name: 'gone' } }))).statusCode).toBe(201);
    const r = await s.app.inject({ method: 'DELETE', url: ns, headers: { accept: PB } });
    expect(r.statusCode, r.body).toBe(200);
    const env = decodeEnvelope(r.rawPayload);
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'SecretList' });
    expect(protocDecode('k8s.io.api.core.v1.SecretList', env.raw)).toContain('name: "gone"');
  });

  it.each([
    ['no magic', raw('{"kind":"ConfigMap"}')],
    ['magic only', raw('k8s\u0000')],
    ['truncated envelope', raw('k8s\u0000\u000a\u00ff')],
    [
      'raw that is not a ConfigMap',
      Buffer.from(encodeEnvelope('v1', 'ConfigMap', Uint8Array.of(0x0a, 0x05, 1))),
    ],
  ])('a protobuf body with %s is a 400 Status', async (_name, payload) => {
    const r = await s.app.inject({ method: 'POST', url: CM, headers: { 'content-type': PB }, payload });
    expect(r.statusCode).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });

  it('a protobuf body of another kind is a 400', async () => {
    const message = testCodec().encodeMessage('k8s.io.api.core.v1.Secret', { metadata: { name: 's' } });
    const r = await s.app.inject({
      method: 'POST',
      url: CM,
      headers: { 'content-type': PB },
      payload: Buffer.from(encodeEnvelope('v1', 'Secret', message)),
    });
    expect(r.statusCode).toBe(400);
  });

  it('watch streams length-prefixed frames of enveloped objects', async () => {
    const base = await baseUrl();
    const res = await fetch(`${base}${CM}?watch=1&timeoutSeconds=1`, {
      headers: { accept: `${PB};stream=watch` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(`${PB};stream=watch`);
    const splitter = new WatchFrameSplitter();
    const frames = splitter.push(new Uint8Array(await res.arrayBuffer()));
    expect(splitter.pendingBytes).toBe(0);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const f of frames) {
      expect(f.type).toBe('ADDED');
      expect(decodeEnvelope(f.object)).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    }
    const names = frames.map(
      (f) =>
        (testCodec().decodeObject(CM_TYPE, f.object).object as { metadata: { name: string } }).metadata.name,
    );
    expect(names).toContain('a');
  });
});

describe('protobuf watch errors', () => {
  // From storage (no cache), and from a watch cache that started after the compaction (its
  // window begins there): both answer a compacted version with an in-band 410.
  for (const watchCache of [false, undefined] as const) {
    it(`a compacted resourceVersion gets an ERROR frame carrying a protobuf Status (${watchCache === false ? 'storage' : 'watch cache'})`, async () => {
      const app = await startResourceApp(watchCache === false ? { watchCache } : {});
      try {
        const created = await app.request(json('POST', CM, { metadata: { name: 'first' } }));
        const first = created.json().metadata.resourceVersion;
        // Two writes after it: a watch from `first` needs revision first + 1, which is then gone.
        await app.request(json('POST', CM, { metadata: { name: 'later' } }));
        await app.request(json('POST', CM, { metadata: { name: 'later2' } }));
        await app.store.compact(await app.store.currentRevision());
        const base = await app.listen();
        const res = await fetch(`${base}${CM}?watch=1&resourceVersion=${first}`, {
          headers: { accept: `${PB};stream=watch` },
        });
        const frames = new WatchFrameSplitter().push(new Uint8Array(await res.arrayBuffer()));
        expect(frames.map((f) => f.type)).toEqual(['ERROR']);
        const env = decodeEnvelope(frames[0]?.object ?? new Uint8Array());
        expect(env).toMatchObject({ apiVersion: 'v1', kind: 'Status' });
        const text = protocDecode('k8s.io.apimachinery.pkg.apis.meta.v1.Status', env.raw);
        expect(text).toContain('reason: "Expired"');
        expect(text).toContain('code: 410');
      } finally {
        await app.close();
      }
    });
  }
});

describe('negotiation', () => {
  it('no Accept, */* and application/* are JSON', async () => {
    for (const accept of [undefined, '*/*', 'application/*', 'text/html, */*;q=0.1']) {
      const r = await s.app.inject({
        method: 'GET',
        url: `${CM}/a`,
        headers: accept === undefined ? {} : { accept },
      });
      expect(r.statusCode, accept).toBe(200);
      expect(r.headers['content-type'], accept).toMatch(/^application\/json/);
    }
  });

  it('q-values order the clauses', async () => {
    const r = await s.app.inject({
      method: 'GET',
      url: `${CM}/a`,
      headers: { accept: `application/json;q=0.5, ${PB};q=0.9` },
    });
    expect(r.headers['content-type']).toBe(PB);
    const j = await s.app.inject({
      method: 'GET',
      url: `${CM}/a`,
      headers: { accept: `application/json;q=0.9, ${PB};q=0.5` },
    });
    expect(j.headers['content-type']).toMatch(/^application\/json/);
  });

  it('nothing acceptable is a 406 Status (JSON), and nothing is written', async () => {
    const r = await s.app.inject({ method: 'GET', url: `${CM}/a`, headers: { accept: 'text/html' } });
    expect(r.statusCode).toBe(406);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
    const w = await s.app.inject({
      ...json('POST', CM, { metadata: { name: 'never' } }),
      headers: { 'content-type': 'application/json', accept: 'image/png' },
    });
    expect(w.statusCode).toBe(406);
    expect((await s.request({ method: 'GET', url: `${CM}/never` })).statusCode).toBe(404);
  });

  it('YAML answers and YAML bodies create', async () => {
    const r = await s.app.inject({ method: 'GET', url: `${CM}/a`, headers: { accept: 'application/yaml' } });
    expect(r.headers['content-type']).toMatch(/^application\/yaml/);
    expect(r.body).toMatch(/^apiVersion: v1$/m);
    expect(r.body).toMatch(/^kind: ConfigMap$/m);
    const c = await s.app.inject({
      method: 'POST',
      url: CM,
      headers: { 'content-type': 'application/yaml' },
      payload: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  q: "1"\n',
    });
    expect(c.statusCode).toBe(201);
    expect(JSON.parse(c.body)).toMatchObject({ metadata: { name: 'y' }, data: { q: '1' } });
  });

  it("lays YAML out as kube's: keys sorted, sequences unindented, YAML 1.1 look-alikes quoted", async () => {
    const created = await s.app.inject(
      json('POST', CM, {
        metadata: { name: 'yaml-layout', finalizers: ['example.com/f'] },
        data: { when: '2026-01-01T00:00:00Z', flag: 'yes', count: '10' },
      }),
    );
    expect(created.statusCode).toBe(201);
    const r = await s.app.inject({
      method: 'GET',
      url: `${CM}/yaml-layout`,
      headers: { accept: 'application/yaml' },
    });
    const head =
      'apiVersion: v1\ndata:\n  count: "10"\n  flag: "yes"\n  when: "2026-01-01T00:00:00Z"\nkind: ConfigMap\nmetadata:\n';
    expect(r.body.slice(0, head.length)).toBe(head);
    expect(r.body).toContain('\n  finalizers:\n  - example.com/f\n');
    expect(r.body).toMatch(/\n  creationTimestamp: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\n/);
  });

  it('a YAML watch is a 406 (YAML has no stream form)', async () => {
    const r = await s.app.inject({
      method: 'GET',
      url: `${CM}?watch=1`,
      headers: { accept: 'application/yaml' },
    });
    expect(r.statusCode).toBe(406);
  });

  it('an unsupported Content-Type is a 415 Status', async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: CM,
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(r.statusCode).toBe(415);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType' });
  });
});

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string };
  columnDefinitions: { name: string; type: string }[];
  rows: { cells: unknown[]; object?: { kind?: string; metadata?: { name?: string }; data?: unknown } }[];
}

describe('Table', () => {
  it('kubectl get’s Accept gives a v1 Table of the list with PartialObjectMetadata rows', async () => {
    const r = await s.app.inject({ method: 'GET', url: CM, headers: { accept: KUBECTL_GET } });
    expect(r.statusCode).toBe(200);
    const t = JSON.parse(r.body) as Table;
    expect(t.kind).toBe('Table');
    expect(t.apiVersion).toBe('meta.k8s.io/v1');
    expect(t.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(t.columnDefinitions.map((c) => c.name)).toContain('Name');
    expect(t.rows.map((row) => row.cells[0])).toEqual(expect.arrayContaining(['a', 'b']));
    expect(t.rows[0]?.object?.kind).toBe('PartialObjectMetadata');
  });

  it('v1beta1, includeObject=Object and None, GET of one object', async () => {
    const beta = await s.app.inject({
      method: 'GET',
      url: `${CM}/a?includeObject=Object`,
      headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1beta1' },
    });
    const t = JSON.parse(beta.body) as Table;
    expect(t.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(t.rows).toHaveLength(1);
    expect(t.rows[0]?.object).toMatchObject({ kind: 'ConfigMap', data: { k: 'a' } });
    const none = await s.app.inject({
      method: 'GET',
      url: `${CM}/a?includeObject=None`,
      headers: { accept: TABLE_V1 },
    });
    expect((JSON.parse(none.body) as Table).rows[0]?.object).toBeUndefined();
    const bad = await s.app.inject({
      method: 'GET',
      url: `${CM}/a?includeObject=All`,
      headers: { accept: TABLE_V1 },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('a Table of a kind without one is a 406; with a JSON fallback, JSON', async () => {
    const url = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
    const body = { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } };
    const only = await s.app.inject({
      ...json('POST', url, body),
      headers: { 'content-type': 'application/json', accept: TABLE_V1 },
    });
    expect(only.statusCode).toBe(406);
  });

  it('protobuf Table is not offered: Table;protobuf falls back', async () => {
    const r = await s.app.inject({
      method: 'GET',
      url: `${CM}/a`,
      headers: { accept: `${PB};as=Table;g=meta.k8s.io;v=v1, application/json` },
    });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'ConfigMap' });
  });

  it('watch events carry one-row Tables', async () => {
    const base = await baseUrl();
    const res = await fetch(`${base}${CM}?watch=1&timeoutSeconds=1`, { headers: { accept: TABLE_V1 } });
    const events = (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; object: Table });
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events[0]?.object.kind).toBe('Table');
    expect(events[0]?.object.rows).toHaveLength(1);
  });
});

describe('metadata-only', () => {
  const META = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
  const META_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

  it('GET answers a PartialObjectMetadata; a List request on an object is 406', async () => {
    const r = await s.app.inject({ method: 'GET', url: `${CM}/a`, headers: { accept: META } });
    const obj = JSON.parse(r.body) as {
      kind: string;
      apiVersion: string;
      metadata: { name: string };
      data?: unknown;
    };
    expect(obj).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'a' },
    });
    expect(obj.data).toBeUndefined();
    const wrong = await s.app.inject({ method: 'GET', url: `${CM}/a`, headers: { accept: META_LIST } });
    expect(wrong.statusCode).toBe(406);
  });

  it('LIST answers a PartialObjectMetadataList, in protobuf too', async () => {
    const r = await s.app.inject({ method: 'GET', url: CM, headers: { accept: META_LIST } });
    const list = JSON.parse(r.body) as {
      kind: string;
      items: { kind: string; metadata: { name: string } }[];
    };
    expect(list.kind).toBe('PartialObjectMetadataList');
    expect(list.items.map((i) => i.metadata.name)).toEqual(expect.arrayContaining(['a', 'b']));
    const pb = await s.app.inject({
      method: 'GET',
      url: CM,
      headers: { accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` },
    });
    const env = decodeEnvelope(pb.rawPayload);
    expect(env).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    const text = protocDecode('k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList', env.raw);
    expect(text).toContain('name: "a"');
    expect(text).not.toContain('key: "k"');
  });

  it('an empty PartialObjectMetadataList has null items, as kube answers, in every format', async () => {
    const empty = '/api/v1/namespaces/default/secrets?labelSelector=nothing%3Dhere';
    const r = await s.app.inject({ method: 'GET', url: empty, headers: { accept: META_LIST } });
    expect(r.body).toMatch(
      /^\{"kind":"PartialObjectMetadataList","apiVersion":"meta\.k8s\.io\/v1","metadata":\{"resourceVersion":"\d+"\},"items":null\}\n$/,
    );
    const yaml = await s.app.inject({
      method: 'GET',
      url: empty,
      headers: { accept: 'application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
    });
    expect(yaml.body).toContain('items: null\n');
    const pb = await s.app.inject({
      method: 'GET',
      url: empty,
      headers: { accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` },
    });
    const env = decodeEnvelope(pb.rawPayload);
    expect(env).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    expect(protocDecode('k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList', env.raw)).toMatch(
      // The same list metadata as a list with items, and no item.
      /^metadata \{\n  selfLink: ""\n  resourceVersion: "\d+"\n  continue: ""\n\}\n$/,
    );
  });

  it('watch sends PartialObjectMetadata events', async () => {
    const base = await baseUrl();
    const res = await fetch(`${base}${CM}?watch=1&timeoutSeconds=1`, { headers: { accept: META_LIST } });
    const events = (await res.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { type: string; object: { kind: string } });
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(new Set(events.map((e) => e.object.kind))).toEqual(new Set(['PartialObjectMetadata']));
  });
});
