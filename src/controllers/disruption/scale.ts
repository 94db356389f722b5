/**
 * The expected pod count behind a budget with a percentage or `maxUnavailable` (kube's
 * `getExpectedScale`): the sum of `spec.replicas` of the pods' controllers, each counted once,
 * found among ReplicationControllers, ReplicaSets (or the Deployment owning one) and
 * StatefulSets. Pods without a controller are returned as unmanaged.
 */
import type { Pod, ReplicationController } from '../../api/types/core-v1.js';
import type { Deployment, ReplicaSet, StatefulSet } from '../../api/types/apps-v1.js';
import type { Indexer } from '../../client/index.js';
import type { OwnerReference } from '../../api/types/meta-v1.js';
import { BudgetError } from './budget.js';

/** The caches the lookup reads. */
export interface ScaleSources {
  readonly replicationControllers: Indexer<ReplicationController>;
  readonly replicaSets: Indexer<ReplicaSet>;
  readonly deployments: Indexer<Deployment>;
  readonly statefulSets: Indexer<StatefulSet>;
}

function controllerOf(meta: { ownerReferences?: OwnerReference[] }): OwnerReference | undefined {
  return meta.ownerReferences?.find((r) => r.controller === true);
}

function group(apiVersion: string | undefined): string {
  const v = apiVersion ?? '';
  return v.includes('/') ? (v.split('/')[0] ?? '') : '';
}

function replicasOf(
  sources: ScaleSources,
  ref: OwnerReference,
  namespace: string,
): { uid: string; replicas: number } | undefined {
  const key = `${namespace}/${ref.name ?? ''}`;
  const g = group(ref.apiVersion);
  if (ref.kind === 'ReplicationController' && g === '') {
    const rc = sources.replicationControllers.get(key);
    return rc !== undefined && rc.metadata.uid === ref.uid
      ? { uid: ref.uid ?? '', replicas: rc.spec?.replicas ?? 1 }
      : undefined;
  }
  if (ref.kind === 'ReplicaSet' && g === 'apps') {
    const rs = sources.replicaSets.get(key);
    if (rs?.metadata.uid !== ref.uid || rs === undefined) return undefined;
    const owner = controllerOf(rs.metadata);
    if (owner?.kind === 'Deployment' && group(owner.apiVersion) === 'apps') {
      const d = sources.deployments.get(`${namespace}/${owner.name ?? ''}`);
      return d !== undefined && d.metadata.uid === owner.uid
        ? { uid: owner.uid ?? '', replicas: d.spec?.replicas ?? 1 }
        : undefined;
    }
    return { uid: ref.uid ?? '', replicas: rs.spec?.replicas ?? 1 };
  }
  if (ref.kind === 'StatefulSet' && g === 'apps') {
    const ss = sources.statefulSets.get(key);
    return ss !== undefined && ss.metadata.uid === ref.uid
      ? { uid: ref.uid ?? '', replicas: ss.spec?.replicas ?? 1 }
      : undefined;
  }
  return undefined;
}

/**
 * The expected count and the unmanaged pods.
 * @throws BudgetError when a pod's controller cannot be found.
 */
export function expectedScale(
  sources: ScaleSources,
  pods: readonly Pod[],
): { expected: number; unmanaged: string[] } {
  const counted = new Map<string, number>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerOf(pod.metadata);
    if (ref === undefined) {
      unmanaged.push(pod.metadata.name ?? '');
      continue;
    }
    // A ReplicaSet of a Deployment counts as the Deployment: counts are keyed by the top owner.
    const found = replicasOf(sources, ref, pod.metadata.namespace ?? '');
    if (found === undefined)
      throw new BudgetError(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
    counted.set(found.uid, found.replicas);
  }
  let expected = 0;
  for (const n of counted.values()) expected += n;
  return { expected, unmanaged };
}
