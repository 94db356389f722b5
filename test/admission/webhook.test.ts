/**
 * Admission webhooks end to end: one Capstan server with MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook in its chain, one HTTPS webhook server with its own CA (made here),
 * reached by `url` and by `service` (a Service and an EndpointSlice pointing at 127.0.0.1).
 * Each test works in its own namespace and scopes its configuration to it (namespaceSelector),
 * so the configurations of different tests never meet.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminFetch,
  adminJson,
  adminTls,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from '../authn/support.js';

type Json = Record<string, unknown>;
type Review = { apiVersion: string; kind: string; request: Json & { uid: string; object: Json | null } };
type Answer = Json | ((review: Review, req: IncomingMessage, res: ServerResponse) => void | Promise<void>);

let server: TestServer;
let tls: AdminTls;
let hook: LocalHttps;
let caPem: string;
let otherCaPem: string;
let deadPort: number;
/** The reviews each path received, in order. */
const received = new Map<string, { review: Review; query: string; servername: string; host: string }[]>();
/** What each path answers: a response object (uid filled in) or a handler. */
const answers = new Map<string, Answer>();

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

function allow(extra: Json = {}): Json {
  return { allowed: true, ...extra };
}

function patchOf(ops: unknown[]): Json {
  return { allowed: true, patchType: 'JSONPatch', patch: b64(JSON.stringify(ops)) };
}

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return adminJson(`${server.url}${path}`, tls, method, body, headers);
}

async function namespace(name: string): Promise<void> {
  const r = await api('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { suite: name } },
  });
  expect(r.status).toBe(201);
}

function configMap(ns: string, name: string, labels: Record<string, string> = {}): Json {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { k: 'v' } };
}

function createConfigMap(ns: string, name: string, labels: Record<string, string> = {}, query = '') {
  return api('POST', `/api/v1/namespaces/${ns}/configmaps${query}`, configMap(ns, name, labels));
}

interface HookOptions {
  readonly name: string;
  readonly path?: string;
  readonly url?: string;
  readonly service?: Json;
  readonly ca?: string | null;
  readonly failurePolicy?: 'Fail' | 'Ignore';
  readonly timeoutSeconds?: number;
  readonly sideEffects?: string;
  readonly versions?: string[];
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
  readonly objectSelector?: Json;
  readonly namespaceSelector?: Json;
  readonly matchConditions?: Json[];
  readonly resources?: string[];
  readonly apiGroups?: string[];
  readonly apiVersions?: string[];
  readonly matchPolicy?: 'Exact' | 'Equivalent';
}

function webhook(ns: string, o: HookOptions, mutating: boolean): Json {
  const clientConfig: Json = {};
  if (o.service !== undefined) clientConfig['service'] = o.service;
  else clientConfig['url'] = o.url ?? `${hook.url}${o.path ?? '/'}`;
  if (o.ca !== null) clientConfig['caBundle'] = b64(o.ca ?? caPem);
  return {
    name: o.name,
    clientConfig,
    rules: [
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: o.apiGroups ?? [''],
        apiVersions: o.apiVersions ?? ['v1'],
        resources: o.resources ?? ['configmaps'],
      },
    ],
    namespaceSelector: o.namespaceSelector ?? { matchLabels: { suite: ns } },
    ...(o.objectSelector === undefined ? {} : { objectSelector: o.objectSelector }),
    failurePolicy: o.failurePolicy ?? 'Fail',
    sideEffects: o.sideEffects ?? 'None',
    admissionReviewVersions: o.versions ?? ['v1'],
    ...(o.timeoutSeconds === undefined ? {} : { timeoutSeconds: o.timeoutSeconds }),
    ...(mutating && o.reinvocationPolicy !== undefined ? { reinvocationPolicy: o.reinvocationPolicy } : {}),
    ...(o.matchConditions === undefined ? {} : { matchConditions: o.matchConditions }),
    ...(o.matchPolicy === undefined ? {} : { matchPolicy: o.matchPolicy }),
  };
}

