/**
 * The three patch formats (unit tests of the patch functions, then through PATCH), and the
 * status and scale subresources.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyJsonPatch, JsonPatchApplyError, JsonPatchFormatError } from '../../src/api/json-patch.js';
import { applyMergePatch } from '../../src/resource/patch/merge-patch.js';
import { loadPatchSchema } from '../../src/resource/patch/schema-adapter.js';
import {
  applyStrategicMergePatch,
  StrategicMergePatchError,
} from '../../src/resource/patch/strategic-merge.js';
import {
  deployment,
  json,
  startResourceApp,
  type KContainer,
  type KMeta,
  type KObj,
  type ResourceApp,
} from './resources.support.js';

/** The pod shape the strategic merge patch tests read back. */
interface PodOut {
  metadata: KMeta;
  spec: { containers: KContainer[]; tolerations?: unknown[]; volumes?: unknown[] };
}

describe('JSON patch (RFC 6902)', () => {
  const doc = { a: { b: [1, 2, 3] }, 'x/y': 1, 'm~n': 2 };

  it('add, remove, replace, move, copy, test; the input is not modified', () => {
    const before = structuredClone(doc);
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/a/b/1', value: 9 },
      { op: 'add', path: '/a/b/-', value: 10 },
      { op: 'remove', path: '/a/b/0' },
      { op: 'replace', path: '/x~1y', value: 'r' },
      { op: 'copy', from: '/m~0n', path: '/c' },
      { op: 'move', from: '/c', path: '/d' },
      { op: 'test', path: '/d', value: 2 },
    ]);
    expect(out).toEqual({ a: { b: [9, 2, 3, 10] }, 'x/y': 'r', 'm~n': 2, d: 2 });
    expect(doc).toEqual(before);
  });

  it("malformed patches (kube's decoder's words) and failing operations are told apart", () => {
    const decodeError = (patch: unknown): string => {
      try {
        applyJsonPatch(doc, patch);
      } catch (err) {
        expect(err).toBeInstanceOf(JsonPatchFormatError);
        return (err as Error).message;
      }
      throw new Error('no error');
    };
    expect(decodeError({ op: 'add' })).toBe(
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    );
    expect(decodeError([1])).toBe(
      'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp',
    );
    expect(decodeError([{ op: 'add', path: true }])).toBe(
      'error decoding patch: json: cannot unmarshal bool into Go struct field jsonPatchOp.path of type string',
    );
    for (const ops of [
      [{ op: 'frobnicate', path: '/a' }],
      [{ op: 'add' }],
      [null],
      [{ op: 'add', path: 'no-slash', value: 1 }],
      [{ op: 'copy', path: '/z' }],
      [{ op: 'remove', path: '/nope' }],
      [{ op: 'replace', path: '/a/b/3', value: 1 }],
      [{ op: 'add', path: '/a/b/7', value: 1 }],
      [{ op: 'test', path: '/x~1y', value: 2 }],
      [{ op: 'add', path: '/q/r', value: 1 }],
    ]) {
      expect(() => applyJsonPatch(doc, ops), JSON.stringify(ops)).toThrow(JsonPatchApplyError);
    }
  });

  it("is as loose as kube's: replace sets a missing key, a missing value is null", () => {
    expect(applyJsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }])).toMatchObject({ nope: 1 });
    expect(applyJsonPatch(doc, [{ op: 'add', path: '/n' }])).toMatchObject({ n: null });
    expect(applyJsonPatch(doc, null)).toEqual(doc);
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  it('follows the RFC examples', () => {
    expect(applyMergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(applyMergePatch({ a: 'b' }, { b: 'c' })).toEqual({ a: 'b', b: 'c' });
    expect(applyMergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(applyMergePatch({ a: 'b', b: 'c' }, { a: null })).toEqual({ b: 'c' });
    expect(applyMergePatch({ a: ['b'] }, { a: 'c' })).toEqual({ a: 'c' });
    expect(applyMergePatch({ a: 'c' }, { a: ['b'] })).toEqual({ a: ['b'] });
    expect(applyMergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(applyMergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(applyMergePatch(['a', 'b'], ['c', 'd'])).toEqual(['c', 'd']);
    expect(applyMergePatch({ a: 'b' }, ['c'])).toEqual(['c']);
    expect(applyMergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
    expect(applyMergePatch([1, 2], { a: 'b', c: null })).toEqual({ a: 'b' });
    expect(applyMergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } });
  });
});

describe('strategic merge patch', () => {
  const schema = loadPatchSchema();
  const POD = 'k8s.io.api.core.v1.Pod';
  const pod = {
    metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          ports: [{ containerPort: 80 }],
        },
        { name: 'side', image: 'side:1' },
      ],
      volumes: [{ name: 'v', emptyDir: {} }],
      tolerations: [{ key: 't1' }],
    },
  };

  it('merges lists by their merge key and keeps other items', () => {
    const out = applyStrategicMergePatch(
      pod,
      { spec: { containers: [{ name: 'app', image: 'app:2' }] } },
      POD,
      schema,
    ) as PodOut;
    expect(out.spec.containers).toHaveLength(2);
    expect(out.spec.containers[0]).toMatchObject({
      name: 'app',
      image: 'app:2',
      ports: [{ containerPort: 80 }],
    });
    expect(out.spec.containers[0]?.env).toHaveLength(2);
    expect(out.spec.containers[1]).toEqual({ name: 'side', image: 'side:1' });
  });

  it('merges nested keyed lists; new items go before the items only the server had (kube v1.33.13)', () => {
    const out = applyStrategicMergePatch(
      pod,
      {
        spec: {
          containers: [
            {
              name: 'app',
              env: [
                { name: 'B', value: '3' },
                { name: 'C', value: '4' },
              ],
            },
            { name: 'new', image: 'n' },
          ],
        },
      },
      POD,
      schema,
    ) as PodOut;
    expect(out.spec.containers[0]?.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    expect(out.spec.containers.map((c) => c.name)).toEqual(['app', 'new', 'side']);
  });

  it('replaces lists without a merge strategy, merges maps, null deletes', () => {
    const out = applyStrategicMergePatch(
      pod,
      { metadata: { labels: { b: null, c: '3' } }, spec: { tolerations: [{ key: 't2' }] } },
      POD,
      schema,
    ) as PodOut;
    expect(out.metadata.labels).toEqual({ a: '1', c: '3' });
    expect(out.spec.tolerations).toEqual([{ key: 't2' }]);
  });

  it('treats primitive merge lists as sets (finalizers)', () => {
    const out = applyStrategicMergePatch(
      pod,
      { metadata: { finalizers: ['y', 'z'] } },
      POD,
      schema,
    ) as PodOut;
    expect(out.metadata.finalizers).toEqual(['x', 'y', 'z']);
  });

  it('$patch: delete removes a list item; $patch: replace replaces a list or a map', () => {
    const del = applyStrategicMergePatch(
      pod,
      { spec: { containers: [{ name: 'side', $patch: 'delete' }] } },
      POD,
      schema,
    ) as PodOut;
    expect(del.spec.containers.map((c) => c.name)).toEqual(['app']);
    const replaceList = applyStrategicMergePatch(
      pod,
      { spec: { containers: [{ name: 'only', image: 'o' }, { $patch: 'replace' }] } },
      POD,
      schema,
    ) as PodOut;
    expect(replaceList.spec.containers).toEqual([{ name: 'only', image: 'o' }]);
    const replaceMap = applyStrategicMergePatch(
      pod,
      { metadata: { labels: { z: '9', $patch: 'replace' } } },
      POD,
      schema,
    ) as PodOut;
    expect(replaceMap.metadata.labels).toEqual({ z: '9' });
    const deleteMap = applyStrategicMergePatch(
      pod,
      { metadata: { labels: { $patch: 'delete' } } },
      POD,
      schema,
    ) as PodOut;
    expect(deleteMap.metadata.labels).toBeUndefined();
  });

  it("orders a merged list as kube v1.33.13 does: the patch's items, interleaved with the server's", () => {
    const withEnv = (names: string[]): unknown => ({
      ...pod,
      spec: { containers: [{ name: 'app', image: 'a', env: names.map((name) => ({ name, value: 'o' })) }] },
    });
    const envAfter = (names: string[], patch: Record<string, unknown>): string[] => {
      const out = applyStrategicMergePatch(
        withEnv(names),
        { spec: { containers: [{ name: 'app', ...patch }] } },
        POD,
        schema,
      ) as { spec: { containers: { env: { name: string }[] }[] } };
      return (out.spec.containers[0]?.env ?? []).map((e) => e.name);
    };
    // Each expected order is kube-apiserver's answer to the same patch of the same list.
    expect(envAfter(['A', 'B', 'C'], { env: [{ name: 'D' }, { name: 'C' }, { name: 'A' }] })).toEqual([
      'D',
      'B',
      'C',
      'A',
    ]);
    expect(
      envAfter(['D', 'B', 'C', 'A'], {
        '$setElementOrder/env': [{ name: 'B' }, { name: 'E' }, { name: 'A' }],
        env: [{ name: 'E' }],
      }),
    ).toEqual(['D', 'B', 'E', 'C', 'A']);
    expect(
      envAfter(['D', 'B', 'E', 'C', 'A'], { env: [{ name: 'B', $patch: 'delete' }, { name: 'F' }] }),
    ).toEqual(['F', 'D', 'E', 'C', 'A']);
    const finalizers = applyStrategicMergePatch(
      pod,
      { metadata: { finalizers: ['c', 'x'] } },
      POD,
      schema,
    ) as PodOut;
    expect(finalizers.metadata.finalizers).toEqual(['c', 'x', 'y']);
  });

  it('$deleteFromPrimitiveList, $setElementOrder and $retainKeys', () => {
    const out = applyStrategicMergePatch(
      pod,
      {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] },
        spec: {
          '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }],
          containers: [{ name: 'app', image: 'app:3' }],
          volumes: [{ name: 'v', hostPath: { path: '/d' }, $retainKeys: ['name', 'hostPath'] }],
        },
      },
      POD,
      schema,
    ) as PodOut;
    expect(out.metadata.finalizers).toEqual(['y']);
    expect(out.spec.containers.map((c) => c.name)).toEqual(['side', 'app']);
    expect(out.spec.containers[1]?.image).toBe('app:3');
    expect(out.spec.volumes).toEqual([{ name: 'v', hostPath: { path: '/d' } }]);
  });

  it('rejects items without their merge key and unknown directives', () => {
    expect(() =>
      applyStrategicMergePatch(pod, { spec: { containers: [{ image: 'x' }] } }, POD, schema),
    ).toThrow(StrategicMergePatchError);
    expect(() => applyStrategicMergePatch(pod, { metadata: { $patch: 'explode' } }, POD, schema)).toThrow(
      StrategicMergePatchError,
    );
    expect(() => applyStrategicMergePatch(pod, [1], POD, schema)).toThrow(StrategicMergePatchError);
  });
});

