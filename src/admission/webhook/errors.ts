/**
 * The errors of webhook admission, worded as kube's: a webhook that could not be called or gave
 * a bad answer ({@link CallingWebhookError}: `failed calling webhook "x": ...`, a 500 when the
 * webhook fails closed), a denial (`admission webhook "x" denied the request: ...` with the
 * webhook's code, at least 400), a dry run a webhook with side effects cannot take (400), and the
 * 403 of a request the plugin cannot judge yet.
 */
import {
  ApiError,
  badRequest,
  internalError,
  type StatusDetails,
  type StatusReason,
} from '../../api/errors.js';
import type { JsonObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';
import type { AdmissionAttributes } from '../types.js';

/** A webhook could not be called or answered badly; its failurePolicy decides. */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhook: string,
    reason: string,
  ) {
    super(`failed calling webhook ${JSON.stringify(webhook)}: ${reason}`);
    this.name = 'CallingWebhookError';
  }

  /** The error a failing-closed webhook gives the client (kube: `NewInternalError`). */
  toApiError(): ApiError {
    return internalError(this.message);
  }
}

/** A webhook's denial as the client sees it (kube's `ToStatusErr`). */
export function deniedError(webhook: string, result: JsonObject | undefined): ApiError {
  const status = result ?? {};
  const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const message = typeof status['message'] === 'string' ? status['message'] : '';
  const reason = typeof status['reason'] === 'string' ? status['reason'] : '';
  const text =
    message !== ''
      ? `${deniedBy}: ${message}`
      : reason !== ''
        ? `${deniedBy}: ${reason}`
        : `${deniedBy} without explanation`;
  const rawCode = typeof status['code'] === 'number' ? Math.trunc(status['code']) : 0;
  const code = rawCode < 400 ? 400 : rawCode;
  const details = isJsonObject(status['details']) ? (status['details'] as StatusDetails) : undefined;
  // The webhook's reason is passed through as kube does, even when it is not one of the known ones.
  return new ApiError(reason as StatusReason, text, details, { code });
}

/** A dry run reaching a webhook with side effects (kube's `NewDryRunUnsupportedErr`). */
export function dryRunUnsupported(webhook: string): ApiError {
  return badRequest(`admission webhook ${JSON.stringify(webhook)} does not support dry run`);
}

/** kube's `admission.NewForbidden(attrs, err)`: `<resource> "<name>" is forbidden: <why>`. */
export function admissionForbidden(attrs: AdmissionAttributes, why: string): ApiError {
  const t = attrs.type;
  const resource = t.group === '' ? t.plural : `${t.plural}.${t.group}`;
  const message =
    attrs.name === ''
      ? `${resource} is forbidden: ${why}`
      : `${resource} "${attrs.name}" is forbidden: ${why}`;
  return new ApiError('Forbidden', message, {
    ...(attrs.name === '' ? {} : { name: attrs.name }),
    group: t.group,
    kind: t.plural,
  });
}
