/**
 * API errors: every failure a client sees is one of these, turned into a Kubernetes `Status` body
 * in exactly one place (the fastify error handler). Each reason fixes its HTTP status code, as
 * kube-apiserver's `StatusReason` table does. Tests assert `reason` and `code`, not messages.
 */

/** Kubernetes `StatusReason` values and their HTTP codes. */
export const REASON_CODES = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
} as const;

export type StatusReason = keyof typeof REASON_CODES;

/** One cause in `details.causes`, e.g. a field that failed validation. */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** `details` of a Status. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** `metadata` of a Status (a ListMeta; only `continue` is ever set on a failure). */
export interface StatusMetadata {
  /** On a 410 for an expired continue token: kube's token that lists the rest at the latest revision. */
  readonly continue?: string;
}

/** The wire shape of a failure `Status`. */
export interface StatusBody {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: StatusMetadata;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** An error that reaches the client as a `Status` with a fixed reason and code. */
export class ApiError extends Error {
  readonly code: number;
  /** The Status's `metadata` (empty unless a continue token is handed back). */
  readonly metadata: StatusMetadata;
  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    options?: { cause?: unknown; code?: number; metadata?: StatusMetadata },
  ) {
    super(message, options);
    this.name = 'ApiError';
    this.code = options?.code ?? REASON_CODES[reason];
    this.metadata = options?.metadata ?? {};
  }

  /** The `Status` body for this error. */
  toStatus(): StatusBody {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.metadata,
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

/** Identifies the object an error is about, as kube-apiserver names it in messages. */
export interface Qualified {
  /** Resource (plural) and group, e.g. `deployments` / `apps`; message form `deployments.apps`. */
  readonly resource: string;
  readonly group: string;
  readonly name: string;
}

function qualifiedResource(q: Pick<Qualified, 'resource' | 'group'>): string {
  return q.group === '' ? q.resource : `${q.resource}.${q.group}`;
}

export function notFound(q: Qualified): ApiError {
  return new ApiError('NotFound', `${qualifiedResource(q)} "${q.name}" not found`, {
    name: q.name,
    ...(q.group === '' ? {} : { group: q.group }),
    kind: q.resource,
  });
}

export function alreadyExists(q: Qualified): ApiError {
  return new ApiError('AlreadyExists', `${qualifiedResource(q)} "${q.name}" already exists`, {
    name: q.name,
    ...(q.group === '' ? {} : { group: q.group }),
    kind: q.resource,
  });
}

/** An optimistic-concurrency failure (stale resourceVersion). */
export function conflict(q: Qualified, why: string): ApiError {
  return new ApiError(
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(q)} "${q.name}": ${why}`,
    { name: q.name, ...(q.group === '' ? {} : { group: q.group }), kind: q.resource },
  );
}

/**
 * A validation failure: 422 with one cause per offending field. The message lists them as kube's
 * error aggregate does: one alone, several (duplicates dropped) in brackets.
 */
export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: readonly { field: string; message: string; reason?: string }[],
): ApiError {
  const distinct = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const summary = distinct.length === 1 ? (distinct[0] ?? '') : `[${distinct.join(', ')}]`;
  return new ApiError(
    'Invalid',
    `${kind}${group === '' ? '' : `.${group}`} "${name}" is invalid: ${summary}`,
    {
      name,
      ...(group === '' ? {} : { group }),
      kind,
      causes: causes.map((c) => ({
        reason: c.reason ?? 'FieldValueInvalid',
        message: c.message,
        field: c.field,
      })),
    },
  );
}

export function badRequest(message: string, causes?: readonly StatusCause[]): ApiError {
  return new ApiError('BadRequest', message, causes === undefined ? undefined : { causes });
}

export function forbidden(message: string, details?: StatusDetails): ApiError {
  return new ApiError('Forbidden', message, details);
}

/** 405; kube's Status carries `details`, empty (`{}`) for a method a route does not take. */
export function methodNotAllowed(message: string, details: StatusDetails = {}): ApiError {
  return new ApiError('MethodNotAllowed', message, details);
}

export function notAcceptable(message: string): ApiError {
  return new ApiError('NotAcceptable', message);
}

/** Kube's 415 for a body whose media type is not an object format (kube's NegotiateInputSerializer). */
export function unsupportedMediaType(): ApiError {
  return new ApiError(
    'UnsupportedMediaType',
    'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  );
}

/** 413 for a body over the limit, with kube-apiserver's message (`limitedReadBody`). */
export function requestEntityTooLarge(limitBytes: number): ApiError {
  return new ApiError('RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`);
}

/** 410 for a resourceVersion older than retained history (reason Expired, as kube-apiserver). */
export function expired(message: string, metadata?: StatusMetadata): ApiError {
  return new ApiError('Expired', message, undefined, metadata === undefined ? undefined : { metadata });
}

/**
 * 504 for a resourceVersion the server has not reached in time, in kube's words (its timeout
 * error prefixes `Timeout: `).
 */
export function tooLargeResourceVersion(requested: bigint, current: bigint): ApiError {
  return new ApiError('Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function internalError(message = 'an internal error occurred'): ApiError {
  // kube's NewInternalError: the error again as the one cause, without field or reason.
  return new ApiError('InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function serviceUnavailable(message: string): ApiError {
  return new ApiError('ServiceUnavailable', message);
}
