/**
 * NoExecute taints against a pod's tolerations, as kube's taint eviction decides: a taint not
 * tolerated evicts at once; tolerated taints with `tolerationSeconds` evict after the smallest
 * of them; tolerations without it keep the pod forever.
 */
import type { Taint, Toleration } from '../../api/types/core-v1.js';

/** Whether `t` tolerates `taint` (kube's `ToleratesTaint`). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if ((t.effect ?? '') !== '' && t.effect !== taint.effect) return false;
  if ((t.key ?? '') !== '' && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/**
 * When to evict a pod from a node with `taints` (the NoExecute ones count): `'now'`,
 * `'never'`, or after this many ms.
 */
export function evictionDelay(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): 'now' | 'never' | number {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (noExecute.length === 0) return 'never';
  let min: number | undefined;
  for (const taint of noExecute) {
    // As kube, the first toleration matching a taint is the one that counts.
    const t = tolerations.find((x) => tolerates(x, taint));
    if (t === undefined) return 'now';
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    const ms = Math.max(0, t.tolerationSeconds) * 1000;
    if (min === undefined || ms < min) min = ms;
  }
  return min === undefined ? 'never' : min;
}
