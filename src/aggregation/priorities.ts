/**
 * The local APIServices kube-apiserver registers for its built-in group versions (`v1.`,
 * `v1.apps`, ...), with kube's discovery priorities. Local APIServices have no `service`: the
 * server itself serves them, and they are always Available (reason `Local`).
 */
import type { JsonObject } from '../api/object.js';
import type { ServedGroup } from '../registry/registry.js';

/** kube's group and version priorities of the built-in group versions. */
const PRIORITIES: ReadonlyMap<string, readonly [group: number, version: number]> = new Map([
  ['/v1', [18000, 1]],
  ['apiregistration.k8s.io/v1', [18000, 15]],
  ['apps/v1', [17800, 15]],
  ['events.k8s.io/v1', [17750, 15]],
  ['authentication.k8s.io/v1', [17700, 15]],
  ['authorization.k8s.io/v1', [17600, 15]],
  ['autoscaling/v1', [17500, 15]],
  ['autoscaling/v2', [17500, 30]],
  ['batch/v1', [17400, 15]],
  ['certificates.k8s.io/v1', [17300, 15]],
  ['networking.k8s.io/v1', [17200, 15]],
  ['policy/v1', [17100, 15]],
  ['rbac.authorization.k8s.io/v1', [17000, 15]],
  ['storage.k8s.io/v1', [16800, 15]],
  ['apiextensions.k8s.io/v1', [16700, 15]],
  ['admissionregistration.k8s.io/v1', [16700, 15]],
  ['scheduling.k8s.io/v1', [16600, 10]],
  ['coordination.k8s.io/v1', [16500, 15]],
  ['node.k8s.io/v1', [16300, 15]],
  ['discovery.k8s.io/v1', [16200, 15]],
  ['flowcontrol.apiserver.k8s.io/v1', [16100, 21]],
]);

/** Priorities of a group version kube does not list (alpha and beta versions). */
const DEFAULT_PRIORITY = [16000, 9] as const;

/** The label of APIServices the server manages: `onstart` (built-in groups), `true` (CRD groups). */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

/**
 * The local APIServices of custom resource group versions (kube's CRD registration controller):
 * low group priority, version priority 100, labelled `automanaged: "true"` so that they go
 * when their last CRD does.
 */
export function customApiServices(
  groupVersions: readonly { group: string; version: string }[],
): JsonObject[] {
  return groupVersions.map(({ group, version }) => ({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: apiServiceName(group, version), labels: { [AUTOMANAGED_LABEL]: 'true' } },
    spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 100 },
  }));
}

/** The group the aggregator itself serves. */
const AGGREGATOR_GROUP = 'apiregistration.k8s.io';

/** The APIService name of a group version (`v1.apps`; the core group's is `v1.`). */
export function apiServiceName(group: string, version: string): string {
  return `${version}.${group}`;
}

/**
 * The local APIService objects for `groups` (without server metadata). The aggregator's own
 * group, apiregistration.k8s.io, gets none: kube-apiserver registers only the groups it
 * delegates to (kube-apiserver's and apiextensions').
 */
export function localApiServices(groups: readonly ServedGroup[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const g of groups) {
    if (g.name === AGGREGATOR_GROUP) continue;
    for (const version of g.versions) {
      const [groupPriorityMinimum, versionPriority] =
        PRIORITIES.get(`${g.name}/${version}`) ?? DEFAULT_PRIORITY;
      out.push({
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: {
          name: apiServiceName(g.name, version),
          labels: { [AUTOMANAGED_LABEL]: 'onstart' },
        },
        spec: { group: g.name, version, groupPriorityMinimum, versionPriority },
      });
    }
  }
  return out;
}