const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

async function configure(kind: 'mutating' | 'validating', name: string, ns: string, hooks: HookOptions[]) {
  const r = await api('POST', kind === 'mutating' ? MUTATING : VALIDATING, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: hooks.map((h) => webhook(ns, h, kind === 'mutating')),
  });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
}

/** Polls `probe` until it returns true (configurations reach the plugins through a watch). */
async function until(probe: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until a dry-run create in `ns` reaches `path` (the configuration is in effect). */
async function inEffect(ns: string, path: string, labels: Record<string, string> = {}): Promise<void> {
  await until(async () => {
    const before = received.get(path)?.length ?? 0;
    await createConfigMap(ns, 'probe', labels, '?dryRun=All');
    return (received.get(path)?.length ?? 0) > before;
  });
}

beforeAll(async () => {
  const ca = await makeCa('webhook-ca');
  const other = await makeCa('other-ca');
  caPem = ca.certPem;
  otherCaPem = other.certPem;
  const serving = await issue(ca, { commonName: 'webhook' }, 'server', {
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['hooks.svc-ns.svc'],
  });
  hook = await startLocalHttps(serving, (req, body, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    const review = JSON.parse(body) as Review;
    const list = received.get(url.pathname) ?? [];
    const servername = (req.socket as TLSSocket).servername;
    list.push({
      review,
      query: url.search,
      servername: typeof servername === 'string' ? servername : '',
      host: req.headers.host ?? '',
    });
    received.set(url.pathname, list);
    const answer = answers.get(url.pathname) ?? allow();
    if (typeof answer === 'function') {
      void Promise.resolve(answer(review, req, res));
      return;
    }
    sendJson(res, 200, {
      apiVersion: review.apiVersion,
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, ...answer },
    });
  });
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await hook?.close();
});

