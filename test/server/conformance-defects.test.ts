/**
 * Issue 17's conformance defects, each through a stock client against a whole server:
 * - a PATCH of `/status` keeps `metadata.annotations` (and labels) changes, as kube's status
 *   strategies do (Service and CronJob); kinds whose status strategy resets metadata
 *   (FlowSchema) still ignore them;
 * - a write through `/status` that names another uid is refused, as kube's update validation
 *   refuses it;
 * - a create with no `Content-Type` is read as JSON (a PATCH without one stays 415);
 * - a cluster-wide core/v1 Event list in protobuf decodes (protoc, an independent decoder) when
 *   it holds Events created through events.k8s.io/v1, which are served converted both ways;
 * - `fieldSelector=source=<reportingController>` on core/v1 finds such Events;
 * - a new PersistentVolumeClaim (and PersistentVolume) has `status.phase: Pending`.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/codec/index.js';
import { protocDecode } from '../codec/support.js';
import { adminFetchBytes } from '../support/https.js';
import { adminTls, clientFailure, runKubectl, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  server = await startTestServer();
  kc = server.kubeConfig;
});
afterAll(async () => {
  await server.close();
});

/** A raw HTTPS request with the admin certificate; the body comes back as bytes. */
async function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Buffer; contentType: string }> {
  const tls = adminTls(server.kubeconfigPath);
  const res = await adminFetchBytes(`${server.url}${path}`, tls, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, body: res.body, contentType: String(res.headers['content-type'] ?? '') };
}

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

describe('status subresource writes keep metadata changes', () => {
  it('Service: a merge PATCH of /status keeps annotations and labels (client-node)', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'status-svc' }, spec: { ports: [{ port: 80 }] } },
    });
    const patched = await core.patchNamespacedServiceStatus(
      {
        name: 'status-svc',
        namespace: 'default',
        body: {
          metadata: { annotations: { patchedstatus: 'true' }, labels: { lab: 'x' } },
          status: { loadBalancer: { ingress: [{ ip: '203.0.113.1' }] } },
        },
      },
      merge,
    );
    expect(patched.metadata?.annotations?.['patchedstatus']).toBe('true');
    expect(patched.metadata?.labels?.['lab']).toBe('x');
    expect(patched.status?.loadBalancer?.ingress?.[0]?.ip).toBe('203.0.113.1');
    const read = await core.readNamespacedService({ name: 'status-svc', namespace: 'default' });
    expect(read.metadata?.annotations?.['patchedstatus']).toBe('true');
    // The spec is still not writable through status.
    const again = await core.patchNamespacedServiceStatus(
      { name: 'status-svc', namespace: 'default', body: { spec: { ports: [{ port: 81 }] } } },
      merge,
    );
    expect(again.spec?.ports?.[0]?.port).toBe(80);
  });

  it('CronJob: kubectl patch --subresource=status keeps the annotation', async () => {
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    await batch.createNamespacedCronJob({
      namespace: 'default',
      body: {
        metadata: { name: 'status-cj' },
        spec: {
          schedule: '*/1 * * * *',
          jobTemplate: {
            spec: {
              template: {
                spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          },
        },
      },
    });
    const res = await runKubectl(
      '1.33',
      [
        'patch',
        'cronjob',
        'status-cj',
        '-n',
        'default',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"lastScheduleTime":"2024-01-01T00:00:00Z"}}',
        '-o',
        'json',
      ],
      server.kubeconfigPath,
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as k8s.V1CronJob & { status?: { lastScheduleTime?: string } };
    expect(out.metadata?.annotations?.['patchedstatus']).toBe('true');
    expect(out.status?.lastScheduleTime).toBe('2024-01-01T00:00:00Z');
  });

  it('FlowSchema: its status strategy keeps the stored metadata (kube resets it)', async () => {
    const fc = kc.makeApiClient(k8s.FlowcontrolApiserverV1Api);
    await fc.createFlowSchema({
      body: {
        metadata: { name: 'status-fs' },
        spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 5000 },
      },
    });
    const patched = await fc.patchFlowSchemaStatus(
      { name: 'status-fs', body: { metadata: { annotations: { patchedstatus: 'true' } } } },
      merge,
    );
    expect(patched.metadata?.annotations?.['patchedstatus']).toBeUndefined();
  });
});

