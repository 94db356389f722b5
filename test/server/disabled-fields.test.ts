/**
 * Fields of features kube-apiserver v1.33 ships turned off are dropped on write
 * (src/defaults/disabled-fields.ts), as its DropDisabledPodFields and DropDisabledTemplateFields
 * do: pod-level resources, resource claims, ClusterTrustBundle projections, image volumes and
 * container stop signals; from a pod's status (its own subresource's writes too), resource claim
 * statuses, container resource health and observed generations. Through kubectl against a real
 * server, and the "already in use" rule of an update on the functions themselves (no write can
 * store such a field to begin with).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dropDisabledPodSpecFields,
  dropDisabledPodStatusFields,
} from '../../src/defaults/disabled-fields.js';
import { runKubectl } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

/** A pod spec using every disabled feature, beside fields that stay. */
function fullSpec(): Record<string, unknown> {
  return {
    resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } },
    resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }],
    containers: [
      {
        name: 'c',
        image: 'busybox',
        resources: { requests: { cpu: '50m' }, claims: [{ name: 'gpu' }] },
        lifecycle: { stopSignal: 'SIGUSR1' },
        volumeMounts: [
          { name: 'img', mountPath: '/img' },
          { name: 'cfg', mountPath: '/cfg' },
        ],
      },
      {
        name: 'd',
        image: 'busybox',
        lifecycle: { stopSignal: 'SIGTERM', preStop: { exec: { command: ['true'] } } },
      },
    ],
    volumes: [
      { name: 'img', image: { reference: 'registry.example/data:1', pullPolicy: 'IfNotPresent' } },
      {
        name: 'cfg',
        projected: {
          sources: [
            { clusterTrustBundle: { signerName: 'example.com/signer', path: 'ca.pem' } },
            { configMap: { name: 'settings' } },
          ],
        },
      },
    ],
  };
}

type Json = Record<string, unknown>;

/** The value at `path` in `o`. */
function dig(o: unknown, ...path: (string | number)[]): unknown {
  let cur = o;
  for (const k of path) cur = (cur as Record<string | number, unknown> | undefined)?.[k];
  return cur;
}

async function create(doc: Json): Promise<Json> {
  const dir = mkdtempSync(join(tmpdir(), 'disabled-fields-'));
  const file = join(dir, 'obj.json');
  writeFileSync(file, JSON.stringify(doc));
  const res = await runKubectl('1.33', ['create', '-f', file, '-o', 'json'], server.kubeconfigPath);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Json;
}

/** The names in `list`, but the service-account token volume the admission adds to a pod. */
const named = (list: unknown): string[] =>
  (list as Json[]).map((x) => x['name'] as string).filter((n) => !n.startsWith('kube-api-access-'));

/** What stays of {@link fullSpec} (defaults aside). */
function expectDropped(spec: unknown): void {
  expect(dig(spec, 'resources')).toBeUndefined();
  expect(dig(spec, 'resourceClaims')).toBeUndefined();
  const [c, d] = dig(spec, 'containers') as Json[];
  expect(c!['resources']).toEqual({ requests: { cpu: '50m' } });
  expect(c!['lifecycle']).toBeUndefined();
  expect(named(c!['volumeMounts'])).toEqual(['cfg']);
  expect(d!['lifecycle']).toEqual({ preStop: { exec: { command: ['true'] } } });
  expect(named(dig(spec, 'volumes'))).toEqual(['cfg']);
  const cfg = (dig(spec, 'volumes') as Json[]).find((v) => v['name'] === 'cfg');
  expect(dig(cfg, 'projected', 'sources')).toEqual([{}, { configMap: { name: 'settings' } }]);
}

describe('fields of features v1.33 turns off', () => {
  it('are dropped from a pod on create, and stay dropped on update', async () => {
    const pod = await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'disabled', namespace: 'default' },
      spec: fullSpec(),
    });
    expectDropped(pod['spec']);
    // The QoS class ignores the dropped pod-level resources.
    expect(dig(pod, 'status', 'qosClass')).toBe('Burstable');

    const res = await runKubectl(
      '1.33',
      [
        'patch',
        'pod',
        'disabled',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/spec/containers/1/lifecycle/stopSignal', value: 'SIGINT' }]),
        '-o',
        'json',
      ],
      server.kubeconfigPath,
    );
    expect(res.code).toBe(0);
    const patched = JSON.parse(res.stdout) as Json;
    expect(dig(patched, 'spec', 'containers', 1, 'lifecycle')).toEqual({
      preStop: { exec: { command: ['true'] } },
    });
  });

  it('are dropped from the pod templates of workloads', async () => {
    const template = { metadata: { labels: { app: 'dis' } }, spec: fullSpec() };
    const deployment = await create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dis', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'dis' } }, template },
    });
    expectDropped(dig(deployment, 'spec', 'template', 'spec'));
    const cron = await create({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'dis', namespace: 'default' },
      spec: {
        schedule: '0 0 * * *',
        jobTemplate: { spec: { template: { spec: { ...fullSpec(), restartPolicy: 'Never' } } } },
      },
    });
    expectDropped(dig(cron, 'spec', 'jobTemplate', 'spec', 'template', 'spec'));
  });

  it('are dropped from a pod status write', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'status-fields', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const status = {
      observedGeneration: 1,
      conditions: [{ type: 'PodScheduled', status: 'True', observedGeneration: 1 }],
      resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }],
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 0,
          image: 'busybox',
          imageID: '',
          state: { waiting: { reason: 'ContainerCreating' } },
          allocatedResourcesStatus: [
            { name: 'claim:gpu', resources: [{ resourceID: 'x', health: 'Healthy' }] },
          ],
        },
      ],
    };
    const res = await runKubectl(
      '1.33',
      [
        'patch',
        'pod',
        'status-fields',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
        '-o',
        'json',
      ],
      server.kubeconfigPath,
    );
    expect(res.code, res.stderr).toBe(0);
    const written = dig(JSON.parse(res.stdout), 'status') as Json;
    expect(written['observedGeneration']).toBeUndefined();
    expect(written['resourceClaimStatuses']).toBeUndefined();
    expect(dig(written, 'conditions', 0)).toEqual({ type: 'PodScheduled', status: 'True' });
    expect(dig(written, 'containerStatuses', 0, 'allocatedResourcesStatus')).toBeUndefined();
    expect(dig(written, 'containerStatuses', 0, 'state')).toEqual({
      waiting: { reason: 'ContainerCreating' },
    });
  });

  it('are kept on update where the stored object already uses them', () => {
    const spec = fullSpec();
    dropDisabledPodSpecFields(spec, fullSpec());
    expect(spec).toEqual(fullSpec());
    const fresh = fullSpec();
    dropDisabledPodSpecFields(fresh, { containers: [] });
    expect(fresh['resources']).toBeUndefined();
    expect(fresh['volumes']).toHaveLength(1);

    const status = (): Json => ({
      observedGeneration: 2,
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: 2 }],
      resourceClaimStatuses: [{ name: 'gpu' }],
    });
    const kept = status();
    dropDisabledPodStatusFields(kept, { conditions: [{ type: 'Ready', observedGeneration: 1 }] }, fullSpec());
    expect(kept).toEqual(status());
    const dropped = status();
    dropDisabledPodStatusFields(dropped, { observedGeneration: 0 }, { containers: [] });
    expect(dropped).toEqual({ conditions: [{ type: 'Ready', status: 'True' }] });
  });
});