describe('mutating webhooks', () => {
  it('applies a JSONPatch reached by url, sends kube’s AdmissionReview, and passes warnings on', async () => {
    await namespace('m-url');
    answers.set('/m-url', patchOf([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]));
    // The object has no labels (an empty map is not kept): the patch adds the map.
    answers.set('/m-url', {
      ...patchOf([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]),
      warnings: ['think twice'],
      auditAnnotations: { why: 'because' },
    });
    await configure('mutating', 'm-url', 'm-url', [{ name: 'label.capstan.test', path: '/m-url' }]);
    await inEffect('m-url', '/m-url');
    const r = await createConfigMap('m-url', 'a');
    expect(r.status).toBe(201);
    expect(r.headers['warning']).toContain('299 - "think twice"');
    const got = await api('GET', '/api/v1/namespaces/m-url/configmaps/a');
    expect((got.json['metadata'] as Json)['labels']).toEqual({ mutated: 'yes' });
    const last = received.get('/m-url')?.at(-1);
    expect(last?.query).toBe('?timeout=10s');
    const request = last?.review.request as Json;
    expect(last?.review.apiVersion).toBe('admission.k8s.io/v1');
    expect(request).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'a',
      namespace: 'm-url',
      operation: 'CREATE',
      dryRun: false,
      oldObject: null,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    expect(request['uid']).toMatch(/^[0-9a-f-]{36}$/);
    expect((request['userInfo'] as Json)['username']).toEqual(expect.any(String));
    expect((request['object'] as Json)['data']).toEqual({ k: 'v' });
    // An update is sent with the stored object as oldObject.
    const u = await api(
      'PATCH',
      '/api/v1/namespaces/m-url/configmaps/a',
      { data: { k: 'w' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(u.status).toBe(200);
    const upd = received.get('/m-url')?.at(-1)?.review.request as Json;
    expect(upd['operation']).toBe('UPDATE');
    expect((upd['oldObject'] as Json)['data']).toEqual({ k: 'v' });
    expect((upd['object'] as Json)['data']).toEqual({ k: 'w' });
    // A delete is sent with oldObject and no object.
    answers.set('/m-url', allow());
    expect((await api('DELETE', '/api/v1/namespaces/m-url/configmaps/a')).status).toBe(200);
    const del = received.get('/m-url')?.at(-1)?.review.request as Json;
    expect(del).toMatchObject({
      operation: 'DELETE',
      name: 'a',
      object: null,
      options: { kind: 'DeleteOptions' },
    });
    expect((del['oldObject'] as Json)['data']).toEqual({ k: 'w' });
    const metrics = await adminFetch(`${server.url}/metrics`, tls);
    expect(metrics.body).toMatch(
      /^apiserver_admission_webhook_admission_duration_seconds_count\{name="label.capstan.test",type="admit",operation="CREATE",rejected="false"\} [1-9]/m,
    );
  });

  it('calls a webhook for an equivalent version with matchPolicy Equivalent, not with Exact', async () => {
    await namespace('equiv');
    answers.set('/equiv', patchOf([{ op: 'add', path: '/metadata/labels', value: { equivalent: 'yes' } }]));
    const common = {
      apiGroups: ['autoscaling'],
      apiVersions: ['v1'],
      resources: ['horizontalpodautoscalers'],
    };
    await configure('mutating', 'equiv', 'equiv', [
      { name: 'equivalent.capstan.test', path: '/equiv', matchPolicy: 'Equivalent', ...common },
      { name: 'exact.capstan.test', path: '/exact', matchPolicy: 'Exact', ...common },
    ]);
    const hpa = (name: string): Json => ({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
        minReplicas: 1,
        maxReplicas: 3,
      },
    });
    const base = '/apis/autoscaling/v2/namespaces/equiv/horizontalpodautoscalers';
    await until(async () => {
      const before = received.get('/equiv')?.length ?? 0;
      await api('POST', `${base}?dryRun=All`, hpa('probe'));
      return (received.get('/equiv')?.length ?? 0) > before;
    });
    const r = await api('POST', base, hpa('h'));
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json['apiVersion']).toBe('autoscaling/v2');
    expect((r.json['metadata'] as Json)['labels']).toEqual({ equivalent: 'yes' });
    const request = received.get('/equiv')?.at(-1)?.review.request as Json;
    expect(request['kind']).toEqual({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    expect(request['resource']).toEqual({
      group: 'autoscaling',
      version: 'v1',
      resource: 'horizontalpodautoscalers',
    });
    expect(request['requestKind']).toEqual({
      group: 'autoscaling',
      version: 'v2',
      kind: 'HorizontalPodAutoscaler',
    });
    expect((request['object'] as Json)['apiVersion']).toBe('autoscaling/v1');
    expect(received.get('/exact')).toBeUndefined();
  });

  it('reaches a webhook by service through its EndpointSlice, with the service’s TLS name', async () => {
    await namespace('svc-ns');
    const port = Number(new URL(hook.url).port);
    const svc = await api('POST', '/api/v1/namespaces/svc-ns/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hooks' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
    });
    expect(svc.status, JSON.stringify(svc.json)).toBe(201);
    const slice = await api('POST', '/apis/discovery.k8s.io/v1/namespaces/svc-ns/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hooks-1', labels: { 'kubernetes.io/service-name': 'hooks' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    });
    expect(slice.status, JSON.stringify(slice.json)).toBe(201);
    answers.set('/by-service', patchOf([{ op: 'add', path: '/data/via', value: 'service' }]));
    await configure('mutating', 'm-svc', 'svc-ns', [
      { name: 'svc.capstan.test', service: { namespace: 'svc-ns', name: 'hooks', path: '/by-service' } },
    ]);
    await inEffect('svc-ns', '/by-service');
    const r = await createConfigMap('svc-ns', 'b');
    expect(r.status).toBe(201);
    expect(r.json['data']).toEqual({ k: 'v', via: 'service' });
    const call = received.get('/by-service')?.at(-1);
    expect(call?.servername).toBe('hooks.svc-ns.svc');
    expect(call?.host).toBe('hooks.svc-ns.svc');
    expect(call?.query).toBe('?timeout=10s');
    // A service without endpoints: the call fails, naming the webhook.
    await configure('validating', 'v-svc-none', 'svc-ns', [
      { name: 'none.capstan.test', service: { namespace: 'svc-ns', name: 'missing', port: 443 } },
    ]);
    await until(async () => (await createConfigMap('svc-ns', 'c', {}, '?dryRun=All')).status === 500);
    const failed = await createConfigMap('svc-ns', 'c');
    const cause =
      'failed calling webhook "none.capstan.test": failed to call webhook: ' +
      'Post "https://missing.svc-ns.svc:443/?timeout=10s": service "missing" not found';
    expect(failed.json['message']).toBe(`Internal error occurred: ${cause}`);
    // kube's internal errors repeat the error as their one cause (kube-apiserver v1.33.13).
    expect(failed.json['details']).toEqual({ causes: [{ message: cause }] });
  });

  it('reinvokes an IfNeeded webhook once when a later webhook changed the object', async () => {
    await namespace('reinv');
    answers.set('/first', (review, _req, res) => {
      const labels = ((review.request.object?.['metadata'] as Json)['labels'] ?? {}) as Json;
      const seen = Object.keys(labels).sort().join('+');
      const ops = [{ op: 'add', path: '/metadata/annotations', value: { 'first-saw': seen || 'none' } }];
      sendJson(res, 200, {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, ...patchOf(ops) },
      });
    });
    // The object has no labels (an empty map is not kept): the patch adds the map.
    answers.set('/second', patchOf([{ op: 'add', path: '/metadata/labels', value: { second: 'x' } }]));
    await configure('mutating', 'reinv-a', 'reinv', [
      { name: 'first.capstan.test', path: '/first', reinvocationPolicy: 'IfNeeded' },
    ]);
    await configure('mutating', 'reinv-b', 'reinv', [{ name: 'second.capstan.test', path: '/second' }]);
    await inEffect('reinv', '/second');
    const before = received.get('/first')?.length ?? 0;
    const r = await createConfigMap('reinv', 'obj');
    expect(r.status).toBe(201);
    expect((received.get('/first')?.length ?? 0) - before).toBe(2);
    const meta = r.json['metadata'] as Json;
    expect(meta['labels']).toEqual({ second: 'x' });
    expect(meta['annotations']).toEqual({ 'first-saw': 'second' });
  });

  it('speaks AdmissionReview v1beta1 when that is the first version a webhook accepts', async () => {
    await namespace('beta');
    answers.set('/beta', (review, _req, res) => {
      // v1beta1 answers are taken without uid and kind checks; a patch needs no patchType.
      sendJson(res, 200, {
        response: {
          allowed: true,
          patch: b64(JSON.stringify([{ op: 'add', path: '/data/beta', value: review.apiVersion }])),
        },
      });
    });
    await configure('mutating', 'beta', 'beta', [
      { name: 'beta.capstan.test', path: '/beta', versions: ['v1beta2', 'v1beta1', 'v1'] },
    ]);
    await inEffect('beta', '/beta');
    const r = await createConfigMap('beta', 'x');
    expect(r.status).toBe(201);
    expect(r.json['data']).toEqual({ k: 'v', beta: 'admission.k8s.io/v1beta1' });
  });

  it('applies objectSelector to the object’s labels and namespaceSelector to the namespace’s', async () => {
    await namespace('sel');
    answers.set('/sel', patchOf([{ op: 'add', path: '/data/picked', value: 'yes' }]));
    await configure('mutating', 'sel', 'sel', [
      { name: 'sel.capstan.test', path: '/sel', objectSelector: { matchLabels: { pick: 'me' } } },
    ]);
    await inEffect('sel', '/sel', { pick: 'me' });
    expect((await createConfigMap('sel', 'no')).json['data']).toEqual({ k: 'v' });
    expect((await createConfigMap('sel', 'yes', { pick: 'me' })).json['data']).toEqual({
      k: 'v',
      picked: 'yes',
    });
    // Another namespace without the selected label is not sent to the webhook.
    const r = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'sel-other' },
    });
    expect(r.status).toBe(201);
    expect((await createConfigMap('sel-other', 'yes', { pick: 'me' })).json['data']).toEqual({ k: 'v' });
  });
});