const CM = '/api/v1/namespaces/default/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';

describe('PATCH', () => {
  let s: ResourceApp;
  beforeEach(async () => {
    s = await startResourceApp();
  });
  afterEach(async () => {
    await s.close();
  });

  function patch(url: string, body: unknown, type: string) {
    return s.request(json('PATCH', url, body, type));
  }

  it('merge patch updates and bumps the resourceVersion', async () => {
    const c = (
      await s.request(json('POST', CM, { metadata: { name: 'a' }, data: { x: '1', y: '2' } }))
    ).json();
    const r = await patch(`${CM}/a`, { data: { x: null, z: '3' } }, 'application/merge-patch+json');
    expect(r.statusCode).toBe(200);
    expect(r.json()['data']).toEqual({ y: '2', z: '3' });
    expect(r.json()['metadata'].resourceVersion).not.toBe(c['metadata'].resourceVersion);
    expect(r.json()['metadata'].uid).toBe(c['metadata'].uid);
  });

  it('JSON patch updates; a failing test op is 422; a malformed patch is 400', async () => {
    await s.request(json('POST', CM, { metadata: { name: 'a' }, data: { x: '1' } }));
    const ok = await patch(
      `${CM}/a`,
      [
        { op: 'test', path: '/data/x', value: '1' },
        { op: 'replace', path: '/data/x', value: '2' },
      ],
      'application/json-patch+json',
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json()['data']).toEqual({ x: '2' });
    const failed = await patch(
      `${CM}/a`,
      [{ op: 'test', path: '/data/x', value: '1' }],
      'application/json-patch+json',
    );
    expect(failed.statusCode).toBe(422);
    // kube's generic answer: the library's reason is not shown.
    expect(failed.json()).toMatchObject({
      reason: 'Invalid',
      message: 'the server rejected our request due to an error in our request',
      details: {},
    });
    const malformed = await patch(`${CM}/a`, { op: 'add' }, 'application/json-patch+json');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()['message']).toBe(
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    );
    const loose = await patch(
      `${CM}/a`,
      [{ op: 'replace', path: '/data/new', value: 'v' }],
      'application/json-patch+json',
    );
    expect(loose.statusCode).toBe(200);
    expect(loose.json()['data']).toEqual({ x: '2', new: 'v' });
    const nameless = await patch(
      `${CM}/a`,
      [{ op: 'remove', path: '/metadata/name' }],
      'application/json-patch+json',
    );
    expect(nameless.statusCode).toBe(400);
    expect(nameless.json()['message']).toBe(
      'the name of the object (a based on URL) was undeterminable: name must be provided',
    );
  });

  it('strategic merge patch on a deployment merges containers by name', async () => {
    const d = deployment('d') as unknown as KObj;
    d.spec?.template?.spec?.containers?.push({ name: 'side', image: 'side:1' });
    await s.request(json('POST', DEPLOY, d));
    const r = await patch(
      `${DEPLOY}/d`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } },
      'application/strategic-merge-patch+json',
    );
    expect(r.statusCode).toBe(200);
    const out = r.json();
    expect(out['spec']?.template?.spec?.containers?.map((c) => [c.name, c.image])).toEqual([
      ['c', 'nginx:2'],
      ['side', 'side:1'],
    ]);
    expect(out['metadata'].generation).toBe(2);
  });

  it('a patch pinning a stale resourceVersion is 409; without one it applies to the latest', async () => {
    const c = (await s.request(json('POST', CM, { metadata: { name: 'a' }, data: { x: '1' } }))).json();
    await patch(`${CM}/a`, { data: { x: '2' } }, 'application/merge-patch+json');
    const stale = await patch(
      `${CM}/a`,
      { metadata: { resourceVersion: c['metadata'].resourceVersion }, data: { x: '3' } },
      'application/merge-patch+json',
    );
    expect(stale.statusCode).toBe(409);
    expect(stale.json()['reason']).toBe('Conflict');
  });

  it('patching a missing object is 404; renaming via patch is 400; changing kind is 400', async () => {
    expect((await patch(`${CM}/nope`, { data: {} }, 'application/merge-patch+json')).statusCode).toBe(404);
    await s.request(json('POST', CM, { metadata: { name: 'a' } }));
    expect(
      (await patch(`${CM}/a`, { metadata: { name: 'b' } }, 'application/merge-patch+json')).statusCode,
    ).toBe(400);
    expect((await patch(`${CM}/a`, { kind: 'Secret' }, 'application/merge-patch+json')).statusCode).toBe(400);
  });

  it('PATCH with a non-patch media type is 415; an apply patch applies', async () => {
    await s.request(json('POST', CM, { metadata: { name: 'a' } }));
    const plain = await patch(`${CM}/a`, { data: {} }, 'application/json');
    expect(plain.statusCode).toBe(415);
    expect(plain.json()['reason']).toBe('UnsupportedMediaType');
    const apply = await s.request({
      method: 'PATCH',
      url: `${CM}/a?fieldManager=me`,
      headers: { 'content-type': 'application/apply-patch+yaml' },
      payload: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n',
    });
    expect(apply.statusCode).toBe(200);
    expect(apply.json()['data']).toEqual({ k: 'v' });
  });

  it('status patch changes only status', async () => {
    await s.request(json('POST', DEPLOY, deployment('d')));
    const r = await patch(
      `${DEPLOY}/d/status`,
      { spec: { replicas: 5 }, status: { replicas: 2, readyReplicas: 1 } },
      'application/merge-patch+json',
    );
    expect(r.statusCode).toBe(200);
    expect(r.json()['status']).toEqual({ replicas: 2, readyReplicas: 1 });
    expect(r.json()['spec']?.replicas).toBe(1);
    const main = await patch(`${DEPLOY}/d`, { status: { replicas: 9 } }, 'application/merge-patch+json');
    expect(main.json()['status']).toEqual({ replicas: 2, readyReplicas: 1 });
  });
});

