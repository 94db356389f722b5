/**
 * The Update entries a plain create or update records, against the answers of kube-apiserver
 * v1.33.13 to the same requests (recorded below, with the default admission plugins): kube's
 * handlers record fields on the decoded, defaulted object, compared for a create with the kind's
 * empty typed object, before the mutating admission plugins and the kind's preparation run. So:
 * - a struct Go always has (`spec`, `spec.template`, `spec.strategy`) gets no `"."` entry;
 * - what admission adds (the token volume and mounts, priority, tolerations) and what the
 *   preparation adds (a Job's selector and labels, a Namespace's finalizer, a Service's IP
 *   families) belongs to no manager;
 * - on an update, a field the request changed is the manager's even when the preparation puts
 *   the old value back (a Namespace's `spec.finalizers`).
 * Also kube's PodSpec conversion: the deprecated `serviceAccount` follows `serviceAccountName`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

let server: TestServer;
let admin: AdminTls;

type Obj = Record<string, unknown> & {
  metadata: { managedFields?: Array<{ manager: string; fieldsV1: unknown }> };
  spec?: Record<string, unknown>;
};

async function call(method: string, path: string, body: unknown): Promise<{ status: number; json: Obj }> {
  const res = await adminJson(`${server.url}${path}`, admin, method, body);
  return { status: res.status, json: res.json as Obj };
}

/** The fieldsV1 of `manager`'s entry in a write's answer, which must be `expected` (201/200). */
async function fieldsOf(method: string, path: string, body: unknown, manager: string): Promise<unknown> {
  const res = await call(method, path, body);
  expect(res.status, JSON.stringify(res.json)).toBe(method === 'POST' ? 201 : 200);
  return res.json.metadata.managedFields?.find((e) => e.manager === manager)?.fieldsV1;
}

const CONTAINER_FIELDS = {
  '.': {},
  'f:image': {},
  'f:imagePullPolicy': {},
  'f:name': {},
  'f:resources': {},
  'f:terminationMessagePath': {},
  'f:terminationMessagePolicy': {},
};
const POD_SPEC_DEFAULTS = {
  'f:dnsPolicy': {},
  'f:restartPolicy': {},
  'f:schedulerName': {},
  'f:securityContext': {},
  'f:terminationGracePeriodSeconds': {},
};

/** kube's entry for a create of a Deployment labelled `app: web` with one container `web`. */
const DEPLOYMENT_CREATE_FIELDS = {
  'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
  'f:spec': {
    'f:progressDeadlineSeconds': {},
    'f:replicas': {},
    'f:revisionHistoryLimit': {},
    'f:selector': {},
    'f:strategy': {
      'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} },
      'f:type': {},
    },
    'f:template': {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"web"}': CONTAINER_FIELDS }, ...POD_SPEC_DEFAULTS },
    },
  },
};

beforeAll(async () => {
  server = await startTestServer();
  admin = adminTls(server.kubeconfigPath);
  expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'mf' } })).status).toBe(201);
  const pc = await call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
    metadata: { name: 'hi' },
    value: 1000,
  });
  expect(pc.status).toBe(201);
}, 60_000);
afterAll(async () => server?.close());