describe('validating webhooks', () => {
  it('refuses with the webhook’s message and code, stores nothing, and are called in parallel', async () => {
    await namespace('deny');
    answers.set('/deny', {
      allowed: false,
      status: { code: 403, message: 'no thanks', reason: 'Forbidden' },
      warnings: ['refused on purpose'],
    });
    answers.set('/deny-bare', { allowed: false });
    const slow = (review: Review, _req: IncomingMessage, res: ServerResponse): void => {
      setTimeout(() => {
        sendJson(res, 200, {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true },
        });
      }, 800);
    };
    answers.set('/slow-a', slow);
    answers.set('/slow-b', slow);
    await configure('validating', 'deny', 'deny', [
      { name: 'deny.capstan.test', path: '/deny', objectSelector: { matchLabels: { deny: 'code' } } },
      { name: 'bare.capstan.test', path: '/deny-bare', objectSelector: { matchLabels: { deny: 'bare' } } },
      { name: 'slow-a.capstan.test', path: '/slow-a', objectSelector: { matchLabels: { slow: 'yes' } } },
      { name: 'slow-b.capstan.test', path: '/slow-b', objectSelector: { matchLabels: { slow: 'yes' } } },
    ]);
    await inEffect('deny', '/deny', { deny: 'code' });
    const r = await createConfigMap('deny', 'x', { deny: 'code' });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'admission webhook "deny.capstan.test" denied the request: no thanks',
    });
    expect(r.headers['warning']).toContain('299 - "refused on purpose"');
    expect((await api('GET', '/api/v1/namespaces/deny/configmaps/x')).status).toBe(404);
    const bare = await createConfigMap('deny', 'y', { deny: 'bare' });
    expect(bare.status).toBe(400);
    expect(bare.json['message']).toBe(
      'admission webhook "bare.capstan.test" denied the request without explanation',
    );
    const started = Date.now();
    expect((await createConfigMap('deny', 'z', { slow: 'yes' })).status).toBe(201);
    // Called one after the other they would take 1.6 s.
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('shows the denial through kubectl 1.33', async () => {
    const r = await runKubectl(
      '1.33',
      ['create', 'configmap', 'kc', '-n', 'deny', '--dry-run=none'],
      server.kubeconfigPath,
    );
    // No label: the deny webhooks do not select it.
    expect(r.code).toBe(0);
    const l = await runKubectl(
      '1.33',
      ['label', 'configmap', 'kc', '-n', 'deny', 'deny=code'],
      server.kubeconfigPath,
    );
    expect(l.code).toBe(1);
    expect(l.stderr).toContain('admission webhook "deny.capstan.test" denied the request: no thanks');
  });
});

