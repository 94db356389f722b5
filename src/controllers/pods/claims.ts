/**
 * The claims a pod mounts, as `namespace/name` keys: its persistentVolumeClaim volumes and the
 * claims of its generic ephemeral volumes (named `<pod>-<volume>`, as kube's ephemeral volume
 * controller names them). Controllers index pods by them.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** `namespace/claim` of every claim the pod mounts. */
export function podClaimKeys(pod: Pod): string[] {
  const ns = pod.metadata.namespace ?? '';
  const keys: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim !== undefined) keys.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    else if (v.ephemeral !== undefined) keys.push(`${ns}/${pod.metadata.name ?? ''}-${v.name}`);
  }
  return keys;
}
