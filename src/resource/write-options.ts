/**
 * The modifying query parameters every write shares, read once per request as kube-apiserver
 * reads them:
 *
 * - `dryRun`: only `All`; the request runs in full but nothing is written and no revision is
 *   consumed;
 * - `fieldManager`: the writer's name in `managedFields`; when absent, the User-Agent up to its
 *   first `/` (kube's `prefixFromUserAgent`); at most 128 bytes, printable; required for apply;
 * - `fieldValidation`: `Strict`, `Warn` (the default, as kube-apiserver 1.23+), `Ignore`;
 * - `force`: apply only.
 *
 * A bad value is kube's 422 `Invalid` on the verb's options kind (`PatchOptions.meta.k8s.io ""
 * is invalid: fieldManager: Required value: is required for apply patch`), not a 400.
 *
 * Warnings collected while serving the request (`Warning: 299 - "..."` headers) are pushed to
 * {@link WriteOptions.warnings}; the route writes them out.
 */
import { FIELD_MANAGER_MAX_LENGTH, defaultManagerName } from '../apply/index.js';
import { invalid } from '../api/errors.js';
import { SERVER_USER, type UserInfo } from '../api/user.js';
import {
  forbidden,
  invalid as fieldInvalid,
  notSupported,
  required,
  tooLong,
  type FieldError,
} from '../validation/field-error.js';
import { boolParam, param, type Query } from './query.js';

/** kube's `fieldValidation` directives. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The modifying parameters of one request. */
export interface WriteOptions {
  /** The field manager (`fieldManager`, else from the User-Agent; may be empty: recorded as `unknown`). */
  readonly manager: string;
  /** True when the client named the manager (`fieldManager` given): apply requires it. */
  readonly managerGiven: boolean;
  readonly dryRun: boolean;
  readonly fieldValidation: FieldValidation;
  readonly force: boolean;
  /** Warnings for the reply's `Warning` headers (the message only; the route adds `299 - "..."`). */
  readonly warnings: string[];
  /** The body's bytes when it was JSON or YAML, for the duplicate-key scan of field validation. */
  readonly rawBody?: RawBody;
  /** Who writes (admission plugins ask). */
  readonly user: UserInfo;
  /** Audit annotations admission plugins add while serving the request. */
  readonly auditAnnotations: Record<string, string>;
}

/** What a request contributes to its {@link WriteOptions} besides the query. */
export interface RequestFacts {
  readonly userAgent: string | undefined;
  /** The PATCH body's type: apply requires `fieldManager`; `force` is apply-only. */
  readonly patchType?: string;
  /** Where the request's warnings go (the route's list, written as headers). */
  readonly warnings: string[];
  /** The body's bytes (JSON or YAML), for duplicate-key detection. */
  readonly rawBody?: RawBody;
  readonly user: UserInfo;
  /** Where the request's audit annotations go. */
  readonly auditAnnotations: Record<string, string>;
}

/** A request body as received. */
export interface RawBody {
  readonly bytes: Buffer;
  /** True for YAML media types (YAML's duplicate messages differ). */
  readonly yaml: boolean;
}

/** The options of a write the server makes itself (bootstrap, controllers): manager `kube-apiserver`. */
export function serverWrite(): WriteOptions {
  return {
    manager: 'kube-apiserver',
    managerGiven: true,
    dryRun: false,
    fieldValidation: 'Ignore',
    force: false,
    warnings: [],
    user: SERVER_USER,
    auditAnnotations: {},
  };
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]*$/u;

/** Every value of `name` (fastify gives arrays for repeated keys). */
function values(query: Query, name: string): readonly string[] {
  const v = query[name];
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

/** The options kind kube validates per verb (its 422 names it). */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

/**
 * Reads the modifying parameters of a request and validates them as kube's
 * `Validate{Create,Update,Patch,Delete}Options` do.
 * @throws ApiError 422 `Invalid` (kind `<optionsKind>`, group meta.k8s.io) naming each bad
 *   parameter: an unsupported dryRun or fieldValidation, a bad fieldManager, `force` outside
 *   apply, apply without fieldManager.
 */
export function readWriteOptions(
  query: Query,
  optionsKind: OptionsKind,
  request: RequestFacts,
): WriteOptions {
  const { userAgent, patchType, warnings, rawBody } = request;
  const errs: FieldError[] = [];
  const dry = values(query, 'dryRun');
  if (dry.some((v) => v !== 'All')) errs.push(notSupported('dryRun', dry, ['All']));
  const validation = param(query, 'fieldValidation') ?? '';
  let fieldValidation: FieldValidation = 'Warn';
  if (validation === 'Strict' || validation === 'Ignore') fieldValidation = validation;
  else if (validation !== '' && validation !== 'Warn' && optionsKind !== 'DeleteOptions') {
    errs.push(notSupported('fieldValidation', validation, ['', 'Ignore', 'Warn', 'Strict']));
  }
  const given = param(query, 'fieldManager') ?? '';
  const apply = patchType === 'apply';
  if (apply && given === '') errs.push(required('fieldManager', 'is required for apply patch'));
  if (Buffer.byteLength(given, 'utf8') > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(tooLong('fieldManager', FIELD_MANAGER_MAX_LENGTH));
  } else if (!PRINTABLE.test(given)) {
    errs.push(fieldInvalid('fieldManager', given, 'must only contain printable characters'));
  }
  const forceGiven = param(query, 'force') !== undefined;
  if (forceGiven && !apply && optionsKind === 'PatchOptions') {
    errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  }
  if (errs.length > 0) throw invalid(optionsKind, 'meta.k8s.io', '', errs);
  return {
    manager: given !== '' ? given : defaultManagerName(userAgent),
    managerGiven: given !== '',
    dryRun: dry.length > 0,
    fieldValidation,
    force: apply && boolParam(query, 'force'),
    warnings,
    ...(rawBody === undefined ? {} : { rawBody }),
    user: request.user,
    auditAnnotations: request.auditAnnotations,
  };
}

/** The `Warning` header value of one message (RFC 7234 warn-code 299, agent `-`). */
export function warningHeader(message: string): string {
  return `299 - ${JSON.stringify(message)}`;
}
