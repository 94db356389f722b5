/**
 * `matchConditions` on CEL: every condition is evaluated; one false means no match (whatever
 * errors others had), else an error in any is the outcome's error (the webhook's or policy's
 * failurePolicy decides), as kube's matcher.
 */
import type { AdmissionEnvOptions } from '../../cel/admission.js';
import type { CelAuthorize } from '../../cel/authz.js';
import { isJsonObject, type JsonObject } from '../../api/object.js';
import type { UserInfo } from '../../api/user.js';
import { str, strings } from '../webhook/configurations.js';
import type { MatchCondition, MatchConditionEvaluator, MatchConditionResult } from '../webhook/types.js';
import { celActivation, celAuthorizer, ExpressionCache, runExpression, WEBHOOK_SCOPE } from './cel.js';

/** Evaluates `conditions` on an activation of CEL values. */
export async function evaluateConditions(
  cache: ExpressionCache,
  conditions: readonly MatchCondition[],
  activation: Readonly<Record<string, unknown>>,
  scope: AdmissionEnvOptions = WEBHOOK_SCOPE,
): Promise<MatchConditionResult> {
  const errors: string[] = [];
  for (const c of conditions) {
    const r = await runExpression(cache, c.expression, activation, scope);
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

/** The requesting user of an AdmissionRequest (`request.userInfo`). */
function userOf(request: JsonObject): UserInfo {
  const u = isJsonObject(request['userInfo']) ? request['userInfo'] : {};
  const extra: Record<string, string[]> = {};
  if (isJsonObject(u['extra'])) for (const [k, v] of Object.entries(u['extra'])) extra[k] = strings(v);
  return {
    name: typeof u['username'] === 'string' ? u['username'] : '',
    uid: typeof u['uid'] === 'string' ? u['uid'] : '',
    groups: strings(u['groups']),
    extra,
  };
}

/**
 * The webhook plugins' {@link MatchConditionEvaluator} (one per server); `authorize` backs the
 * `authorizer` variable (undefined: every check is allowed).
 */
export function celMatchConditions(authorize?: CelAuthorize): MatchConditionEvaluator {
  const cache = new ExpressionCache();
  return {
    evaluate: (webhook, input) => {
      const request = input.request;
      const resource = isJsonObject(request['resource']) ? request['resource'] : {};
      const authorizer = celAuthorizer(userOf(request), authorize, {
        group: str(resource, 'group'),
        resource: str(resource, 'resource'),
        subresource: str(request, 'subResource'),
        namespace: str(request, 'namespace'),
        name: str(request, 'name'),
      });
      return evaluateConditions(
        cache,
        webhook.matchConditions,
        celActivation({
          request,
          object: input.object,
          oldObject: input.oldObject,
          namespaceObject: null,
          authorizer,
        }),
      );
    },
  };
}
