/**
 * `--authorization-config`: kube-apiserver's structured AuthorizationConfiguration
 * (apiserver.config.k8s.io v1, v1beta1, v1alpha1), an ordered list of authorizers. Loading decodes
 * strictly (unknown fields are errors), applies kube's defaults (authorizedTTL 5m,
 * unauthorizedTTL 30s, both caches on) and validates with kube's field errors, joined as kube
 * joins them (`[a, b]` for more than one). Webhook `matchConditions` are compiled here (CEL on
 * `request`, the SubjectAccessReview v1 spec; src/cel/authorization.ts) and run by the webhook
 * authorizer before each call.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { statSync } from 'node:fs';
import { parse } from 'yaml';
import { AuthorizationConditions } from '../cel/authorization.js';
import { DurationError, parseDuration } from '../flags/duration.js';
import { isDNS1123Subdomain } from '../validation/formats.js';

const GROUP = 'apiserver.config.k8s.io';
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];
/** Authorizer types kube-apiserver accepts in the file. */
export const AUTHORIZER_TYPES = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const;
const REPEATABLE = new Set(['Webhook']);

/** One webhook's settings, defaulted and validated. */
export interface WebhookSettings {
  readonly timeoutMs: number;
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
  readonly cacheAuthorizedRequests: boolean;
  readonly cacheUnauthorizedRequests: boolean;
  /** `v1` or `v1beta1`. */
  readonly subjectAccessReviewVersion: string;
  readonly failurePolicy: 'NoOpinion' | 'Deny';
  readonly connectionInfo:
    | { readonly type: 'KubeConfigFile'; readonly kubeConfigFile: string }
    | { readonly type: 'InClusterConfig' };
  /** The compiled `matchConditions` (undefined: none, the webhook is always asked). */
  readonly matchConditions?: AuthorizationConditions;
}

/** One entry of `authorizers`. */
export interface AuthorizerEntry {
  readonly type: (typeof AUTHORIZER_TYPES)[number];
  readonly name: string;
  readonly webhook?: WebhookSettings;
}

/** A loaded AuthorizationConfiguration. */
export interface AuthorizationConfig {
  readonly authorizers: readonly AuthorizerEntry[];
}

/** The file cannot be used; the message is kube-apiserver's. */
export class AuthorizationConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizationConfigError';
  }
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const q = (s: string): string => JSON.stringify(s);

const TOP_FIELDS = new Set(['apiVersion', 'kind', 'authorizers']);
const AUTHORIZER_FIELDS = new Set(['type', 'name', 'webhook']);
const WEBHOOK_FIELDS = new Set([
  'timeout',
  'authorizedTTL',
  'unauthorizedTTL',
  'cacheAuthorizedRequests',
  'cacheUnauthorizedRequests',
  'subjectAccessReviewVersion',
  'matchConditionSubjectAccessReviewVersion',
  'failurePolicy',
  'connectionInfo',
  'matchConditions',
]);
const CONNECTION_FIELDS = new Set(['type', 'kubeConfigFile']);

/** Strict decoding: the first unknown field, as `authorizers[0].foo`. */
function unknownField(doc: Json): string | undefined {
  const extra = (o: Json, known: Set<string>, at: string): string | undefined => {
    const k = Object.keys(o).find((key) => !known.has(key));
    return k === undefined ? undefined : `${at}${k}`;
  };
  const top = extra(doc, TOP_FIELDS, '');
  if (top !== undefined) return top;
  const list = Array.isArray(doc['authorizers']) ? (doc['authorizers'] as unknown[]) : [];
  for (const [i, a] of list.entries()) {
    if (!isObj(a)) continue;
    const at = `authorizers[${i}].`;
    const e = extra(a, AUTHORIZER_FIELDS, at);
    if (e !== undefined) return e;
    if (!isObj(a['webhook'])) continue;
    const w = a['webhook'];
    const we = extra(w, WEBHOOK_FIELDS, `${at}webhook.`);
    if (we !== undefined) return we;
    if (isObj(w['connectionInfo'])) {
      const ce = extra(w['connectionInfo'], CONNECTION_FIELDS, `${at}webhook.connectionInfo.`);
      if (ce !== undefined) return ce;
    }
  }
  return undefined;
}

