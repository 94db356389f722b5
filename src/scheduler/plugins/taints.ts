/** Toleration matching, as kube's `v1.Toleration.ToleratesTaint`. */
import type { Taint, Toleration } from '../../api/types/core-v1.js';

/** True when the toleration tolerates the taint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** True when any toleration tolerates the taint. */
export function toleratedByAny(tolerations: readonly Toleration[], taint: Taint): boolean {
  for (const t of tolerations) if (tolerates(t, taint)) return true;
  return false;
}

/** The first taint with one of `effects` that no toleration tolerates. */
export function firstUntolerated(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  effects: ReadonlySet<string>,
): Taint | undefined {
  for (const taint of taints) {
    if (!effects.has(taint.effect ?? '')) continue;
    if (!toleratedByAny(tolerations, taint)) return taint;
  }
  return undefined;
}
