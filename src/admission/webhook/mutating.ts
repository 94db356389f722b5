/**
 * MutatingAdmissionWebhook: the matching mutating webhooks called one after another, in
 * configuration-name order. A JSONPatch answer is applied to the request's object (in place, so
 * the write path stores it) and the object defaulted again, as kube does. `reinvocationPolicy:
 * IfNeeded` webhooks are called once more when a webhook after them changed the object (kube's
 * reinvocation round; here within this plugin's step). Call failures follow the webhook's
 * failurePolicy; denials carry the webhook's message and code.
 */
import { internalError } from '../../api/errors.js';
import { applyJsonPatch, parseJsonPatch } from '../../api/json-patch.js';
import { jsonEqual, type KubeObject } from '../../api/object.js';
import type { ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';
import { callWebhook, type CallContext } from './call.js';
import { CallingWebhookError, deniedError } from './errors.js';
import { asType, selectWebhook, type SelectionDeps } from './selection.js';
import type { WebhookSpec } from './types.js';

/** Audit annotation prefixes of mutating webhooks (kube's). */
const MUTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
const PATCH_PREFIX = 'patch.webhook.admission.k8s.io/';
const FAILED_OPEN_PREFIX = 'failed-open.mutation.webhook.admission.k8s.io/';

/** What the mutating dispatcher needs. */
export interface MutatingDeps extends SelectionDeps, CallContext {
  /** Defaults an object again after a patch (kube re-runs the scheme's defaulting). */
  readonly defaulter: ((type: ResourceType, obj: KubeObject) => void) | undefined;
  readonly observe: WebhookObserver | undefined;
  readonly onError: (message: string, err: unknown) => void;
}

/** One finished webhook call, for metrics. */
export interface WebhookObservation {
  readonly name: string;
  readonly type: 'admit' | 'validating';
  readonly operation: string;
  readonly rejected: boolean;
  readonly seconds: number;
}

/** Receives {@link WebhookObservation}s. */
export type WebhookObserver = (o: WebhookObservation) => void;

/** Replaces `target`'s contents with `source`'s (the write path holds `target`). */
function replaceContents(target: KubeObject, source: KubeObject): void {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, source);
}

/** Per-request reinvocation state (kube's webhookReinvokeContext). */
interface Reinvocation {
  previouslyInvoked: Set<string>;
  reinvoke: Set<string>;
  shouldReinvoke: boolean;
}

/** Runs the mutating webhooks of one request. */
export async function admitMutating(
  deps: MutatingDeps,
  webhooks: readonly WebhookSpec[],
  attrs: AdmissionAttributes,
): Promise<void> {
  const state: Reinvocation = { previouslyInvoked: new Set(), reinvoke: new Set(), shouldReinvoke: false };
  await round(deps, webhooks, attrs, state, 0);
  if (state.shouldReinvoke && state.reinvoke.size > 0) await round(deps, webhooks, attrs, state, 1);
}

async function round(
  deps: MutatingDeps,
  webhooks: readonly WebhookSpec[],
  attrs: AdmissionAttributes,
  state: Reinvocation,
  n: 0 | 1,
): Promise<void> {
  for (let i = 0; i < webhooks.length; i++) {
    const webhook = webhooks[i] as WebhookSpec;
    if (n === 1 && !state.reinvoke.has(webhook.uid)) continue;
    const type = await selectWebhook(deps, webhook, attrs);
    if (type === undefined) continue;
    const started = performance.now();
    let changed = false;
    let rejected = false;
    try {
      changed = await callOne(deps, webhook, attrs, type, `round_${n}_index_${i}`);
    } catch (err) {
      if (err instanceof CallingWebhookError && webhook.failurePolicy === 'Ignore') {
        deps.onError(`failed calling webhook, failing open ${webhook.name}`, err);
        attrs.annotate(`${FAILED_OPEN_PREFIX}round_${n}_index_${i}`, webhook.name);
      } else {
        rejected = true;
        throw err instanceof CallingWebhookError ? err.toApiError() : err;
      }
    } finally {
      deps.observe?.({
        name: webhook.name,
        type: 'admit',
        operation: attrs.operation,
        rejected,
        seconds: (performance.now() - started) / 1000,
      });
      if (changed) {
        for (const uid of state.previouslyInvoked) state.reinvoke.add(uid);
        state.previouslyInvoked.clear();
        state.shouldReinvoke = true;
      }
      if (webhook.reinvocationPolicy === 'IfNeeded') state.previouslyInvoked.add(webhook.uid);
    }
  }
}

/** Calls one webhook and applies its patch; true when the object changed. */
async function callOne(
  deps: MutatingDeps,
  webhook: WebhookSpec,
  attrs: AdmissionAttributes,
  type: ResourceType,
  annotationSuffix: string,
): Promise<boolean> {
  const object = asType(attrs.object, type);
  let changed = false;
  try {
    const response = await callWebhook(deps, webhook, attrs, {
      type,
      object,
      oldObject: asType(attrs.oldObject, type),
    });
    if (!response.allowed) throw deniedError(webhook.name, response.result);
    if (response.patch === undefined) return false;
    let ops;
    try {
      ops = parseJsonPatch(JSON.parse(response.patch.toString('utf8')));
    } catch (err) {
      throw new CallingWebhookError(
        webhook.name,
        `received undecodable patch in webhook response: ${(err as Error).message}`,
      );
    }
    if (ops.length === 0) return false;
    if (attrs.object === undefined || object === undefined) {
      throw internalError(
        `admission webhook ${JSON.stringify(webhook.name)} attempted to modify the object, which is not supported for this operation`,
      );
    }
    if (response.patchType !== 'JSONPatch') {
      throw new CallingWebhookError(
        webhook.name,
        `unsupported patch type ${JSON.stringify(response.patchType)}`,
      );
    }
    let patched: unknown;
    try {
      patched = applyJsonPatch(object, ops);
    } catch (err) {
      throw internalError((err as Error).message);
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
      throw internalError('the patched object is not an object');
    }
    const next = patched as KubeObject;
    if (typeof next.metadata !== 'object' || next.metadata === null) next.metadata = {};
    deps.defaulter?.(type, next);
    changed = !jsonEqual(object, next);
    attrs.annotate(
      `${PATCH_PREFIX}${annotationSuffix}`,
      JSON.stringify({
        configuration: webhook.configurationName,
        webhook: webhook.name,
        patch: ops,
        patchType: 'JSONPatch',
      }),
    );
    const back = type === attrs.type ? next : (asType(next, attrs.type) as KubeObject);
    if (changed) replaceContents(attrs.object, back);
    return changed;
  } finally {
    attrs.annotate(
      `${MUTATION_PREFIX}${annotationSuffix}`,
      JSON.stringify({ configuration: webhook.configurationName, webhook: webhook.name, mutated: changed }),
    );
  }
}