describe('failures', () => {
  it('follows failurePolicy on a dead webhook: Ignore admits, Fail refuses naming the webhook', async () => {
    await namespace('dead');
    await configure('validating', 'dead', 'dead', [
      {
        name: 'ignore.capstan.test',
        url: `https://127.0.0.1:${deadPort}/`,
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { policy: 'ignore' } },
      },
      {
        name: 'fail.capstan.test',
        url: `https://127.0.0.1:${deadPort}/`,
        failurePolicy: 'Fail',
        objectSelector: { matchLabels: { policy: 'fail' } },
      },
    ]);
    await until(
      async () => (await createConfigMap('dead', 'f', { policy: 'fail' }, '?dryRun=All')).status === 500,
    );
    expect((await createConfigMap('dead', 'i', { policy: 'ignore' })).status).toBe(201);
    const r = await createConfigMap('dead', 'f', { policy: 'fail' });
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({
      reason: 'InternalError',
      message:
        'Internal error occurred: failed calling webhook "fail.capstan.test": failed to call webhook: ' +
        `Post "https://127.0.0.1:${deadPort}/?timeout=10s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`,
    });
  });

  it('times out after timeoutSeconds', async () => {
    await namespace('slow');
    answers.set('/hang', () => undefined);
    await configure('validating', 'slow', 'slow', [
      { name: 'hang.capstan.test', path: '/hang', timeoutSeconds: 1 },
    ]);
    await inEffect('slow', '/hang');
    const timed = async (name: string) => {
      const started = performance.now();
      const r = await createConfigMap('slow', name);
      return { r, ms: performance.now() - started };
    };
    // A stall of the whole machine (a paused VM) can stretch one measurement; a timeout that is
    // not honoured (the default is 10 s) stretches every one, so a slow first try gets one more.
    let { r, ms } = await timed('x');
    if (ms >= 4000) ({ r, ms } = await timed('y'));
    expect(ms).toBeLessThan(4000);
    expect(r.status).toBe(500);
    expect(r.json['message']).toBe(
      'Internal error occurred: failed calling webhook "hang.capstan.test": failed to call webhook: ' +
        `Post "${hook.url}/hang?timeout=1s": context deadline exceeded`,
    );
  });

  it('refuses bad answers per failurePolicy with kube’s messages', async () => {
    await namespace('bad');
    answers.set('/wrong-uid', (review, _req, res) =>
      sendJson(res, 200, {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'wrong', allowed: true },
      }),
    );
    answers.set('/bad-patch', { allowed: true, patchType: 'JSONPatch', patch: b64('{"op":"add"}') });
    answers.set('/vpatch', patchOf([{ op: 'add', path: '/data/x', value: 'y' }]));
    answers.set('/boom', (_review, _req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    });
    await configure('mutating', 'bad-m', 'bad', [
      { name: 'uid.capstan.test', path: '/wrong-uid', objectSelector: { matchLabels: { bad: 'uid' } } },
      { name: 'patch.capstan.test', path: '/bad-patch', objectSelector: { matchLabels: { bad: 'patch' } } },
      { name: 'status.capstan.test', path: '/boom', objectSelector: { matchLabels: { bad: 'status' } } },
      {
        name: 'tls.capstan.test',
        path: '/',
        ca: otherCaPem,
        objectSelector: { matchLabels: { bad: 'tls' } },
      },
    ]);
    await configure('validating', 'bad-v', 'bad', [
      {
        name: 'pem.capstan.test',
        path: '/',
        ca: 'not a PEM',
        objectSelector: { matchLabels: { bad: 'pem' } },
      },
      { name: 'vpatch.capstan.test', path: '/vpatch', objectSelector: { matchLabels: { bad: 'vpatch' } } },
    ]);
    await inEffect('bad', '/vpatch', { bad: 'vpatch' });
    const prefix = 'Internal error occurred: failed calling webhook ';
    const uid = await createConfigMap('bad', 'a', { bad: 'uid' });
    expect(uid.status).toBe(500);
    expect(uid.json['message']).toMatch(
      /^Internal error occurred: failed calling webhook "uid.capstan.test": received invalid webhook response: expected response.uid="[0-9a-f-]{36}", got "wrong"$/,
    );
    const patch = await createConfigMap('bad', 'b', { bad: 'patch' });
    expect(patch.json['message']).toContain(
      `${prefix}"patch.capstan.test": received undecodable patch in webhook response: `,
    );
    const status = await createConfigMap('bad', 'c', { bad: 'status' });
    expect(status.json['message']).toBe(
      `${prefix}"status.capstan.test": failed to call webhook: an error on the server ("boom") has prevented the request from succeeding`,
    );
    const tlsFail = await createConfigMap('bad', 'd', { bad: 'tls' });
    expect(tlsFail.json['message']).toBe(
      `${prefix}"tls.capstan.test": failed to call webhook: Post "${hook.url}/?timeout=10s": ` +
        'tls: failed to verify certificate: x509: certificate signed by unknown authority',
    );
    const vpatch = await createConfigMap('bad', 'e', { bad: 'vpatch' });
    expect(vpatch.json['message']).toBe(
      `${prefix}"vpatch.capstan.test": received invalid webhook response: validating webhook may not return response.patch`,
    );
    const pem = await createConfigMap('bad', 'f', { bad: 'pem' });
    expect(pem.json['message']).toBe(
      `${prefix}"pem.capstan.test": could not get REST client: unable to load root certificates: unable to parse bytes as PEM block`,
    );
    for (const n of ['a', 'b', 'c', 'd', 'e', 'f'])
      expect((await api('GET', `/api/v1/namespaces/bad/configmaps/${n}`)).status).toBe(404);
  });

  it('refuses a dry run for a webhook with side effects, and sends dryRun to one without', async () => {
    await namespace('dry');
    await configure('validating', 'dry-none', 'dry', [
      { name: 'none.capstan.test', path: '/dry-none', sideEffects: 'NoneOnDryRun' },
    ]);
    await inEffect('dry', '/dry-none');
    expect(received.get('/dry-none')?.at(-1)?.review.request['dryRun']).toBe(true);
    // v1 validation refuses sideEffects Some; configurations from before v1 may have it.
    const legacy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'dry-some', uid: 'f0e1d2c3-0000-4000-8000-000000000001', generation: 1 },
      webhooks: [
        { ...webhook('dry', { name: 'some.capstan.test', path: '/dry-some' }, false), sideEffects: 'Some' },
      ],
    };
    await server.store.create(
      '/validatingwebhookconfigurations/dry-some',
      new TextEncoder().encode(JSON.stringify(legacy)),
    );
    await until(async () => (await createConfigMap('dry', 'x', {}, '?dryRun=All')).status === 400);
    const r = await createConfigMap('dry', 'x', {}, '?dryRun=All');
    expect(r.json).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'admission webhook "some.capstan.test" does not support dry run',
    });
    // Not a dry run: the webhook is called.
    expect((await createConfigMap('dry', 'x')).status).toBe(201);
    expect(received.get('/dry-some')?.length).toBe(1);
  });

  it('evaluates matchConditions with CEL: false skips the webhook, an error follows failurePolicy', async () => {
    await namespace('cel');
    answers.set('/cel-match', { allowed: false, status: { message: 'matched', code: 403 } });
    await configure('validating', 'cel', 'cel', [
      {
        name: 'match.capstan.test',
        path: '/cel-match',
        matchConditions: [
          {
            name: 'labelled',
            expression: "has(object.metadata.labels) && 'check' in object.metadata.labels",
          },
          { name: 'create', expression: "request.operation == 'CREATE' && oldObject == null" },
        ],
        objectSelector: { matchLabels: { p: 'match' } },
      },
      {
        name: 'fail.capstan.test',
        path: '/cel-fail',
        matchConditions: [{ name: 'broken', expression: 'object.data.nope == 1' }],
        objectSelector: { matchLabels: { p: 'fail' } },
      },
      {
        name: 'ignore.capstan.test',
        path: '/cel-ignore',
        failurePolicy: 'Ignore',
        matchConditions: [{ name: 'broken', expression: 'object.data.nope == 1' }],
        objectSelector: { matchLabels: { p: 'ignore' } },
      },
    ]);
    await until(async () => (await createConfigMap('cel', 'f', { p: 'fail' }, '?dryRun=All')).status === 403);
    const r = await createConfigMap('cel', 'f', { p: 'fail' });
    expect(r.json['message']).toBe(
      `configmaps "f" is forbidden: matchCondition 'broken' resulted in error: no such key: nope`,
    );
    expect((await createConfigMap('cel', 'i', { p: 'ignore' })).status).toBe(201);
    expect(received.get('/cel-ignore')).toBeUndefined();
    expect(received.get('/cel-fail')).toBeUndefined();
    // A false condition: the webhook is not called and the request goes through.
    expect((await createConfigMap('cel', 'm1', { p: 'match' })).status).toBe(201);
    expect(received.get('/cel-match')).toBeUndefined();
    // Every condition true: the webhook is called (and denies).
    const denied = await createConfigMap('cel', 'm2', { p: 'match', check: 'yes' });
    expect(denied.status).toBe(403);
    expect(denied.json['message']).toBe('admission webhook "match.capstan.test" denied the request: matched');
    expect(received.get('/cel-match')).toHaveLength(1);
  });
});

