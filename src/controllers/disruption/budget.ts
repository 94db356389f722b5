/**
 * A PodDisruptionBudget's status from the pods it selects, as kube's disruption controller
 * computes it: expected pods (the pod count for an integer minAvailable, else the scale of the
 * pods' controllers), desired and current healthy, disruptions allowed, the recently disrupted
 * pods still counted as gone, and the DisruptionAllowed condition.
 */
import type { Condition } from '../../api/types/meta-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../api/types/policy-v1.js';
import { isPodReady, isPodTerminating } from '../pods/pod-state.js';

/** How long a pod named in `status.disruptedPods` is taken as about to go (kube: 2 min). */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** A budget whose numbers cannot be computed; becomes the SyncFailed condition's message. */
export class BudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetError';
  }
}

/**
 * `value` (an integer or `N%`) of `total`, percentages rounded up (kube's
 * `GetScaledValueFromIntOrPercent(..., true)`).
 * @throws BudgetError for a malformed value.
 */
export function scaledValue(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(-?[0-9]+)%$/.exec(value);
  if (m === null)
    throw new BudgetError(`invalid value for IntOrString: invalid type: string is not a percentage`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

/** The pods' numbers; `expected` is given for percentages and maxUnavailable. */
export function expectedAndDesired(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  scale: () => number,
): { expected: number; desired: number } {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const expected = scale();
    const max = scaledValue(spec.maxUnavailable, expected);
    return { expected, desired: Math.max(0, expected - max) };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expected: pods.length, desired: spec.minAvailable };
    const expected = scale();
    return { expected, desired: scaledValue(spec.minAvailable, expected) };
  }
  return { expected: 0, desired: 0 };
}

/** `status.disruptedPods` pruned to pods still there, not deleting, and within the timeout. */
export function disruptedPods(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  nowMs: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  const byName = new Map(pods.map((p) => [p.metadata.name ?? '', p]));
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = byName.get(name);
    if (pod === undefined || isPodTerminating(pod)) continue;
    if (Date.parse(at) + DELETION_TIMEOUT_MS <= nowMs) continue;
    out[name] = at;
  }
  return out;
}

/** Ready pods that are neither deleting nor recently disrupted. */
export function countHealthy(pods: readonly Pod[], disrupted: Record<string, string>): number {
  return pods.filter(
    (p) => !isPodTerminating(p) && disrupted[p.metadata.name ?? ''] === undefined && isPodReady(p),
  ).length;
}

/** Sets `cond` in `conditions` as apimachinery's `SetStatusCondition` (transition time moves on status change). */
export function setCondition(conditions: readonly Condition[], cond: Condition, now: string): Condition[] {
  const out = conditions.map((c) => ({ ...c }));
  const existing = out.find((c) => c.type === cond.type);
  if (existing === undefined) {
    out.push({ ...cond, lastTransitionTime: now });
    return out;
  }
  if (existing.status !== cond.status) existing.lastTransitionTime = now;
  existing.status = cond.status ?? '';
  existing.reason = cond.reason ?? '';
  existing.message = cond.message ?? '';
  if (cond.observedGeneration !== undefined) existing.observedGeneration = cond.observedGeneration;
  return out;
}

/** The status kube writes after a successful sync. */
export function healthyStatus(
  pdb: PodDisruptionBudget,
  numbers: { expected: number; desired: number; current: number; disrupted: Record<string, string> },
  now: string,
): PodDisruptionBudgetStatus {
  let allowed = numbers.current - numbers.desired;
  if (numbers.expected <= 0 || allowed <= 0) allowed = 0;
  const generation = pdb.metadata.generation ?? 0;
  const status: PodDisruptionBudgetStatus = {
    observedGeneration: generation,
    disruptionsAllowed: allowed,
    currentHealthy: numbers.current,
    desiredHealthy: numbers.desired,
    expectedPods: numbers.expected,
    conditions: setCondition(
      pdb.status?.conditions ?? [],
      allowed > 0
        ? {
            type: 'DisruptionAllowed',
            status: 'True',
            reason: 'SufficientPods',
            message: '',
            observedGeneration: generation,
          }
        : {
            type: 'DisruptionAllowed',
            status: 'False',
            reason: 'InsufficientPods',
            message: '',
            observedGeneration: generation,
          },
      now,
    ),
  };
  if (Object.keys(numbers.disrupted).length > 0) status.disruptedPods = numbers.disrupted;
  return status;
}

/** The status kube writes when a sync fails (its `failSafe`): no disruptions, SyncFailed. */
export function failedStatus(
  pdb: PodDisruptionBudget,
  message: string,
  now: string,
): PodDisruptionBudgetStatus {
  const status: PodDisruptionBudgetStatus = { ...(pdb.status ?? {}), disruptionsAllowed: 0 };
  status.conditions = setCondition(
    pdb.status?.conditions ?? [],
    {
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'SyncFailed',
      message,
      observedGeneration: pdb.status?.observedGeneration ?? 0,
    },
    now,
  );
  return status;
}