describe('managedFields of a create, as kube-apiserver v1.33 records them', () => {
  it('a Pod: nothing the admission plugins add (token volume, priority, tolerations)', async () => {
    const fields = await fieldsOf(
      'POST',
      '/api/v1/namespaces/mf/pods?fieldManager=probe',
      {
        metadata: { name: 'p1', labels: { app: 'web' } },
        spec: { priorityClassName: 'hi', containers: [{ name: 'web', image: 'nginx' }] },
      },
      'probe',
    );
    expect(fields).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:containers': { 'k:{"name":"web"}': CONTAINER_FIELDS },
        ...POD_SPEC_DEFAULTS,
        'f:enableServiceLinks': {},
        'f:priorityClassName': {},
      },
    });
  });

  it('a Deployment: no "." for the structs Go always has', async () => {
    const fields = await fieldsOf(
      'POST',
      '/apis/apps/v1/namespaces/mf/deployments?fieldManager=kubectl-create',
      {
        metadata: { name: 'd1', labels: { app: 'web' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx' }] },
          },
        },
      },
      'kubectl-create',
    );
    expect(fields).toEqual(DEPLOYMENT_CREATE_FIELDS);
  });

  it('nothing Go drops when it decodes: null, empty maps and lists', async () => {
    // kube records no entry at all for a ConfigMap whose only fields are empty maps.
    const cm = await call('POST', '/api/v1/namespaces/mf/configmaps?fieldManager=kubectl-create', {
      metadata: { name: 'empty', labels: {}, annotations: {} },
      data: {},
    });
    expect(cm.status).toBe(201);
    expect(cm.json.metadata.managedFields).toBeUndefined();
    const fields = await fieldsOf(
      'POST',
      '/apis/apps/v1/namespaces/mf/deployments?fieldManager=kubectl-create',
      {
        metadata: { name: 'd-empty', labels: { app: 'web' }, annotations: {}, finalizers: [] },
        spec: {
          selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
          template: {
            metadata: { labels: { app: 'web' }, annotations: null },
            spec: {
              tolerations: [],
              volumes: null,
              nodeSelector: {},
              containers: [{ name: 'web', image: 'nginx', env: [], args: [], ports: [] }],
            },
          },
        },
      },
      'kubectl-create',
    );
    expect(fields).toEqual(DEPLOYMENT_CREATE_FIELDS);
    // A pointer's zero is a value Go keeps: replicas 0 is recorded.
    const zero = await fieldsOf(
      'PUT',
      '/apis/apps/v1/namespaces/mf/deployments/d-empty?fieldManager=scaler',
      {
        metadata: { name: 'd-empty', labels: { app: 'web' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx' }] },
          },
        },
      },
      'scaler',
    );
    expect(zero).toEqual({ 'f:spec': { 'f:replicas': {} } });
  });

  it('a review, never stored, answers with the request manager entry; a rules review answers a new object', async () => {
    const ssar = await fieldsOf(
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?fieldManager=kubectl',
      { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } },
      'kubectl',
    );
    expect(ssar).toEqual({
      'f:spec': { 'f:resourceAttributes': { '.': {}, 'f:resource': {}, 'f:verb': {} } },
    });
    const review = await fieldsOf(
      'POST',
      '/apis/authentication.k8s.io/v1/tokenreviews?fieldManager=kubectl',
      { spec: { token: 'bogus' } },
      'kubectl',
    );
    expect(review).toEqual({ 'f:spec': { 'f:token': {} } });
    const rules = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      metadata: { labels: { a: 'b' } },
      spec: { namespace: 'mf' },
    });
    expect(rules.status).toBe(201);
    expect([rules.json.metadata, rules.json.spec]).toEqual([{ creationTimestamp: null }, {}]);
  });

  it('a scale write: its entry has no time (kube builds it through its scale handler) and so comes first', async () => {
    const path = '/apis/apps/v1/namespaces/mf/deployments';
    const created = await call('POST', `${path}?fieldManager=creator`, {
      metadata: { name: 'scaled', labels: { app: 'web' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx' }] },
        },
      },
    });
    expect(created.status).toBe(201);
    const scaled = await call('PUT', `${path}/scaled/scale?fieldManager=scaler`, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'scaled', namespace: 'mf' },
      spec: { replicas: 3 },
    });
    expect(scaled.status).toBe(200);
    const entries = (await call('GET', `${path}/scaled`, undefined)).json.metadata.managedFields ?? [];
    expect(entries.map((e) => [e.manager, (e as { subresource?: string }).subresource])).toEqual([
      ['scaler', 'scale'],
      ['creator', undefined],
    ]);
    expect(entries[0]).not.toHaveProperty('time');
    expect(entries[0]?.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(entries[1]).toHaveProperty('time');
  });

  it('a Job, a Service and a Namespace: nothing their preparation adds', async () => {
    const job = await fieldsOf(
      'POST',
      '/apis/batch/v1/namespaces/mf/jobs?fieldManager=x',
      {
        metadata: { name: 'j1' },
        spec: {
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
      'x',
    );
    expect(job).toEqual({
      'f:spec': {
        'f:backoffLimit': {},
        'f:completionMode': {},
        'f:completions': {},
        'f:manualSelector': {},
        'f:parallelism': {},
        'f:podReplacementPolicy': {},
        'f:suspend': {},
        'f:template': {
          'f:spec': { 'f:containers': { 'k:{"name":"c"}': CONTAINER_FIELDS }, ...POD_SPEC_DEFAULTS },
        },
      },
    });
    const service = await fieldsOf(
      'POST',
      '/api/v1/namespaces/mf/services?fieldManager=kubectl-create',
      { metadata: { name: 's1' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
      'kubectl-create',
    );
    expect(service).toEqual({
      'f:spec': {
        'f:internalTrafficPolicy': {},
        'f:ports': {
          '.': {},
          'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} },
        },
        'f:selector': {},
        'f:sessionAffinity': {},
        'f:type': {},
      },
    });
    const namespace = await fieldsOf(
      'POST',
      '/api/v1/namespaces?fieldManager=maker',
      { metadata: { name: 'upd' } },
      'maker',
    );
    expect(namespace).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } },
    });
  });

  it('an update records what the request changed, before the preparation restores it', async () => {
    const fields = await fieldsOf(
      'PUT',
      '/api/v1/namespaces/upd?fieldManager=putter',
      { metadata: { name: 'upd', labels: { a: 'b' } }, spec: { finalizers: ['example.com/x'] } },
      'putter',
    );
    expect(fields).toEqual({ 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:spec': { 'f:finalizers': {} } });
    const stored = await adminJson(`${server.url}/api/v1/namespaces/upd`, admin);
    expect(stored.json['spec']).toEqual({ finalizers: ['kubernetes'] });
  });
});

describe("kube's PodSpec conversion", () => {
  it('keeps the deprecated serviceAccount equal to serviceAccountName, in templates too', async () => {
    const template = async (name: string, spec: Record<string, unknown>): Promise<unknown> => {
      const res = await call('POST', '/apis/apps/v1/namespaces/mf/deployments', {
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { ...spec, containers: [{ name: 'c', image: 'x' }] },
          },
        },
      });
      expect(res.status).toBe(201);
      const t = (res.json.spec?.['template'] as { spec: Record<string, unknown> }).spec;
      return [t['serviceAccountName'], t['serviceAccount']];
    };
    expect(await template('sa1', { serviceAccountName: 'foo' })).toEqual(['foo', 'foo']);
    expect(await template('sa2', { serviceAccount: 'bar' })).toEqual(['bar', 'bar']);
    expect(await template('sa3', { serviceAccountName: 'foo', serviceAccount: 'bar' })).toEqual([
      'foo',
      'foo',
    ]);
    expect(await template('sa4', {})).toEqual([undefined, undefined]);
  });
});
