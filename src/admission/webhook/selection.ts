/**
 * Which webhooks one request is sent to, and as what (kube's `ShouldCallHook`): rules and
 * matchPolicy, object selector, namespace selector (labels from the namespaces informer, falling
 * back to storage for a namespace not seen yet, as kube's matcher falls back to a live GET), then
 * `matchConditions`. Also the conversion of the request's objects to an equivalent version the
 * webhook asked for.
 */
import type { KubeObject } from '../../api/object.js';
import { conversionTo } from '../../conversion/index.js';
import type { Registry, ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';
import { admissionForbidden } from './errors.js';
import { invocationType, selectorsMatch } from './matching.js';
import { admissionRequest } from './review.js';
import type { MatchConditionEvaluator, WebhookSpec } from './types.js';

/** What selection reads. */
export interface SelectionDeps {
  readonly registry: Registry;
  /** A namespace's labels, or undefined when the namespace does not exist. */
  readonly namespaceLabels: (name: string) => Promise<Readonly<Record<string, string>> | undefined>;
  readonly matchConditions: MatchConditionEvaluator | undefined;
}

/** The message of match conditions that cannot be evaluated because no CEL evaluator is wired. */
export const NO_EVALUATOR =
  'matchConditions cannot be evaluated: no CEL evaluator is configured on this server';

/** `obj` as `type` has it (a conversion for shared storage, else apiVersion and kind). */
export function asType(obj: KubeObject | undefined, type: ResourceType): KubeObject | undefined {
  if (obj === undefined) return undefined;
  if (obj.apiVersion === type.apiVersion && obj.kind === type.kind) return obj;
  const convert = conversionTo(type);
  if (convert !== undefined) return convert(obj);
  return { ...obj, apiVersion: type.apiVersion, kind: type.kind };
}

/**
 * The type `webhook` is called for with `attrs`, or undefined when it is not called.
 * @throws ApiError when the namespace does not exist or match conditions fail closed
 */
export async function selectWebhook(
  deps: SelectionDeps,
  webhook: WebhookSpec,
  attrs: AdmissionAttributes,
): Promise<ResourceType | undefined> {
  const type = invocationType(webhook, attrs, deps.registry);
  if (type === undefined) return undefined;
  if (!(await selectorsMatch(webhook, attrs, deps.namespaceLabels))) return undefined;
  if (webhook.matchConditions.length > 0) {
    const object = asType(attrs.object, type);
    const oldObject = asType(attrs.oldObject, type);
    const result =
      deps.matchConditions === undefined
        ? { error: NO_EVALUATOR }
        : await deps.matchConditions.evaluate(webhook, {
            request: admissionRequest('', attrs, type, object, oldObject),
            object: object ?? null,
            oldObject: oldObject ?? null,
          });
    if ('error' in result) {
      if (webhook.failurePolicy === 'Ignore') return undefined;
      throw admissionForbidden(attrs, result.error);
    }
    if (!result.matches) return undefined;
  }
  return type;
}
