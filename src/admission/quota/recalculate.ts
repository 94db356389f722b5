/**
 * A quota's usage counted from storage (kube's quota controller `syncResourceQuota`): every
 * resource of `spec.hard`, summed over the namespace's objects the quota selects.
 */
import type { JsonObject, KubeObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';
import type { AdmissionObjects } from '../objects.js';
import { ZERO, addQuantities, resourcesOf, type Resources } from '../quantities.js';
import { quotaSelects, usageOf, type UsageKind } from './usage.js';

const POD: UsageKind = { group: '', kind: 'Pod', plural: 'pods' };
const SERVICE: UsageKind = { group: '', kind: 'Service', plural: 'services' };
const PVC: UsageKind = { group: '', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims' };

const LEGACY: Readonly<Record<string, UsageKind>> = {
  pods: POD,
  services: SERVICE,
  'services.loadbalancers': SERVICE,
  'services.nodeports': SERVICE,
  persistentvolumeclaims: PVC,
  'requests.storage': PVC,
  configmaps: { group: '', kind: 'ConfigMap', plural: 'configmaps' },
  secrets: { group: '', kind: 'Secret', plural: 'secrets' },
  replicationcontrollers: { group: '', kind: 'ReplicationController', plural: 'replicationcontrollers' },
  resourcequotas: { group: '', kind: 'ResourceQuota', plural: 'resourcequotas' },
};

/** The kind whose objects make up `resource`, or undefined (a resource nothing counts). */
export function kindOfResource(objects: AdmissionObjects, resource: string): UsageKind | undefined {
  const legacy = LEGACY[resource];
  if (legacy !== undefined) return legacy;
  if (resource.startsWith('count/')) {
    const rest = resource.slice(6);
    const dot = rest.indexOf('.');
    const plural = dot < 0 ? rest : rest.slice(0, dot);
    const group = dot < 0 ? '' : rest.slice(dot + 1);
    return objects.resolve(group, plural);
  }
  if (resource.includes('.storageclass.storage.k8s.io/')) return PVC;
  if (
    resource.startsWith('requests.') ||
    resource.startsWith('limits.') ||
    resource === 'cpu' ||
    resource === 'memory' ||
    resource === 'ephemeral-storage'
  ) {
    return POD;
  }
  return undefined;
}

/** The hard limits a quota enforces (`status.hard`, else `spec.hard`). */
export function hardOf(quota: JsonObject): Resources {
  const status = isJsonObject(quota['status']) ? quota['status'] : {};
  const spec = isJsonObject(quota['spec']) ? quota['spec'] : {};
  return isJsonObject(status['hard']) ? resourcesOf(status['hard']) : resourcesOf(spec['hard']);
}

/** The usage of `quota`'s hard resources in its namespace, counted from storage. */
export async function recalculate(objects: AdmissionObjects, quota: KubeObject): Promise<Resources> {
  const namespace = quota.metadata.namespace ?? '';
  const spec = isJsonObject(quota['spec']) ? quota['spec'] : {};
  const hard = resourcesOf(spec['hard']);
  const byKind = new Map<string, UsageKind>();
  for (const r of hard.keys()) {
    const k = kindOfResource(objects, r);
    if (k !== undefined) byKind.set(`${k.group}/${k.kind}`, k);
  }
  const used: Resources = new Map([...hard.keys()].map((r) => [r, ZERO]));
  for (const k of byKind.values()) {
    const items = await objects.listLive(k, namespace);
    for (const item of items) {
      if (!quotaSelects(quota, k, item)) continue;
      for (const [r, q] of usageOf(k, item)) {
        const cur = used.get(r);
        if (cur === undefined) continue;
        used.set(r, addQuantities(cur, q));
      }
    }
  }
  return used;
}
