/**
 * Which objects make up each quota resource (kube's quota registry): the legacy names and
 * compute resources map to core kinds the controller watches; `count/<plural>[.<group>]` may name
 * any namespaced resource, resolved through discovery.
 */
import {
  CONFIG_MAPS,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  REPLICATION_CONTROLLERS,
  RESOURCE_QUOTAS,
  SECRETS,
  SERVICES,
  type ResourceRef,
} from '../../client/index.js';

/** The core kinds the controller keeps informers on (their changes replenish quotas at once). */
export const WATCHED: readonly ResourceRef[] = [
  PODS,
  SERVICES,
  PERSISTENT_VOLUME_CLAIMS,
  CONFIG_MAPS,
  SECRETS,
  REPLICATION_CONTROLLERS,
  RESOURCE_QUOTAS,
];

const LEGACY: Readonly<Record<string, ResourceRef>> = {
  pods: PODS,
  services: SERVICES,
  'services.loadbalancers': SERVICES,
  'services.nodeports': SERVICES,
  persistentvolumeclaims: PERSISTENT_VOLUME_CLAIMS,
  'requests.storage': PERSISTENT_VOLUME_CLAIMS,
  configmaps: CONFIG_MAPS,
  secrets: SECRETS,
  replicationcontrollers: REPLICATION_CONTROLLERS,
  resourcequotas: RESOURCE_QUOTAS,
};

/** What a quota resource counts: a core kind, a `count/` resource to resolve, or nothing. */
export type QuotaTarget =
  { readonly ref: ResourceRef } | { readonly group: string; readonly resource: string } | undefined;

/** The objects `resource` counts. */
export function targetOf(resource: string): QuotaTarget {
  const legacy = LEGACY[resource];
  if (legacy !== undefined) return { ref: legacy };
  if (resource.startsWith('count/')) {
    const rest = resource.slice('count/'.length);
    const dot = rest.indexOf('.');
    const plural = dot < 0 ? rest : rest.slice(0, dot);
    const group = dot < 0 ? '' : rest.slice(dot + 1);
    const core = WATCHED.find((r) => r.group === group && r.resource === plural);
    return core === undefined ? { group, resource: plural } : { ref: core };
  }
  if (resource.includes('.storageclass.storage.k8s.io/')) return { ref: PERSISTENT_VOLUME_CLAIMS };
  if (
    resource.startsWith('requests.') ||
    resource.startsWith('limits.') ||
    resource === 'cpu' ||
    resource === 'memory' ||
    resource === 'ephemeral-storage'
  ) {
    return { ref: PODS };
  }
  return undefined;
}
