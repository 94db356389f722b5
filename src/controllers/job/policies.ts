/**
 * A Job's podFailurePolicy and successPolicy, as kube's job controller evaluates them.
 *
 * - podFailurePolicy: the first rule that matches a failed pod decides: `FailJob` (the job
 *   fails with reason PodFailurePolicy and kube's message), `FailIndex`, `Ignore` (not counted
 *   towards backoffLimit) or `Count`. Exit-code rules look at terminated containers with a
 *   non-zero exit code (optionally one named container); condition rules at pod conditions.
 * - successPolicy: the first rule whose succeededIndexes/succeededCount is met ends the job.
 */
import type {
  PodFailurePolicy,
  PodFailurePolicyOnExitCodesRequirement,
  SuccessPolicy,
} from '../../api/types/batch-v1.js';
import type { ContainerStatus, Pod, PodCondition } from '../../api/types/core-v1.js';
import { parseIndexes } from './indexes.js';

/** What a podFailurePolicy rule decided for a failed pod. */
export interface FailurePolicyMatch {
  /** The rule's action, when a rule matched. */
  readonly action: 'FailJob' | 'FailIndex' | 'Ignore' | 'Count' | undefined;
  /** Whether the failure counts towards backoffLimit. */
  readonly countFailed: boolean;
  /** The FailJob message. */
  readonly message: string | undefined;
}

const NO_MATCH: FailurePolicyMatch = { action: undefined, countFailed: true, message: undefined };

function matchingContainer(
  pod: Pod,
  req: PodFailurePolicyOnExitCodesRequirement,
): ContainerStatus | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const values = new Set(req.values ?? []);
  for (const cs of statuses) {
    if (req.containerName !== undefined && req.containerName !== cs.name) continue;
    const code = cs.state?.terminated?.exitCode;
    if (code === undefined || code === 0) continue;
    const inValues = values.has(code);
    if (req.operator === 'In' ? inValues : req.operator === 'NotIn' ? !inValues : false) return cs;
  }
  return undefined;
}

function matchingCondition(
  pod: Pod,
  patterns: readonly { type?: string; status?: string }[],
): PodCondition | undefined {
  for (const p of patterns)
    for (const c of pod.status?.conditions ?? [])
      if (c.type === p.type && c.status === (p.status ?? 'True')) return c;
  return undefined;
}

/** Evaluates the policy for one failed pod. */
export function matchPodFailurePolicy(policy: PodFailurePolicy | undefined, pod: Pod): FailurePolicyMatch {
  if (policy === undefined) return NO_MATCH;
  const where = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
  for (const [index, rule] of (policy.rules ?? []).entries()) {
    let message: string | undefined;
    if (rule.onExitCodes !== undefined) {
      const cs = matchingContainer(pod, rule.onExitCodes);
      if (cs === undefined) continue;
      message = `Container ${cs.name ?? ''} for pod ${where} failed with exit code ${cs.state?.terminated?.exitCode ?? 0} matching FailJob rule at index ${index}`;
    } else if (rule.onPodConditions !== undefined) {
      const c = matchingCondition(pod, rule.onPodConditions);
      if (c === undefined) continue;
      message = `Pod ${where} has condition ${c.type ?? ''} matching FailJob rule at index ${index}`;
    } else {
      continue;
    }
    switch (rule.action) {
      case 'Ignore':
        return { action: 'Ignore', countFailed: false, message: undefined };
      case 'FailIndex':
        return { action: 'FailIndex', countFailed: true, message: undefined };
      case 'Count':
        return { action: 'Count', countFailed: true, message: undefined };
      case 'FailJob':
        return { action: 'FailJob', countFailed: true, message };
      default:
        continue;
    }
  }
  return NO_MATCH;
}

/**
 * The success policy's verdict on the succeeded indexes: kube's message
 * (`Matched rules at index N`) when a rule is met.
 */
export function matchSuccessPolicy(
  policy: SuccessPolicy | undefined,
  completions: number,
  succeeded: ReadonlySet<number>,
): string | undefined {
  if (policy === undefined || succeeded.size === 0) return undefined;
  for (const [index, rule] of (policy.rules ?? []).entries()) {
    if (rule.succeededIndexes !== undefined) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.size === 0) continue;
      let count = 0;
      for (const i of required) if (succeeded.has(i)) count++;
      const met = rule.succeededCount === undefined ? count === required.size : count >= rule.succeededCount;
      if (met) return `Matched rules at index ${index}`;
    } else if (rule.succeededCount !== undefined && succeeded.size >= rule.succeededCount) {
      return `Matched rules at index ${index}`;
    }
  }
  return undefined;
}
