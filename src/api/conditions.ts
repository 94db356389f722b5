/**
 * Status conditions as kube's controllers keep them (`meta.SetStatusCondition`): a condition's
 * `lastTransitionTime` moves only when its status changes.
 */

/** The transition time of a condition about to get `status`, given its `old` version if any. */
export function transitionTime(
  old: { readonly status?: unknown; readonly lastTransitionTime?: unknown } | undefined,
  status: string,
  now: string,
): string {
  return old !== undefined && old.status === status && typeof old.lastTransitionTime === 'string'
    ? old.lastTransitionTime
    : now;
}
