/**
 * ValidatingAdmissionWebhook: the matching validating webhooks called in parallel; the request
 * fails with the first error in webhook order (a denial, or a failing-closed call), as kube fails
 * it with one of them. A webhook with `failurePolicy: Ignore` that cannot be called is skipped
 * and recorded in the audit annotations.
 */
import type { ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';
import { callWebhook } from './call.js';
import { CallingWebhookError, deniedError } from './errors.js';
import type { MutatingDeps } from './mutating.js';
import { asType, selectWebhook } from './selection.js';
import type { WebhookSpec } from './types.js';

const FAILED_OPEN_PREFIX = 'failed-open.validating.webhook.admission.k8s.io/';

/** What the validating dispatcher needs (the mutating one's deps without the defaulter). */
export type ValidatingDeps = Omit<MutatingDeps, 'defaulter'>;

/** Runs the validating webhooks of one request. @throws ApiError */
export async function validateWebhooks(
  deps: ValidatingDeps,
  webhooks: readonly WebhookSpec[],
  attrs: AdmissionAttributes,
): Promise<void> {
  const relevant: { webhook: WebhookSpec; type: ResourceType; index: number }[] = [];
  for (const webhook of webhooks) {
    const type = await selectWebhook(deps, webhook, attrs);
    if (type !== undefined) relevant.push({ webhook, type, index: relevant.length });
  }
  if (relevant.length === 0) return;
  const outcomes = await Promise.all(relevant.map((r) => callOne(deps, r.webhook, r.type, r.index, attrs)));
  const failure = outcomes.find((o) => o !== undefined);
  if (failure !== undefined) throw failure;
}

async function callOne(
  deps: ValidatingDeps,
  webhook: WebhookSpec,
  type: ResourceType,
  index: number,
  attrs: AdmissionAttributes,
): Promise<Error | undefined> {
  const started = performance.now();
  let rejected = true;
  try {
    const response = await callWebhook(deps, webhook, attrs, {
      type,
      object: asType(attrs.object, type),
      oldObject: asType(attrs.oldObject, type),
    });
    if (response.allowed) {
      rejected = false;
      return undefined;
    }
    return deniedError(webhook.name, response.result);
  } catch (err) {
    if (err instanceof CallingWebhookError) {
      if (webhook.failurePolicy === 'Ignore') {
        rejected = false;
        deps.onError(`failed calling webhook, failing open ${webhook.name}`, err);
        attrs.annotate(`${FAILED_OPEN_PREFIX}round_0_index_${index}`, webhook.name);
        return undefined;
      }
      return err.toApiError();
    }
    return err instanceof Error ? err : new Error(String(err));
  } finally {
    deps.observe?.({
      name: webhook.name,
      type: 'validating',
      operation: attrs.operation,
      rejected,
      seconds: (performance.now() - started) / 1000,
    });
  }
}
