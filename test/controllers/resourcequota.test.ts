/**
 * The resourcequota controller against a bare server (its ResourceQuota admission plugin on, as
 * by default) and a controller manager running only it: a new quota's status is counted, usage
 * comes back when objects go or pods finish, `count/` resources outside the watched kinds are
 * counted through discovery, scopes select pods, and kubectl 1.33 describes the result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Pod, ResourceQuota } from '../../src/api/types/core-v1.js';
import type { Deployment } from '../../src/api/types/apps-v1.js';
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  NAMESPACES,
  PODS,
  RESOURCE_QUOTAS,
  type ResourceClient,
} from '../../src/client/index.js';
import { resourceQuotaController } from '../../src/controllers/resourcequota/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'quota';
let env: InfraEnv;
let quotas: ResourceClient<ResourceQuota>;
let pods: ResourceClient<Pod>;

async function used(name: string, resource: string, want: string): Promise<ResourceQuota | undefined> {
  const q = await quotas.get(name, { namespace: NS });
  return q.status?.used?.[resource] === want ? q : undefined;
}

function pod(name: string, cpu: string, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name, namespace: NS },
    spec: {
      containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu }, limits: { cpu } } }],
      ...extra,
    },
  };
}

beforeAll(async () => {
  env = await startInfraEnv([resourceQuotaController], ['--resource-quota-sync-period=2s']);
  quotas = env.client.resource<ResourceQuota>(RESOURCE_QUOTAS);
  pods = env.client.resource<Pod>(PODS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
}, 60_000);
afterAll(async () => env?.close());

describe('resourcequota-controller', () => {
  it('counts a new quota, and gives usage back when objects go', async () => {
    const cms = env.client.resource<ConfigMap>(CONFIG_MAPS);
    for (const n of ['a', 'b', 'c']) await cms.create({ metadata: { name: n, namespace: NS } });
    await quotas.create({
      metadata: { name: 'objects', namespace: NS },
      spec: {
        hard: { configmaps: '10', 'count/configmaps': '10', 'count/deployments.apps': '2', secrets: '5' },
      },
    });
    // The server's root CA publisher adds kube-root-ca.crt to the namespace: count what is there.
    await until('kube-root-ca.crt', () => cms.get('kube-root-ca.crt', { namespace: NS }));
    const q = await until('objects counted', () => used('objects', 'configmaps', '4'));
    expect(q.status?.hard).toEqual(q.spec?.hard);
    expect(q.status?.used).toEqual({
      configmaps: '4',
      'count/configmaps': '4',
      'count/deployments.apps': '0',
      secrets: '0',
    });
    await cms.delete('a', { namespace: NS });
    await until('configmaps back to 3', () => used('objects', 'count/configmaps', '3'));

    // Deployments are not watched: counted through discovery (at once on the create's quota
    // charge by admission, and kept right by the resync).
    await env.client.resource<Deployment>(DEPLOYMENTS).create({
      metadata: { name: 'd', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      },
    });
    await until('deployments 1', () => used('objects', 'count/deployments.apps', '1'));
    await env.client.resource<Deployment>(DEPLOYMENTS).delete('d', { namespace: NS });
    await until(
      'deployments back to 0 at the resync',
      () => used('objects', 'count/deployments.apps', '0'),
      15_000,
    );
  });

  it('counts pod compute resources by scope and frees a finished pod’s', async () => {
    await quotas.create({
      metadata: { name: 'compute', namespace: NS },
      spec: { hard: { pods: '10', 'requests.cpu': '4', 'limits.cpu': '4' } },
    });
    await quotas.create({
      metadata: { name: 'terminating', namespace: NS },
      spec: { hard: { pods: '10' }, scopes: ['Terminating'] },
    });
    await pods.create(pod('p1', '500m'));
    const p2 = await pods.create(pod('p2', '1', { activeDeadlineSeconds: 60 }));
    const q = await until('compute counted', () => used('compute', 'requests.cpu', '1500m'));
    expect(q.status?.used).toEqual({ pods: '2', 'requests.cpu': '1500m', 'limits.cpu': '1500m' });
    await until('terminating counts one', () => used('terminating', 'pods', '1'));

    await pods.updateStatus({ ...p2, status: { phase: 'Succeeded' } });
    await until('a finished pod counts nothing', () => used('compute', 'requests.cpu', '500m'));
    await until('nor in a scope', () => used('terminating', 'pods', '0'));

    const out = await env.kubectl('describe', 'quota', 'compute', '-n', NS);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/requests\.cpu\s+500m\s+4/);
    expect(out.stdout).toMatch(/pods\s+1\s+10/);
  });

  it('logged no errors', () => {
    expect(env.errors).toEqual([]);
  });
});