/** Decodes the document's kind and version, or throws kube's load error. */
function decode(text: string): Json {
  const fail = (m: string): never => {
    throw new AuthorizationConfigError(`failed to load AuthorizationConfiguration from file: ${m}`);
  };
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return fail(`couldn't get version/kind; json parse error: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObj(doc)) return fail("couldn't get version/kind; json parse error: not an object");
  const apiVersion = typeof doc['apiVersion'] === 'string' ? doc['apiVersion'] : '';
  const kind = typeof doc['kind'] === 'string' ? doc['kind'] : '';
  if (apiVersion === '') return fail(`Object 'apiVersion' is missing in '${text.trim()}'`);
  if (kind === '') return fail(`Object 'Kind' is missing in '${text.trim()}'`);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  if (group !== GROUP || !VERSIONS.includes(version ?? '') || kind !== 'AuthorizationConfiguration') {
    fail(
      `no kind ${q(kind)} is registered for version ${q(apiVersion)} in scheme "pkg/runtime/scheme.go:110"`,
    );
  }
  const unknown = unknownField(doc);
  if (unknown !== undefined) fail(`strict decoding error: unknown field ${q(unknown)}`);
  return doc;
}

/** A Go duration field: undefined when absent, milliseconds otherwise. */
function duration(w: Json, field: string, at: string): number | undefined {
  const v = w[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    throw new AuthorizationConfigError(
      `failed to load AuthorizationConfiguration from file: ${at}${field}: invalid duration ${JSON.stringify(v)}`,
    );
  }
  try {
    return parseDuration(v);
  } catch (err) {
    const message = err instanceof DurationError ? err.message : String(err);
    throw new AuthorizationConfigError(`failed to load AuthorizationConfiguration from file: ${message}`);
  }
}

/** Go's `Duration.String` for the few values an error shows. */
function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(9))}s`;
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}`;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function validateWebhook(w: Json, at: string, errs: string[]): WebhookSettings | undefined {
  const before = errs.length;
  const timeoutMs = duration(w, 'timeout', `${at}webhook.`) ?? 0;
  if (timeoutMs === 0) errs.push(`${at}timeout: Required value`);
  else if (timeoutMs > 30_000 || timeoutMs < 0) {
    errs.push(`${at}timeout: Invalid value: ${q(goDuration(timeoutMs))}: must be > 0s and <= 30s`);
  }
  // v1's defaults, applied before validation as the decoder does.
  const authorizedTtlMs = duration(w, 'authorizedTTL', `${at}webhook.`) ?? 300_000;
  const unauthorizedTtlMs = duration(w, 'unauthorizedTTL', `${at}webhook.`) ?? 30_000;
  for (const [field, ms] of [
    ['authorizedTTL', authorizedTtlMs],
    ['unauthorizedTTL', unauthorizedTtlMs],
  ] as const) {
    if (ms === 0) errs.push(`${at}${field}: Required value`);
    else if (ms < 0) errs.push(`${at}${field}: Invalid value: ${q(goDuration(ms))}: must be > 0s`);
  }
  const version = str(w['subjectAccessReviewVersion']);
  if (version === '') errs.push(`${at}subjectAccessReviewVersion: Required value`);
  else if (version !== 'v1' && version !== 'v1beta1') {
    errs.push(
      `${at}subjectAccessReviewVersion: Unsupported value: ${q(version)}: supported values: "v1", "v1beta1"`,
    );
  }
  const conditions = Array.isArray(w['matchConditions']) ? (w['matchConditions'] as unknown[]) : [];
  const mcVersion = str(w['matchConditionSubjectAccessReviewVersion']);
  if (mcVersion === '' && conditions.length > 0) {
    errs.push(
      `${at}matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified`,
    );
  } else if (mcVersion !== '' && mcVersion !== 'v1') {
    errs.push(
      `${at}matchConditionSubjectAccessReviewVersion: Unsupported value: ${q(mcVersion)}: supported values: "v1"`,
    );
  }
  const failurePolicy = str(w['failurePolicy']);
  if (failurePolicy === '') errs.push(`${at}failurePolicy: Required value`);
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny') {
    errs.push(
      `${at}failurePolicy: Unsupported value: ${q(failurePolicy)}: supported values: "NoOpinion", "Deny"`,
    );
  }
  const conn = isObj(w['connectionInfo']) ? w['connectionInfo'] : {};
  const connType = str(conn['type']);
  const file = conn['kubeConfigFile'];
  const fileAt = `${at}connectionInfo.kubeConfigFile`;
  let connectionInfo: WebhookSettings['connectionInfo'] | undefined;
  if (connType === '') errs.push(`${at}connectionInfo.type: Required value`);
  else if (connType === 'InClusterConfig') {
    if (file !== undefined && file !== null) {
      errs.push(`${fileAt}: Invalid value: ${q(str(file))}: can only be set when type=KubeConfigFile`);
    } else connectionInfo = { type: 'InClusterConfig' };
  } else if (connType === 'KubeConfigFile') {
    const path = str(file);
    if (path === '') errs.push(`${fileAt}: Required value`);
    else if (!isAbsolute(path)) errs.push(`${fileAt}: Invalid value: ${q(path)}: must be an absolute path`);
    else {
      try {
        if (!statSync(path).isFile())
          errs.push(`${fileAt}: Invalid value: ${q(path)}: must be a regular file`);
        else connectionInfo = { type: 'KubeConfigFile', kubeConfigFile: path };
      } catch {
        errs.push(
          `${fileAt}: Invalid value: ${q(path)}: error loading file: stat ${path}: no such file or directory`,
        );
      }
    }
  } else {
    errs.push(
      `${at}connectionInfo.type: Unsupported value: ${q(connType)}: supported values: "InClusterConfig", "KubeConfigFile"`,
    );
  }
  let matchConditions: AuthorizationConditions | undefined;
  if (conditions.length > 0) {
    const expressions = conditions.map((c) => (isObj(c) ? str(c['expression']) : ''));
    const compiled = AuthorizationConditions.compile(expressions);
    if ('errors' in compiled) for (const e of compiled.errors) errs.push(`${at}${e.field}: ${e.message}`);
    else matchConditions = compiled.conditions;
  }
  if (errs.length !== before || connectionInfo === undefined) return undefined;
  return {
    timeoutMs,
    authorizedTtlMs,
    unauthorizedTtlMs,
    cacheAuthorizedRequests: w['cacheAuthorizedRequests'] !== false,
    cacheUnauthorizedRequests: w['cacheUnauthorizedRequests'] !== false,
    subjectAccessReviewVersion: version,
    failurePolicy: failurePolicy as 'NoOpinion' | 'Deny',
    connectionInfo,
    ...(matchConditions === undefined ? {} : { matchConditions }),
  };
}

/** Validates a decoded document (kube's ValidateAuthorizationConfiguration and its name rule). */
export function validateAuthorizationConfig(doc: Json): AuthorizationConfig {
  const errs: string[] = [];
  const list = Array.isArray(doc['authorizers']) ? (doc['authorizers'] as unknown[]) : [];
  if (list.length === 0)
    errs.push('authorizers: Required value: at least one authorization mode must be defined');
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  const out: AuthorizerEntry[] = [];
  for (const [i, raw] of list.entries()) {
    const a = isObj(raw) ? raw : {};
    const at = `authorizers[${i}].`;
    const type = str(a['type']);
    if (type === '') {
      errs.push(`${at}type: Required value`);
      continue;
    }
    if (!(AUTHORIZER_TYPES as readonly string[]).includes(type)) {
      errs.push(
        `${at}type: Unsupported value: ${q(type)}: supported values: ${AUTHORIZER_TYPES.map(q).join(', ')}`,
      );
      continue;
    }
    if (seenTypes.has(type) && !REPEATABLE.has(type)) {
      errs.push(`${at}type: Duplicate value: ${q(type)}`);
      continue;
    }
    seenTypes.add(type);
    const name = str(a['name']);
    if (name === '') errs.push(`${at}name: Required value`);
    else if (seenNames.has(name)) errs.push(`${at}name: Duplicate value: ${q(name)}`);
    else {
      const bad = isDNS1123Subdomain(name);
      if (bad.length > 0)
        errs.push(`${at}name: Invalid value: ${q(name)}: authorizer name is invalid: ${bad.join(', ')}`);
    }
    seenNames.add(name);
    const hook = a['webhook'];
    const hasHook = hook !== undefined && hook !== null;
    if (type === 'Webhook') {
      if (!hasHook) {
        errs.push(`${at}webhook: Required value: required when type=Webhook`);
        continue;
      }
      const webhook = validateWebhook(isObj(hook) ? hook : {}, at, errs);
      if (webhook !== undefined) out.push({ type, name, webhook });
      continue;
    }
    if (hasHook)
      errs.push(`${at}webhook: Invalid value: "non-null": may only be specified when type=Webhook`);
    out.push({ type: type as AuthorizerEntry['type'], name });
  }
  if (errs.length === 1) throw new AuthorizationConfigError(errs[0] as string);
  if (errs.length > 1) throw new AuthorizationConfigError(`[${errs.join(', ')}]`);
  // Authorizers other than webhooks carry their type's name in lower case.
  for (const e of out) {
    const want = e.type.toLowerCase();
    if (e.type !== 'Webhook' && e.name !== want) {
      throw new AuthorizationConfigError(
        `expected name ${want} for authorizer ${e.type} instead of ${e.name}`,
      );
    }
  }
  return { authorizers: out };
}

/** Reads, decodes and validates the file. @throws AuthorizationConfigError */
export function loadAuthorizationConfig(path: string): AuthorizationConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AuthorizationConfigError(
      code === 'ENOENT'
        ? `open ${path}: no such file or directory`
        : `open ${path}: ${(err as Error).message}`,
    );
  }
  return validateAuthorizationConfig(decode(text));
}

/** The authorization modes a configuration enables, in order (for what depends on the mode list). */
export function modesOf(config: AuthorizationConfig): string[] {
  return config.authorizers.map((a) => a.type);
}