describe('configuration changes', () => {
  it('take effect within a second: create, change and delete', async () => {
    await namespace('live');
    answers.set('/live-allow', allow());
    answers.set('/live-deny', { allowed: false, status: { message: 'changed', code: 422 } });
    await configure('validating', 'live', 'live', [{ name: 'live.capstan.test', path: '/live-allow' }]);
    const created = await until(async () => {
      const before = received.get('/live-allow')?.length ?? 0;
      await createConfigMap('live', 'p', {}, '?dryRun=All');
      return (received.get('/live-allow')?.length ?? 0) > before;
    });
    expect(created).toBeLessThan(1000);
    const current = await api('GET', `${VALIDATING}/live`);
    const hooks = current.json['webhooks'] as Json[];
    const changed = {
      ...current.json,
      webhooks: [{ ...hooks[0], clientConfig: { url: `${hook.url}/live-deny`, caBundle: b64(caPem) } }],
    };
    expect((await api('PUT', `${VALIDATING}/live`, changed)).status).toBe(200);
    const took = await until(
      async () => (await createConfigMap('live', 'p', {}, '?dryRun=All')).status === 422,
    );
    expect(took).toBeLessThan(1000);
    expect((await api('DELETE', `${VALIDATING}/live`)).status).toBe(200);
    const gone = await until(
      async () => (await createConfigMap('live', 'p', {}, '?dryRun=All')).status === 201,
    );
    expect(gone).toBeLessThan(1000);
  });

  it('never sends the webhook configuration kinds to webhooks', async () => {
    await namespace('exempt');
    await configure('validating', 'exempt', 'exempt', [
      {
        name: 'all.capstan.test',
        path: '/exempt',
        apiGroups: ['*'],
        resources: ['*'],
        namespaceSelector: {},
      },
    ]);
    answers.set('/exempt', { allowed: false, status: { message: 'nothing passes' } });
    await until(async () => (await createConfigMap('exempt', 'x', {}, '?dryRun=All')).status === 400);
    // Configurations can still be written, its own included, and no webhook sees them.
    await configure('mutating', 'exempt-other', 'exempt', [{ name: 'other.capstan.test', path: '/other' }]);
    expect((await api('DELETE', `${MUTATING}/exempt-other`)).status).toBe(200);
    expect((await api('DELETE', `${VALIDATING}/exempt`)).status).toBe(200);
    const kinds = (received.get('/exempt') ?? []).map((r) => (r.review.request['kind'] as Json)['kind']);
    expect(kinds).toContain('ConfigMap');
    expect(kinds.filter((k) => String(k).endsWith('WebhookConfiguration'))).toEqual([]);
    await until(async () => (await createConfigMap('exempt', 'x', {}, '?dryRun=All')).status === 201);
  });
});
