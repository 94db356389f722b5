/**
 * Typed API errors: a response with a failure `Status` (or any non-2xx) becomes an
 * {@link ApiStatusError} carrying the HTTP code, the Status `reason` and the whole body. Callers
 * classify with the `is*` predicates, which look at `reason` and `code`, never at messages.
 */
import type { Status } from '../api/types/meta-v1.js';

/** A non-2xx response from the API server (or a watch `ERROR` event). */
export class ApiStatusError extends Error {
  /** HTTP status code (the Status `code` for watch errors). */
  readonly code: number;
  /** The Status `reason` (`NotFound`, `AlreadyExists`, `Conflict`, ...); '' when the body had none. */
  readonly reason: string;
  /** The Status body as sent; a synthesized one when the body was not a Status. */
  readonly status: Status;

  constructor(code: number, status: Status, context?: string) {
    const msg = status.message ?? `HTTP ${code}`;
    super(context === undefined ? msg : `${context}: ${msg}`);
    this.name = 'ApiStatusError';
    this.code = code;
    this.reason = status.reason ?? '';
    this.status = status;
  }

  /**
   * The error of a response with status `code` and body `body`: its Status when the body is
   * one, else a Status synthesized from the code and up to 512 bytes of the body.
   */
  static fromResponse(code: number, body: Buffer, context?: string): ApiStatusError {
    let status: Status | undefined;
    if (body.length > 0 && body[0] === 0x7b) {
      try {
        const parsed = JSON.parse(body.toString('utf8')) as Status;
        if (parsed.kind === 'Status') status = parsed;
      } catch {
        // not JSON: synthesized below
      }
    }
    status ??= {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason: reasonOfCode(code),
      message: body.length > 0 ? body.subarray(0, 512).toString('utf8') : `HTTP ${code}`,
    };
    return new ApiStatusError(status.code ?? code, status, context);
  }
}

/** The reason client-go infers for a bare status code (`errors.NewGenericServerResponse`). */
function reasonOfCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return '';
  }
}

function asStatusError(err: unknown): ApiStatusError | undefined {
  return err instanceof ApiStatusError ? err : undefined;
}

/** 404 NotFound. */
export function isNotFound(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'NotFound' || (e.reason === '' && e.code === 404));
}

/** 409 AlreadyExists (a create of an existing name). */
export function isAlreadyExists(err: unknown): boolean {
  return asStatusError(err)?.reason === 'AlreadyExists';
}

/** 409 Conflict (a stale resourceVersion or precondition on update/delete). */
export function isConflict(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'Conflict' || (e.reason === '' && e.code === 409));
}

/** 410 Gone or Expired: the resourceVersion (or continue token) is too old; relist. */
export function isGone(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'Gone' || e.reason === 'Expired' || e.code === 410);
}

/** 429 TooManyRequests (API priority and fairness, or eviction blocked by a PDB). */
export function isTooManyRequests(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'TooManyRequests' || e.code === 429);
}

/** 403 Forbidden. */
export function isForbidden(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'Forbidden' || (e.reason === '' && e.code === 403));
}

/** 422 Invalid (validation failed; `status.details.causes` names the fields). */
export function isInvalid(err: unknown): boolean {
  const e = asStatusError(err);
  return e !== undefined && (e.reason === 'Invalid' || (e.reason === '' && e.code === 422));
}
