/**
 * One policy evaluated for one request and one param (kube's validator): `matchConditions`,
 * then `variables` (each sees the earlier ones), `validations` (expression, message,
 * messageExpression, reason) and `auditAnnotations`. Compile and evaluation errors become
 * decisions the policy's failurePolicy turns into a denial or nothing.
 */
import type { AdmissionEnvOptions } from '../../cel/admission.js';
import type { MatchConditionResult } from '../webhook/types.js';
import { celToString, runExpression, type ExpressionCache } from './cel.js';
import { evaluateConditions } from './match-conditions.js';
import type { PolicySpec } from './spec.js';

/** A failed validation or an error (kube's PolicyDecision with action Deny). */
export interface Decision {
  readonly message: string;
  /** The status reason ('' for an evaluation error: kube's default, Invalid). */
  readonly reason: string;
  /** True for an evaluation error (failurePolicy Ignore drops it). */
  readonly error: boolean;
  /** The failing validation's index (audit annotation). */
  readonly index: number;
}

/** The outcome of one evaluation. */
export interface Evaluation {
  /** False: a match condition was false, nothing applies. */
  readonly matched: boolean;
  readonly decisions: readonly Decision[];
  /** `auditAnnotations` values (key → value). */
  readonly annotations: ReadonlyMap<string, string>;
}

function errorDecision(message: string, index = -1): Decision {
  return { message, reason: '', error: true, index };
}

/**
 * Runs `policy` on an activation of CEL values (object, oldObject, request, params,
 * namespaceObject, authorizer).
 */
export async function evaluatePolicy(
  cache: ExpressionCache,
  policy: PolicySpec,
  base: Readonly<Record<string, unknown>>,
): Promise<Evaluation> {
  const vars: Record<string, unknown> = {};
  const activation = { ...base, variables: vars };
  const annotations = new Map<string, string>();
  const scopes = cache.scopesOf(policy);
  const conditions: MatchConditionResult = await evaluateConditions(
    cache,
    policy.matchConditions,
    activation,
    scopes.conditions,
  );
  if ('error' in conditions) {
    return { matched: true, decisions: [errorDecision(conditions.error)], annotations };
  }
  if (!conditions.matches) return { matched: false, decisions: [], annotations };
  for (let i = 0; i < policy.variables.length; i++) {
    const v = policy.variables[i];
    const scope = scopes.variables[i];
    if (v === undefined || scope === undefined) continue;
    const r = await runExpression(cache, v.expression, activation, scope);
    if (r.error === undefined) vars[v.name] = r.value;
  }
  const decisions: Decision[] = [];
  for (const [index, v] of policy.validations.entries()) {
    const r = await runExpression(cache, v.expression, activation, scopes.expressions);
    if (r.error !== undefined) {
      decisions.push(errorDecision(`expression '${v.expression}' resulted in error: ${r.error}`, index));
      continue;
    }
    if (r.value === true) continue;
    if (typeof r.value !== 'boolean') {
      decisions.push(errorDecision(`expression '${v.expression}' must evaluate to bool`, index));
      continue;
    }
    const message = await messageOf(cache, v, activation, scopes.messages);
    decisions.push({ message, reason: v.reason, error: false, index });
  }
  for (const a of policy.auditAnnotations) {
    const r = await runExpression(cache, a.valueExpression, activation, scopes.expressions);
    if (r.error === undefined && r.value !== null && r.value !== undefined) {
      annotations.set(a.key, celToString(r.value));
    }
  }
  return { matched: true, decisions, annotations };
}

/** kube's message of a false validation: messageExpression's one-line string, else message, else `failed expression: <expr>`. */
async function messageOf(
  cache: ExpressionCache,
  v: PolicySpec['validations'][number],
  activation: Readonly<Record<string, unknown>>,
  scope: AdmissionEnvOptions,
): Promise<string> {
  if (v.messageExpression !== '') {
    const r = await runExpression(cache, v.messageExpression, activation, scope);
    if (typeof r.value === 'string') {
      const text = r.value.trim();
      if (text !== '' && !text.includes('\n')) return text;
    }
  }
  if (v.message !== '') return v.message;
  return `failed expression: ${v.expression.trim()}`;
}
