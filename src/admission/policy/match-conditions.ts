/**
 * `matchConditions` on CEL: every condition is evaluated; one false means no match (whatever
 * errors others had), else an error in any is the outcome's error (the webhook's or policy's
 * failurePolicy decides), as kube's matcher.
 */
import type { MatchCondition, MatchConditionEvaluator, MatchConditionResult } from '../webhook/types.js';
import { celActivation, ExpressionCache, runExpression, WEBHOOK_VARIABLES } from './cel.js';

/** Evaluates `conditions` on an activation of CEL values. */
export function evaluateConditions(
  cache: ExpressionCache,
  conditions: readonly MatchCondition[],
  activation: Readonly<Record<string, unknown>>,
): MatchConditionResult {
  const errors: string[] = [];
  for (const c of conditions) {
    const r = runExpression(cache, c.expression, activation);
    if (r.error !== undefined) {
      errors.push(`matchCondition '${c.name}' resulted in error: ${r.error}`);
    } else if (typeof r.value !== 'boolean') {
      errors.push(`matchCondition '${c.name}' must evaluate to bool`);
    } else if (!r.value) {
      return { matches: false, failedCondition: c.name };
    }
  }
  if (errors.length > 0) return { error: errors.join(', ') };
  return { matches: true };
}

/** The webhook plugins' {@link MatchConditionEvaluator} (one per server). */
export function celMatchConditions(): MatchConditionEvaluator {
  const cache = new ExpressionCache(WEBHOOK_VARIABLES);
  return {
    evaluate: (webhook, input) =>
      evaluateConditions(
        cache,
        webhook.matchConditions,
        celActivation({ request: input.request, object: input.object, oldObject: input.oldObject }),
      ),
  };
}
