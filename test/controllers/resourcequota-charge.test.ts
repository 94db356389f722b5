/**
 * The resourcequota controller leaves admission's charges alone, as kube's does: a quota whose
 * status alone changed (the ResourceQuota admission plugin charges it before the object is
 * stored) is not recounted, so a count taken before the object reaches the cache never undoes
 * the charge; a deletion recounts at once. It used to recount on every quota status write and
 * hold a lower count back for 1 s instead. `usageDropped` is kube's replenishment filter on
 * updates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Pod, ResourceQuota, Service } from '../../src/api/types/core-v1.js';
import {
  CONFIG_MAPS,
  NAMESPACES,
  PODS,
  RESOURCE_QUOTAS,
  SERVICES,
  type ResourceClient,
} from '../../src/client/index.js';
import { usageDropped } from '../../src/controllers/resourcequota/controller.js';
import { resourceQuotaController } from '../../src/controllers/resourcequota/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'charge';
let env: InfraEnv;
let quotas: ResourceClient<ResourceQuota>;

async function used(want: string): Promise<ResourceQuota | undefined> {
  const q = await quotas.get('q', { namespace: NS });
  return q.status?.used?.['configmaps'] === want ? q : undefined;
}

beforeAll(async () => {
  // The default --resource-quota-sync-period (5 minutes): no full resync during the test.
  env = await startInfraEnv([resourceQuotaController]);
  quotas = env.client.resource<ResourceQuota>(RESOURCE_QUOTAS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
}, 60_000);
afterAll(async () => env?.close());

describe('resourcequota-controller and admission charges', () => {
  it('keeps a charge on a status write, and recounts at once when an object goes', async () => {
    const cms = env.client.resource<ConfigMap>(CONFIG_MAPS);
    await until('kube-root-ca.crt', () => cms.get('kube-root-ca.crt', { namespace: NS }));
    await quotas.create({ metadata: { name: 'q', namespace: NS }, spec: { hard: { configmaps: '10' } } });
    await until('the quota counted', () => used('1'));
    for (const n of ['a', 'b']) await cms.create({ metadata: { name: n, namespace: NS } });
    const charged = await until('admission charged two', () => used('3'));
    // A charge for an object not stored yet, as the admission plugin writes it.
    await quotas.updateStatus({ ...charged, status: { ...charged.status, used: { configmaps: '4' } } });
    await new Promise((r) => setTimeout(r, 2500));
    expect((await quotas.get('q', { namespace: NS })).status?.used).toEqual({ configmaps: '4' });

    const started = Date.now();
    await cms.delete('a', { namespace: NS });
    await until('recounted on the deletion', () => used('2'));
    // Well under the 5-minute resync: the deletion's own recount wrote it.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('replenishes on updates that lower usage only', () => {
    const pod = (phase: string): Pod => ({
      metadata: { name: 'p', namespace: NS },
      spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } } }] },
      status: { phase },
    });
    const podKind = { group: '', kind: PODS.kind, plural: PODS.resource };
    expect(usageDropped(podKind, pod('Running'), pod('Succeeded'))).toBe(true);
    expect(usageDropped(podKind, pod('Pending'), pod('Running'))).toBe(false);
    const svc = (type: string): Service => ({
      metadata: { name: 's', namespace: NS },
      spec: { type, ports: [{ port: 80 }] },
    });
    const svcKind = { group: '', kind: SERVICES.kind, plural: SERVICES.resource };
    expect(usageDropped(svcKind, svc('NodePort'), svc('ClusterIP'))).toBe(true);
    expect(usageDropped(svcKind, svc('ClusterIP'), svc('NodePort'))).toBe(false);
  });

  it('logged no errors', () => {
    expect(env.errors).toEqual([]);
  });
});