describe('subresource writes keep the uid', () => {
  it('a status PATCH naming another uid is refused (422), as a kubelet relies on for a pod recreated under its name', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'uid-pod' },
        spec: { nodeName: 'nowhere', containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    // kubectl 1.33's merge patch of the pod's status, naming `uid`.
    const patchStatus = (uid: string | undefined, phase: string) =>
      runKubectl(
        '1.33',
        [
          'patch',
          'pod',
          'uid-pod',
          '-n',
          'default',
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ metadata: { uid }, status: { phase } }),
        ],
        server.kubeconfigPath,
      );
    const other = '00000000-0000-0000-0000-000000000000';
    const res = await patchStatus(other, 'Failed');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      `Pod "uid-pod" is invalid: metadata.uid: Invalid value: "${other}": field is immutable`,
    );
    const after = await core.readNamespacedPod({ name: 'uid-pod', namespace: 'default' });
    expect(after.status?.phase).toBe('Pending');
    // Its own uid is accepted.
    const ok = await patchStatus(pod.metadata?.uid, 'Running');
    expect(ok.code).toBe(0);
  });
});

describe('request bodies without Content-Type', () => {
  it('a create with no Content-Type is read as JSON', async () => {
    const res = await raw(
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldValidation=Strict',
      {},
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-ct' }, data: { a: '1' } }),
    );
    expect(res.status).toBe(201);
    const body = JSON.parse(res.body.toString('utf8')) as k8s.V1ConfigMap;
    expect(body.data).toEqual({ a: '1' });
    // Strict field validation applies to such a body like to any JSON body.
    const strict = await raw(
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldValidation=Strict',
      {},
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-ct2' }, bogus: 1 }),
    );
    expect(strict.status).toBe(400);
    expect(JSON.parse(strict.body.toString('utf8'))).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: expect.stringContaining('unknown field "bogus"') as unknown,
    });
  });

  it('a malformed body with no Content-Type is a 400 Status; a PATCH without one is 415', async () => {
    const bad = await raw('POST', '/api/v1/namespaces/default/configmaps', {}, '{not json');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString('utf8'))).toMatchObject({ kind: 'Status', code: 400 });
    const patch = await raw('PATCH', '/api/v1/namespaces/default/configmaps/no-ct', {}, '{"data":{"b":"2"}}');
    expect(patch.status).toBe(415);
    expect(JSON.parse(patch.body.toString('utf8'))).toMatchObject({ kind: 'Status', code: 415 });
  });
});

describe('Events shared by core/v1 and events.k8s.io/v1', () => {
  beforeAll(async () => {
    const events = kc.makeApiClient(k8s.EventsV1Api);
    await events.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'ev-new' },
        eventTime: new k8s.V1MicroTime('2024-01-01T00:00:00.000000Z'),
        reportingController: 'test-controller',
        reportingInstance: 'test-instance',
        action: 'Testing',
        reason: 'Tested',
        type: 'Normal',
        note: 'made through events.k8s.io',
        regarding: { kind: 'Pod', name: 'p', namespace: 'default', apiVersion: 'v1' },
      },
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'ev-core' },
        involvedObject: { kind: 'Pod', name: 'q', namespace: 'default', apiVersion: 'v1' },
        reason: 'Old',
        message: 'made through core',
        source: { component: 'kubelet' },
        type: 'Warning',
        count: 3,
      },
    });
  });

  it('the cluster-wide core/v1 Event list in protobuf decodes with protoc', async () => {
    const res = await raw('GET', '/api/v1/events', { accept: 'application/vnd.kubernetes.protobuf' });
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/vnd.kubernetes.protobuf');
    const envelope = decodeEnvelope(res.body);
    expect(envelope.kind).toBe('EventList');
    const text = protocDecode('k8s.io.api.core.v1.EventList', envelope.raw);
    expect(text).toContain('name: "ev-new"');
    expect(text).toContain('reportingComponent: "test-controller"');
    expect(text).toContain('message: "made through events.k8s.io"');
    expect(text).toContain('message: "made through core"');
  });

  it('fieldSelector=source=<reportingController> on core/v1 finds the Event (client-node)', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const all = await core.listEventForAllNamespaces({ fieldSelector: 'source=test-controller' });
    expect(all.items.map((e) => e.metadata?.name)).toEqual(['ev-new']);
    const ns = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'source=kubelet' });
    expect(ns.items.map((e) => e.metadata?.name)).toEqual(['ev-core']);
    const item = all.items[0];
    expect(item?.apiVersion).toBe('v1');
    expect(item?.involvedObject.name).toBe('p');
    expect(item?.message).toBe('made through events.k8s.io');
    expect(item?.reportingComponent).toBe('test-controller');
  });

  it('events.k8s.io/v1 serves core-made Events converted, and selects on its own fields', async () => {
    const events = kc.makeApiClient(k8s.EventsV1Api);
    const read = await events.readNamespacedEvent({ name: 'ev-core', namespace: 'default' });
    expect(read.apiVersion).toBe('events.k8s.io/v1');
    expect(read.regarding?.name).toBe('q');
    expect(read.note).toBe('made through core');
    expect(read.deprecatedSource?.component).toBe('kubelet');
    expect(read.deprecatedCount).toBe(3);
    const selected = await events.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'regarding.name=q',
    });
    expect(selected.items.map((e) => e.metadata?.name)).toEqual(['ev-core']);
    const byController = await events.listEventForAllNamespaces({
      fieldSelector: 'reportingController=test-controller',
    });
    expect(byController.items.map((e) => e.metadata?.name)).toEqual(['ev-new']);
    // A patch through events.k8s.io of a core-made Event works on the events.k8s.io form.
    const patched = await events.patchNamespacedEvent(
      {
        name: 'ev-core',
        namespace: 'default',
        body: {
          metadata: { labels: { patched: 'yes' } },
          series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
        },
      },
      merge,
    );
    expect(patched.series?.count).toBe(2);
    expect(patched.note).toBe('made through core');
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const back = await core.readNamespacedEvent({ name: 'ev-core', namespace: 'default' });
    expect(back.metadata?.labels).toEqual({ patched: 'yes' });
    expect(back.series?.count).toBe(2);
    expect(back.count).toBe(3);
    // Immutable fields keep kube's internal names in the 422.
    const refused = await clientFailure(
      events.patchNamespacedEvent({ name: 'ev-core', namespace: 'default', body: { note: 'x' } }, merge),
    );
    expect(refused.code).toBe(422);
    expect(refused.body['message']).toBe(
      'Event.events.k8s.io "ev-core" is invalid: message: Invalid value: "x": field is immutable',
    );
  });

  it('kubectl get events.v1.events.k8s.io prints both', async () => {
    const res = await runKubectl(
      '1.33',
      ['get', 'events.v1.events.k8s.io', '-n', 'default', '-o', 'name'],
      server.kubeconfigPath,
    );
    expect(res.code).toBe(0);
    expect(
      res.stdout
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual(['event.events.k8s.io/ev-core', 'event.events.k8s.io/ev-new']);
  });
});

