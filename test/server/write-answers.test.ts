/**
 * A write is answered with the object as a read of it gives it: kube-apiserver decodes the
 * answer from the bytes it stored, so Go's zero values appear (`status: {}`), empty maps go,
 * and times come back in UTC. Creates, updates, patches, dry runs and deletes that keep the
 * object all answer so. Each expected value below is kube-apiserver v1.33.13's answer to the same
 * request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

type Json = Record<string, unknown>;

let server: TestServer;
let admin: AdminTls;

async function call(method: string, path: string, body?: unknown, type = 'application/json'): Promise<Json> {
  const res = await adminJson(`${server.url}${path}`, admin, method, body, { 'content-type': type });
  expect(res.status, res.text).toBeLessThan(300);
  return res.json;
}

const metadata = (o: Json): Json => o['metadata'] as Json;

/** `answer` is what a GET of the same object gives now. */
async function expectRead(path: string, answer: Json): Promise<void> {
  expect(await call('GET', path)).toEqual(answer);
}

const ns = '/api/v1/namespaces/answers';
const deployment = {
  metadata: { name: 'd' },
  spec: {
    selector: { matchLabels: { a: 'b' } },
    template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
};

beforeAll(async () => {
  server = await startTestServer();
  admin = adminTls(server.kubeconfigPath);
  await call('POST', '/api/v1/namespaces', { metadata: { name: 'answers' } });
}, 60_000);
afterAll(async () => server?.close());

describe('a write answers the stored form', () => {
  it('a create: empty maps dropped, zero-valued structs and counts shown, times in UTC', async () => {
    const cm = await call('POST', `${ns}/configmaps`, {
      metadata: { name: 'empty', labels: {}, annotations: {} },
      data: {},
    });
    expect(Object.keys(cm).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(metadata(cm)['labels']).toBeUndefined();
    expect(metadata(cm)['annotations']).toBeUndefined();
    await expectRead(`${ns}/configmaps/empty`, cm);

    const dep = await call('POST', '/apis/apps/v1/namespaces/answers/deployments', deployment);
    expect(dep['status']).toEqual({});
    await expectRead('/apis/apps/v1/namespaces/answers/deployments/d', dep);

    const event = await call('POST', `${ns}/events`, {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'answers' },
      reason: 'R',
      message: 'm',
      firstTimestamp: '2020-01-01T05:00:00+05:00',
      lastTimestamp: '2020-01-01T05:00:00.000+05:00',
      count: 1,
      type: 'Normal',
      source: { component: 'x' },
    });
    expect([event['firstTimestamp'], event['lastTimestamp']]).toEqual([
      '2020-01-01T00:00:00Z',
      '2020-01-01T00:00:00Z',
    ]);
    expect([event['reportingComponent'], event['reportingInstance']]).toEqual(['', '']);
    await expectRead(`${ns}/events/e1`, event);

    // Stored as a core v1 Event, answered as events.k8s.io/v1 again.
    const newEvent = await call('POST', '/apis/events.k8s.io/v1/namespaces/answers/events', {
      metadata: { name: 'e2' },
      regarding: { kind: 'Pod', name: 'p', namespace: 'answers' },
      reason: 'R',
      note: 'm',
      eventTime: '2020-01-01T05:00:00.123456+05:00',
      type: 'Normal',
      action: 'A',
      reportingController: 'x/y',
      reportingInstance: 'i',
    });
    expect(newEvent['apiVersion']).toBe('events.k8s.io/v1');
    expect(newEvent['eventTime']).toBe('2020-01-01T00:00:00.123456Z');
    expect(newEvent['deprecatedSource']).toEqual({});
    await expectRead('/apis/events.k8s.io/v1/namespaces/answers/events/e2', newEvent);

    // Stored as autoscaling/v2; v1's replica counts are written even when 0.
    const hpa = await call('POST', '/apis/autoscaling/v1/namespaces/answers/horizontalpodautoscalers', {
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, maxReplicas: 3 },
    });
    expect(hpa['status']).toEqual({ currentReplicas: 0, desiredReplicas: 0 });
    expect((hpa['spec'] as Json)['minReplicas']).toBe(1);
    await expectRead('/apis/autoscaling/v1/namespaces/answers/horizontalpodautoscalers/h', hpa);
  });

  it('an update, a patch, a dry run and a delete that keeps the object answer the same way', async () => {
    await call('POST', `${ns}/configmaps`, { metadata: { name: 'u' }, data: { k: 'v' } });
    const put = await call('PUT', `${ns}/configmaps/u`, { metadata: { name: 'u', labels: {} }, data: {} });
    expect(Object.keys(metadata(put))).not.toContain('labels');
    expect(put['data']).toBeUndefined();
    await expectRead(`${ns}/configmaps/u`, put);

    const path = '/apis/apps/v1/namespaces/answers/deployments/d';
    const patched = await call(
      'PATCH',
      path,
      { metadata: { annotations: {} }, spec: { paused: true } },
      'application/merge-patch+json',
    );
    expect(metadata(patched)['annotations']).toBeUndefined();
    expect(patched['status']).toEqual({});
    await expectRead(path, patched);

    const dry = await call('POST', '/apis/apps/v1/namespaces/answers/deployments?dryRun=All', {
      ...deployment,
      metadata: { name: 'dry', labels: {} },
    });
    expect(dry['status']).toEqual({});
    expect(metadata(dry)['labels']).toBeUndefined();
    const dryPut = await call('PUT', `${ns}/configmaps/u?dryRun=All`, { metadata: { name: 'u' }, data: {} });
    expect(dryPut['data']).toBeUndefined();

    await call('POST', `${ns}/configmaps`, { metadata: { name: 'kept', finalizers: ['example.com/keep'] } });
    const deleting = await call('DELETE', `${ns}/configmaps/kept`);
    expect(metadata(deleting)['deletionTimestamp']).toBeDefined();
    await expectRead(`${ns}/configmaps/kept`, deleting);
    await call(
      'PATCH',
      `${ns}/configmaps/kept`,
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
  });

  it("a StatefulSet's volumeClaimTemplates carry apiVersion v1 and kind PersistentVolumeClaim", async () => {
    const claim = (apiVersion?: string, kind?: string): Json => ({
      ...(apiVersion === undefined ? {} : { apiVersion }),
      ...(kind === undefined ? {} : { kind }),
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const sts = (name: string, template: Json): Json => ({
      metadata: { name },
      spec: {
        serviceName: name,
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        volumeClaimTemplates: [template],
      },
    });
    // kube-apiserver v1.33.13's answer, whatever the template said (none, or v9 Foo), but for the
    // `metadata.creationTimestamp: null` kube also shows there (Capstan drops stored nulls).
    const expected = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Pending' },
    };
    const path = '/apis/apps/v1/namespaces/answers/statefulsets';
    for (const [name, template] of [
      ['plain', claim()],
      ['odd', claim('v9', 'Foo')],
    ] as const) {
      const answer = await call('POST', path, sts(name, template));
      const templates = (answer['spec'] as Json)['volumeClaimTemplates'] as Json[];
      expect(templates).toEqual([expected]);
      expect(Object.keys(templates[0] ?? {}).slice(0, 2)).toEqual(['apiVersion', 'kind']);
      await expectRead(`${path}/${name}`, answer);
    }
  });
});
