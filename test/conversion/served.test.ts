/**
 * Converted pairs through a real server: objects written through one version are stored in kube's
 * storage version and served in the other, by raw HTTPS and by stock kubectl 1.27 and 1.33
 * (`get events` vs `get events.v1.events.k8s.io`, `get horizontalpodautoscalers.v1.autoscaling`
 * vs `.v2.autoscaling`, on the same objects). kubectl 1.33 resolves the short `hpa.v1.autoscaling`
 * to the preferred version, so the full names are used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/codec/index.js';
import {
  adminFetch,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
}

const HPA_V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const HPA_V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  const made = [
    await call('POST', HPA_V1, {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'from-v1' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
        minReplicas: 1,
        maxReplicas: 4,
        targetCPUUtilizationPercentage: 60,
      },
    }),
    await call('POST', HPA_V2, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'from-v2' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'api', apiVersion: 'apps/v1' },
        minReplicas: 2,
        maxReplicas: 8,
        metrics: [
          {
            type: 'Pods',
            pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
          },
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
          },
        ],
        behavior: {
          scaleDown: {
            stabilizationWindowSeconds: 120,
            selectPolicy: 'Max',
            policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }],
          },
        },
      },
    }),
    await call('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'ev-new' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'test-controller',
      reportingInstance: 'test-instance',
      action: 'Testing',
      reason: 'Tested',
      type: 'Normal',
      note: 'made through events.k8s.io',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default', apiVersion: 'v1' },
    }),
    await call('POST', '/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'ev-core' },
      involvedObject: { kind: 'Pod', name: 'q', namespace: 'default', apiVersion: 'v1' },
      reason: 'Old',
      message: 'made through core',
      source: { component: 'kubelet' },
      type: 'Warning',
      count: 3,
    }),
  ];
  for (const m of made) expect(m.status, JSON.stringify(m.json)).toBe(201);
});
afterAll(() => server?.close());

describe('HorizontalPodAutoscaler autoscaling/v1 ↔ v2', () => {
  it('stores both in autoscaling/v2, as kube-apiserver', async () => {
    for (const name of ['from-v1', 'from-v2']) {
      const stored = await server.store.get(`/horizontalpodautoscalers/default/${name}`);
      const envelope = decodeEnvelope(stored.kv?.value ?? new Uint8Array());
      expect(envelope.apiVersion).toBe('autoscaling/v2');
      expect(envelope.kind).toBe('HorizontalPodAutoscaler');
    }
  });

  it('serves a v1-made object in v2 with its cpu target as a metric', async () => {
    const { status, json } = await call('GET', `${HPA_V2}/from-v1`);
    expect(status).toBe(200);
    expect(json['apiVersion']).toBe('autoscaling/v2');
    expect((json['spec'] as Record<string, unknown>)['metrics']).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
      },
    ]);
    expect((json['metadata'] as Record<string, unknown>)['annotations']).toBeUndefined();
  });

  it('serves a v2-made object in v1 with the v2-only fields in annotations, and back unchanged after a v1 update', async () => {
    const v1 = await call('GET', `${HPA_V1}/from-v2`);
    expect(v1.json['apiVersion']).toBe('autoscaling/v1');
    const spec = v1.json['spec'] as Record<string, unknown>;
    expect(spec['targetCPUUtilizationPercentage']).toBe(70);
    const annotations = (v1.json['metadata'] as Record<string, Record<string, string>>)['annotations'] ?? {};
    expect(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics'] ?? '[]')).toEqual([
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ]);
    expect(annotations['autoscaling.alpha.kubernetes.io/behavior']).toContain(
      '"StabilizationWindowSeconds":120',
    );

    const before = await call('GET', `${HPA_V2}/from-v2`);
    // A v1 client writes back what it read, with one change of its own.
    const put = await call('PUT', `${HPA_V1}/from-v2`, { ...v1.json, spec: { ...spec, maxReplicas: 9 } });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    const after = await call('GET', `${HPA_V2}/from-v2`);
    const beforeSpec = before.json['spec'] as Record<string, unknown>;
    expect(after.json['spec']).toEqual({ ...beforeSpec, maxReplicas: 9 });
    expect((after.json['metadata'] as Record<string, unknown>)['annotations']).toBeUndefined();
  });

  it('lists one collection in either version', async () => {
    const v1 = await call('GET', HPA_V1);
    const v2 = await call('GET', HPA_V2);
    const names = (l: Record<string, unknown>): string[] =>
      (l['items'] as { apiVersion: string; metadata: { name: string } }[]).map((i) => i.metadata.name).sort();
    expect(names(v1.json)).toEqual(['from-v1', 'from-v2']);
    expect(names(v2.json)).toEqual(['from-v1', 'from-v2']);
    expect(
      (v1.json['items'] as { spec: Record<string, unknown> }[]).every((i) => !('metrics' in i.spec)),
    ).toBe(true);
  });
});

const VERSIONS: readonly KubectlVersion[] = ['1.27', '1.33'];

describe.each(VERSIONS)('kubectl %s on the same objects in both versions', (version) => {
  it.runIf(kubectlPath(version) !== undefined || process.env['CI'] === 'true')(
    'get events vs get events.v1.events.k8s.io',
    async () => {
      const core = await runKubectl(
        version,
        ['get', 'events', '-n', 'default', '-o', 'json'],
        server.kubeconfigPath,
      );
      const modern = await runKubectl(
        version,
        ['get', 'events.v1.events.k8s.io', '-n', 'default', '-o', 'json'],
        server.kubeconfigPath,
      );
      expect(core.code, core.stderr).toBe(0);
      expect(modern.code, modern.stderr).toBe(0);
      type Item = Record<string, unknown> & {
        metadata: { name: string; uid: string; resourceVersion: string };
      };
      const coreItems = (JSON.parse(core.stdout) as { items: Item[] }).items.filter((i) =>
        i.metadata.name.startsWith('ev-'),
      );
      const modernItems = (JSON.parse(modern.stdout) as { items: Item[] }).items.filter((i) =>
        i.metadata.name.startsWith('ev-'),
      );
      expect(coreItems.map((i) => i.metadata.name).sort()).toEqual(['ev-core', 'ev-new']);
      expect(modernItems.map((i) => i.metadata.name).sort()).toEqual(['ev-core', 'ev-new']);
      for (const c of coreItems) {
        const m = modernItems.find((i) => i.metadata.name === c.metadata.name);
        expect(c['apiVersion']).toBe('v1');
        expect(m?.['apiVersion']).toBe('events.k8s.io/v1');
        expect(m?.metadata.uid).toBe(c.metadata.uid);
        expect(m?.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
        expect(m?.['note']).toBe(c['message']);
        expect(m?.['regarding']).toEqual(c['involvedObject']);
        expect(m?.['reason']).toBe(c['reason']);
        expect(m?.['deprecatedCount']).toBe(c['count']);
      }
      // The default table of both.
      const table = await runKubectl(
        version,
        ['get', 'events.v1.events.k8s.io', '-n', 'default'],
        server.kubeconfigPath,
      );
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain('made through core');
      expect(table.stdout).toContain('made through events.k8s.io');
    },
  );

  it.runIf(kubectlPath(version) !== undefined || process.env['CI'] === 'true')(
    'get hpa.v1.autoscaling vs hpa.v2.autoscaling',
    async () => {
      const v1 = await runKubectl(
        version,
        ['get', 'horizontalpodautoscalers.v1.autoscaling', '-n', 'default', '-o', 'json'],
        server.kubeconfigPath,
      );
      const v2 = await runKubectl(
        version,
        ['get', 'horizontalpodautoscalers.v2.autoscaling', '-n', 'default', '-o', 'json'],
        server.kubeconfigPath,
      );
      expect(v1.code, v1.stderr).toBe(0);
      expect(v2.code, v2.stderr).toBe(0);
      type Hpa = {
        apiVersion: string;
        metadata: { name: string; uid: string };
        spec: Record<string, unknown>;
      };
      const a = (JSON.parse(v1.stdout) as { items: Hpa[] }).items;
      const b = (JSON.parse(v2.stdout) as { items: Hpa[] }).items;
      expect(a.map((i) => i.apiVersion)).toEqual(['autoscaling/v1', 'autoscaling/v1']);
      expect(b.map((i) => i.apiVersion)).toEqual(['autoscaling/v2', 'autoscaling/v2']);
      expect(a.map((i) => i.metadata.uid)).toEqual(b.map((i) => i.metadata.uid));
      const fromV1 = b.find((i) => i.metadata.name === 'from-v1');
      expect(fromV1?.spec['metrics']).toHaveLength(1);
      const table = await runKubectl(
        version,
        ['get', 'horizontalpodautoscalers.v1.autoscaling', '-n', 'default'],
        server.kubeconfigPath,
      );
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/from-v1\s+Deployment\/web/);
    },
  );
});

describe('kubectl 1.27 autoscale (it writes autoscaling/v1)', () => {
  it.runIf(kubectlPath('1.27') !== undefined || process.env['CI'] === 'true')(
    'creates an HPA that v2 serves with its cpu target',
    async () => {
      const deploy = await call('POST', '/apis/apps/v1/namespaces/default/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'scaled' },
        spec: {
          selector: { matchLabels: { app: 'scaled' } },
          template: {
            metadata: { labels: { app: 'scaled' } },
            spec: { containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      });
      expect(deploy.status).toBe(201);
      const r = await runKubectl(
        '1.27',
        [
          'autoscale',
          'deployment',
          'scaled',
          '-n',
          'default',
          '--min=2',
          '--max=5',
          '--cpu-percent=55',
          '-v=6',
        ],
        server.kubeconfigPath,
      );
      expect(r.code, r.stderr).toBe(0);
      const { json } = await call('GET', `${HPA_V2}/scaled`);
      expect((json['spec'] as Record<string, unknown>)['metrics']).toEqual([
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 55 } },
        },
      ]);
      const v1 = await call('GET', `${HPA_V1}/scaled`);
      expect((v1.json['spec'] as Record<string, unknown>)['targetCPUUtilizationPercentage']).toBe(55);
      // kubectl 1.27 wrote through autoscaling/v1.
      expect(r.stderr).toMatch(
        /POST https:\/\/\S+\/apis\/autoscaling\/v1\/namespaces\/default\/horizontalpodautoscalers\S* 201/,
      );
    },
  );
});
