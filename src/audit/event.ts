/**
 * The `audit.k8s.io/v1` Event as it goes on the wire (field order as kube's JSON), its
 * timestamps (MicroTime: RFC 3339 with microseconds, UTC) and the two log formats: `json` (one
 * Event per line) and `legacy` (kube's one-line `AUDIT:` text).
 */
import type { AuditLevel, AuditStage } from './policy.js';

/** `authentication.k8s.io/v1` UserInfo as audit writes it. */
export interface AuditUser {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The event's `objectRef`. */
export interface ObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The event's `responseStatus` (a `metav1.Status`). */
export interface ResponseStatus {
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly details?: unknown;
  readonly code: number;
}

/** One audit event, frozen at one stage (backends may hold it as long as they like). */
export interface AuditEvent {
  readonly kind: 'Event';
  readonly apiVersion: string;
  readonly level: AuditLevel;
  readonly auditID: string;
  readonly stage: AuditStage;
  readonly requestURI: string;
  readonly verb: string;
  readonly user: AuditUser;
  readonly impersonatedUser?: AuditUser;
  readonly sourceIPs?: readonly string[];
  readonly userAgent?: string;
  readonly objectRef?: ObjectRef;
  readonly responseStatus?: ResponseStatus;
  readonly requestObject?: unknown;
  readonly responseObject?: unknown;
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The group/version every event is written in. */
export const AUDIT_API_VERSION = 'audit.k8s.io/v1';

/**
 * A MicroTime clock (`2024-05-01T10:00:00.123456Z`). It keeps the date-and-second part of the
 * last string it made: every event needs two or three, and within a second only the fraction
 * changes. One per auditor.
 */
export class MicroClock {
  #second = -1;
  #prefix = '';

  /** The current time. */
  now(): string {
    return this.format(Math.floor((performance.timeOrigin + performance.now()) * 1000));
  }

  /** `micros` (since the epoch). */
  format(micros: number): string {
    const second = Math.floor(micros / 1_000_000);
    if (second !== this.#second) {
      this.#prefix = new Date(second * 1000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
      this.#second = second;
    }
    return `${this.#prefix}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
  }
}

/** A copy of a map with its keys sorted, as Go's JSON encoder writes maps. */
export function sortedMap<T>(map: Readonly<Record<string, T>>): Record<string, T> {
  const keys = Object.keys(map);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = (keys[i - 1] as string) < (keys[i] as string);
  if (sorted) return { ...map };
  // fromEntries defines the keys (a `__proto__` key stays a key).
  return Object.fromEntries(keys.sort().map((k) => [k, map[k] as T]));
}

/** A string JSON.stringify would write as it is, between quotes (no escapes, no lone surrogates). */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function str(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * Where an audit user keeps its JSON text once a line has written it: a symbol key, set
 * non-enumerable, so that neither JSON nor object comparisons see it.
 */
const USER_JSON = Symbol('auditUserJson');

/** `u`'s JSON text, made once per user object (the auditor shares one across requests). */
function userJson(u: AuditUser): string {
  const kept = (u as { readonly [USER_JSON]?: string })[USER_JSON];
  if (kept !== undefined) return kept;
  const json = JSON.stringify(u);
  Object.defineProperty(u, USER_JSON, { value: json });
  return json;
}

/**
 * One `json`-format line (with its newline): byte for byte what `JSON.stringify(event)` writes,
 * at about a third of its cost: the event's shape is known, most of its strings need no
 * escaping, and a user's JSON (the largest part of a Metadata event) is made once per user
 * object, which the auditor shares across the requests of one authenticated user.
 */
export function jsonLine(ev: AuditEvent): string {
  let s =
    `{"kind":"Event","apiVersion":${str(ev.apiVersion)},"level":"${ev.level}","auditID":${str(ev.auditID)}` +
    `,"stage":"${ev.stage}","requestURI":${str(ev.requestURI)},"verb":${str(ev.verb)},"user":${userJson(ev.user)}`;
  if (ev.impersonatedUser !== undefined) s += `,"impersonatedUser":${JSON.stringify(ev.impersonatedUser)}`;
  if (ev.sourceIPs !== undefined) {
    let ips = '';
    for (const ip of ev.sourceIPs) ips += ips === '' ? str(ip) : `,${str(ip)}`;
    s += `,"sourceIPs":[${ips}]`;
  }
  if (ev.userAgent !== undefined) s += `,"userAgent":${str(ev.userAgent)}`;
  const ref = ev.objectRef;
  if (ref !== undefined) {
    let o = '';
    for (const [k, v] of Object.entries(ref) as [string, string | undefined][])
      if (v !== undefined) o += `${o === '' ? '' : ','}${str(k)}:${str(v)}`;
    s += `,"objectRef":{${o}}`;
  }
  if (ev.responseStatus !== undefined) s += `,"responseStatus":${JSON.stringify(ev.responseStatus)}`;
  if (ev.requestObject !== undefined) s += `,"requestObject":${JSON.stringify(ev.requestObject)}`;
  if (ev.responseObject !== undefined) s += `,"responseObject":${JSON.stringify(ev.responseObject)}`;
  s += `,"requestReceivedTimestamp":${str(ev.requestReceivedTimestamp)},"stageTimestamp":${str(ev.stageTimestamp)}`;
  if (ev.annotations !== undefined) s += `,"annotations":${JSON.stringify(ev.annotations)}`;
  return `${s}}\n`;
}

function quoteList(list: readonly string[]): string {
  return list.map((s) => JSON.stringify(s)).join(',');
}

/** A Go `%q` rendering (close enough: JSON string quoting). */
function q(s: string): string {
  return JSON.stringify(s);
}

/** One `legacy`-format line (kube's `EventString`, with its newline). */
export function legacyLine(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if ((ev.user.username ?? '') !== '') {
    username = ev.user.username ?? '';
    if ((ev.user.groups?.length ?? 0) > 0) groups = quoteList(ev.user.groups ?? []);
  }
  let asuser = '<self>';
  let asgroups = '<lookup>';
  if (ev.impersonatedUser !== undefined) {
    asuser = ev.impersonatedUser.username ?? '';
    if (ev.impersonatedUser.groups !== undefined) asgroups = quoteList(ev.impersonatedUser.groups);
  }
  const namespace = (ev.objectRef?.namespace ?? '') === '' ? '<none>' : (ev.objectRef?.namespace ?? '');
  const response = ev.responseStatus === undefined ? '<deferred>' : String(ev.responseStatus.code);
  const ip = ev.sourceIPs?.[0] ?? '<unknown>';
  return (
    `${rfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} ` +
    `method=${q(ev.verb)} user=${q(username)} groups=${q(groups)} as=${q(asuser)} asgroups=${q(asgroups)} ` +
    `user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"\n`
  );
}

/** Go's RFC3339Nano drops trailing zeros of the fraction. */
function rfc3339Nano(micro: string): string {
  return micro.replace(/\.?0+Z$/, 'Z');
}