describe('scale subresource', () => {
  let s: ResourceApp;
  beforeEach(async () => {
    s = await startResourceApp();
  });
  afterEach(async () => {
    await s.close();
  });

  it('GET returns an autoscaling/v1 Scale', async () => {
    const d = (await s.request(json('POST', DEPLOY, deployment('d')))).json();
    await s.request(
      json('PATCH', `${DEPLOY}/d/status`, { status: { replicas: 1 } }, 'application/merge-patch+json'),
    );
    const r = await s.request(json('GET', `${DEPLOY}/d/scale`));
    expect(r.statusCode).toBe(200);
    const scale = r.json();
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'd', namespace: 'default', uid: d['metadata'].uid },
      spec: { replicas: 1 },
      status: { replicas: 1, selector: 'app=d' },
    });
  });

  it('PUT and PATCH change spec.replicas of the object; stale resourceVersion is 409; negative is 422', async () => {
    await s.request(json('POST', DEPLOY, deployment('d')));
    const scale = (await s.request(json('GET', `${DEPLOY}/d/scale`))).json();
    const put = await s.request(json('PUT', `${DEPLOY}/d/scale`, { ...scale, spec: { replicas: 3 } }));
    expect(put.statusCode).toBe(200);
    expect(put.json()['spec']).toEqual({ replicas: 3 });
    const d = (await s.request(json('GET', `${DEPLOY}/d`))).json();
    expect(d['spec']?.replicas).toBe(3);
    expect(d['metadata'].generation).toBe(2);
    expect(put.json()['metadata'].resourceVersion).toBe(d['metadata'].resourceVersion);

    const stale = await s.request(json('PUT', `${DEPLOY}/d/scale`, { ...scale, spec: { replicas: 4 } }));
    expect(stale.statusCode).toBe(409);
    const negative = await s.request(
      json('PUT', `${DEPLOY}/d/scale`, {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: { name: 'd' },
        spec: { replicas: -1 },
      }),
    );
    expect(negative.statusCode).toBe(422);

    const patched = await s.request(
      json('PATCH', `${DEPLOY}/d/scale`, { spec: { replicas: 5 } }, 'application/merge-patch+json'),
    );
    expect(patched.statusCode).toBe(200);
    expect(patched.json()['spec']).toEqual({ replicas: 5 });
    const smp = await s.request(
      json('PATCH', `${DEPLOY}/d/scale`, { spec: { replicas: 0 } }, 'application/strategic-merge-patch+json'),
    );
    expect(smp.json()['spec']).toEqual({});
  });

  it('replication controllers have a map selector; scale is 404 on kinds without it', async () => {
    await s.request(
      json('POST', '/api/v1/namespaces/default/replicationcontrollers', {
        metadata: { name: 'rc' },
        spec: {
          replicas: 2,
          selector: { b: '2', a: '1' },
          template: {
            metadata: { labels: { a: '1', b: '2' } },
            spec: { containers: [{ name: 'c', image: 'x' }] },
          },
        },
      }),
    );
    const r = await s.request(json('GET', '/api/v1/namespaces/default/replicationcontrollers/rc/scale'));
    expect(r.json()).toMatchObject({ spec: { replicas: 2 }, status: { replicas: 0, selector: 'a=1,b=2' } });
    expect((await s.request(json('GET', `${CM}/x/scale`))).statusCode).toBe(404);
  });
});
