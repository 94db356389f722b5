/**
 * One webhook call, as both plugins make it: the dry-run check against `sideEffects`, the review
 * in the webhook's first supported version, the target (`url`, or a `service` resolved to a ready
 * endpoint), the HTTPS POST with the webhook's timeout, and the answer's checks. Warnings and
 * audit annotations of the answer are recorded here; allowing, denying and patching are the
 * plugins' business.
 */
import type { KubeObject } from '../../api/object.js';
import type { ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';
import { WebhookCallError, type WebhookClient, type WebhookTarget } from './client.js';
import { CallingWebhookError, dryRunUnsupported } from './errors.js';
import {
  admissionRequest,
  admissionReview,
  InvalidResponseError,
  newReviewUid,
  reviewVersion,
  UndecodableResponseError,
  verifyResponse,
  type VerifiedResponse,
} from './review.js';
import { ResolveError, resolveServiceEndpoint, type ServiceObjects } from './service-resolver.js';
import type { WebhookSpec } from './types.js';

/** What a call needs besides the webhook and the request. */
export interface CallContext {
  readonly client: WebhookClient;
  readonly services: ServiceObjects;
}

/** The objects as the webhook is sent them (converted to the invocation's version). */
export interface CallObjects {
  readonly type: ResourceType;
  readonly object: KubeObject | undefined;
  readonly oldObject: KubeObject | undefined;
}

async function targetOf(ctx: CallContext, webhook: WebhookSpec): Promise<WebhookTarget> {
  const cc = webhook.clientConfig;
  if (cc.caBundle !== undefined && !cc.caBundle.includes('-----BEGIN CERTIFICATE-----')) {
    throw new CallingWebhookError(
      webhook.name,
      'could not get REST client: unable to load root certificates: unable to parse bytes as PEM block',
    );
  }
  if (cc.service !== undefined) {
    const s = cc.service;
    const serverName = `${s.name}.${s.namespace}.svc`;
    const display = `https://${serverName}:${s.port}${s.path === '' ? '/' : s.path}`;
    const url = new URL(display);
    let endpoint;
    try {
      endpoint = await resolveServiceEndpoint(ctx.services, s.namespace, s.name, s.port);
    } catch (err) {
      if (err instanceof ResolveError) {
        const shown = `${display}?timeout=${webhook.timeoutSeconds}s`;
        throw new CallingWebhookError(
          webhook.name,
          `failed to call webhook: Post ${JSON.stringify(shown)}: ${err.message}`,
        );
      }
      throw err;
    }
    return {
      url,
      display,
      connectHost: endpoint.host,
      connectPort: endpoint.port,
      serverName,
      caBundle: cc.caBundle,
    };
  }
  if (cc.url === undefined || cc.url === '')
    throw new CallingWebhookError(webhook.name, 'webhook configuration must have either service or URL');
  let url: URL;
  try {
    url = new URL(cc.url);
  } catch {
    throw new CallingWebhookError(
      webhook.name,
      `Unparsable URL: parse ${JSON.stringify(cc.url)}: invalid URL`,
    );
  }
  return { url, caBundle: cc.caBundle };
}

/**
 * Calls `webhook` for `attrs` and returns its checked answer.
 * @throws ApiError for a dry run the webhook cannot take (not subject to failurePolicy)
 * @throws CallingWebhookError for every failure the failurePolicy decides on
 */
export async function callWebhook(
  ctx: CallContext,
  webhook: WebhookSpec,
  attrs: AdmissionAttributes,
  objects: CallObjects,
): Promise<VerifiedResponse> {
  if (attrs.dryRun) {
    if (webhook.sideEffects === '') throw new CallingWebhookError(webhook.name, 'Webhook SideEffects is nil');
    if (webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun')
      throw dryRunUnsupported(webhook.name);
  }
  const version = reviewVersion(webhook.admissionReviewVersions);
  if (version === undefined) {
    throw new CallingWebhookError(
      webhook.name,
      'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
    );
  }
  const uid = newReviewUid();
  const review = admissionReview(
    version,
    admissionRequest(uid, attrs, objects.type, objects.object, objects.oldObject),
  );
  const target = await targetOf(ctx, webhook);
  let body: unknown;
  try {
    body = await ctx.client.post(target, review, webhook.timeoutSeconds);
  } catch (err) {
    if (err instanceof WebhookCallError)
      throw new CallingWebhookError(webhook.name, `failed to call webhook: ${err.message}`);
    throw err;
  }
  let verified: VerifiedResponse;
  try {
    verified = verifyResponse(version, uid, webhook.mutating, body);
  } catch (err) {
    if (err instanceof UndecodableResponseError)
      throw new CallingWebhookError(webhook.name, `failed to call webhook: ${err.message}`);
    if (err instanceof InvalidResponseError)
      throw new CallingWebhookError(webhook.name, `received invalid webhook response: ${err.message}`);
    throw err;
  }
  for (const [k, v] of Object.entries(verified.auditAnnotations)) attrs.annotate(`${webhook.name}/${k}`, v);
  for (const w of verified.warnings) attrs.warn(w);
  return verified;
}