describe('storage status defaults', () => {
  it('a new PersistentVolumeClaim is Pending (client-node)', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const created = await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'claim' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    expect(created.status?.phase).toBe('Pending');
    const read = await core.readNamespacedPersistentVolumeClaim({ name: 'claim', namespace: 'default' });
    expect(read.status?.phase).toBe('Pending');
  });

  it('a new PersistentVolume is Pending with its phase transition time', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const created = await core.createPersistentVolume({
      body: {
        metadata: { name: 'vol' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/tmp/vol' },
        },
      },
    });
    expect(created.status?.phase).toBe('Pending');
    expect(created.status?.lastPhaseTransitionTime).toBeInstanceOf(Date);
  });
});

describe("415s in kube-apiserver v1.33.13's words", () => {
  const objectFormats =
    'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf';

  it('a body in no object format is named by the formats an object takes; a PATCH of a built-in kind in no patch format gets the router’s bare 415', async () => {
    const cm = '/api/v1/namespaces/default/configmaps';
    await raw(
      'POST',
      cm,
      { 'content-type': 'application/json' },
      JSON.stringify({ metadata: { name: 'media' } }),
    );
    const cases: [string, string, string, string, boolean][] = [
      ['POST', cm, 'text/plain', objectFormats, false],
      ['POST', cm, 'application/merge-patch+json', objectFormats, false],
      ['PUT', `${cm}/media`, 'text/plain', objectFormats, false],
      ['PATCH', `${cm}/media`, 'text/plain', '415: Unsupported Media Type', true],
      ['PATCH', `${cm}/media`, 'application/json', '415: Unsupported Media Type', true],
      ['PATCH', `${cm}/media`, 'application/yaml', '415: Unsupported Media Type', true],
      ['PATCH', `${cm}/media`, 'application/vnd.kubernetes.protobuf', '415: Unsupported Media Type', true],
    ];
    for (const [method, path, type, message, details] of cases) {
      const res = await raw(method, path, { 'content-type': type }, '{}');
      const status = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
      expect([res.status, status['reason'], status['message']], `${method} ${type}`).toEqual([
        415,
        'UnsupportedMediaType',
        message,
      ]);
      expect(status['details'], `${method} ${type}`).toEqual(details ? {} : undefined);
    }
  });
});
