/**
 * One request's audit record while it is served (kube's `AuditContext`): the event fields known
 * so far, and {@link RequestAudit.snapshot} to freeze them at a stage. Metadata comes from the
 * request info and the authenticated user; the request object from the parsed body; the
 * response status and object from the reply's payload.
 */
import type { FastifyRequest } from 'fastify';
import type { UserInfo } from '../api/user.js';
import {
  AUDIT_API_VERSION,
  type MicroClock,
  sortedMap,
  type AuditEvent,
  type AuditUser,
  type ObjectRef,
  type ResponseStatus,
} from './event.js';
import { levelRank, type AuditStage, type RequestAuditConfig } from './policy.js';

const MAX_USER_AGENT = 1024;

/** kube's audit form of a user (`authentication.k8s.io/v1` UserInfo, empty fields omitted). */
export function auditUser(user: UserInfo): AuditUser {
  const extraKeys = Object.keys(user.extra);
  return {
    username: user.name,
    ...(user.uid === '' ? {} : { uid: user.uid }),
    ...(user.groups.length === 0 ? {} : { groups: user.groups }),
    ...(extraKeys.length === 0 ? {} : { extra: sortedMap(user.extra) }),
  };
}

function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

function isIp(s: string): boolean {
  return /^[0-9.]+$/.test(s) ? s.split('.').length === 4 : s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s);
}

/**
 * Peer addresses cached per connection (HTTP/2 session or socket): reaching the socket through
 * HTTP/2's compatibility proxy costs more than the rest of the event. One per auditor.
 */
export type PeerCache = WeakMap<object, string>;

/**
 * Audit users cached per authenticated user object (authentication shares one across the
 * requests of a connection), so that each is built once and its JSON text, which the `json` log
 * format keeps on it (src/audit/event.ts), is made once. One per auditor.
 */
export type UserCache = WeakMap<UserInfo, AuditUser>;

function cachedAuditUser(user: UserInfo, users: UserCache): AuditUser {
  let out = users.get(user);
  if (out === undefined) {
    out = auditUser(user);
    users.set(user, out);
  }
  return out;
}

function peerOf(request: FastifyRequest, peers: PeerCache): string | undefined {
  const raw = request.raw as { stream?: { session?: object }; socket?: { remoteAddress?: string } | null };
  const key = raw.stream?.session ?? raw.socket ?? undefined;
  if (key === undefined || key === null) return undefined;
  let ip = peers.get(key);
  if (ip === undefined) {
    const remote = raw.socket?.remoteAddress;
    if (remote === undefined) return undefined;
    ip = normalizeIp(remote);
    peers.set(key, ip);
  }
  return ip;
}

/** kube's `SourceIPs`: X-Forwarded-For's addresses, X-Real-Ip, then the peer (not repeated). */
export function sourceIPs(request: FastifyRequest, peers: PeerCache): string[] {
  const out: string[] = [];
  const fwd = request.headers['x-forwarded-for'];
  const fwdText = Array.isArray(fwd) ? fwd.join(',') : fwd;
  if (fwdText !== undefined && fwdText !== '') {
    for (const part of fwdText.split(',')) {
      const ip = part.trim();
      if (isIp(ip)) out.push(normalizeIp(ip));
    }
  }
  const real = request.headers['x-real-ip'];
  if (typeof real === 'string' && isIp(real.trim())) {
    const ip = normalizeIp(real.trim());
    if (!out.includes(ip)) out.push(ip);
  }
  const ip = peerOf(request, peers);
  if (ip !== undefined && (out.length === 0 || out[out.length - 1] !== ip)) out.push(ip);
  return out;
}

/** Drops `metadata.managedFields` from an object, a list's items or a Table's row objects. */
export function withoutManagedFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  let out = obj;
  const meta = obj['metadata'];
  if (meta !== null && typeof meta === 'object' && 'managedFields' in meta) {
    const { managedFields: _m, ...rest } = meta as Record<string, unknown>;
    out = { ...out, metadata: rest };
  }
  if (Array.isArray(obj['items']))
    out = { ...out, items: (obj['items'] as unknown[]).map(withoutManagedFields) };
  if (obj['kind'] === 'Table' && Array.isArray(obj['rows'])) {
    out = {
      ...out,
      rows: (obj['rows'] as Record<string, unknown>[]).map((r) =>
        r !== null && typeof r === 'object' && 'object' in r
          ? { ...r, object: withoutManagedFields(r['object']) }
          : r,
      ),
    };
  }
  return out;
}

/** The audit record of one request. */
export class RequestAudit {
  readonly config: RequestAuditConfig;
  readonly auditID: string;
  readonly requestURI: string;
  readonly verb: string;
  /** The authenticated user (impersonation may replace `request.user` later). */
  readonly authenticated: UserInfo | undefined;
  readonly user: AuditUser;
  readonly sourceIPs: readonly string[];
  readonly userAgent: string | undefined;
  readonly received: string;
  readonly longRunning: boolean;
  objectRef: ObjectRef | undefined;
  impersonatedUser: AuditUser | undefined;
  responseStatus: ResponseStatus | undefined;
  requestObject: unknown;
  responseObject: unknown;
  /** Set by the first ResponseStarted / final stage, so each is sent once. */
  started = false;
  completed = false;
  /** An unexpected error the handler threw (kube's panic): the event ends at stage Panic. */
  panic: Error | undefined;

  readonly #clock: MicroClock;

  constructor(
    request: FastifyRequest,
    config: RequestAuditConfig,
    auditID: string,
    longRunning: boolean,
    env: { readonly clock: MicroClock; readonly peers: PeerCache; readonly users: UserCache },
  ) {
    this.#clock = env.clock;
    this.config = config;
    this.auditID = auditID;
    this.longRunning = longRunning;
    const info = request.requestInfo;
    this.requestURI = request.raw.url ?? request.url;
    this.verb = info.verb;
    const user = request.user as UserInfo | null;
    this.authenticated = user ?? undefined;
    this.user = user === null ? {} : cachedAuditUser(user, env.users);
    this.sourceIPs = sourceIPs(request, env.peers);
    const ua = request.headers['user-agent'];
    this.userAgent =
      ua === undefined || ua === ''
        ? undefined
        : ua.length > MAX_USER_AGENT
          ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED`
          : ua;
    this.received = env.clock.now();
    this.objectRef = info.isResourceRequest
      ? {
          resource: info.resource,
          namespace: info.namespace,
          name: info.name,
          apiGroup: info.apiGroup,
          apiVersion: info.apiVersion,
          subresource: info.subresource,
        }
      : undefined;
  }

  /** Notes the request body (kube's `LogRequestObject` / `LogRequestPatch`). */
  logRequestBody(value: unknown, isPatch: boolean): void {
    if (value === undefined || value === null || typeof value !== 'object') return;
    const ref = this.objectRef;
    if (!isPatch && ref !== undefined) {
      const meta = (value as { metadata?: Record<string, unknown> }).metadata;
      if (meta !== null && typeof meta === 'object') {
        const str = (k: string): string => (typeof meta[k] === 'string' ? meta[k] : '');
        if ((ref.namespace ?? '') === '') ref.namespace = str('namespace');
        if ((ref.name ?? '') === '') ref.name = str('name');
        if ((ref.uid ?? '') === '') ref.uid = str('uid');
        if ((ref.resourceVersion ?? '') === '') ref.resourceVersion = str('resourceVersion');
      }
    }
    if (levelRank(this.config.level) < levelRank('Request')) return;
    // A copy: handlers fill the decoded body in place (uid, resourceVersion, defaults).
    const copy = structuredClone(value);
    this.requestObject = this.config.omitManagedFields ? withoutManagedFields(copy) : copy;
  }

  /** Notes the response body (kube's `LogResponseObject`): a Status becomes the response status. */
  logResponseBody(value: unknown, code: number): void {
    if (value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'Status') {
      const s = value as Record<string, unknown>;
      this.responseStatus = {
        metadata: {},
        ...(typeof s['status'] === 'string' && s['status'] !== '' ? { status: s['status'] } : {}),
        ...(typeof s['message'] === 'string' && s['message'] !== '' ? { message: s['message'] } : {}),
        ...(typeof s['reason'] === 'string' && s['reason'] !== '' ? { reason: s['reason'] } : {}),
        ...(s['details'] === undefined ? {} : { details: s['details'] }),
        code: typeof s['code'] === 'number' ? s['code'] : code,
      };
    }
    if (levelRank(this.config.level) < levelRank('RequestResponse')) return;
    this.responseObject = this.config.omitManagedFields ? withoutManagedFields(value) : value;
  }

  /** Sets the response code (keeps a Status already noted). */
  setCode(code: number): void {
    if (this.responseStatus === undefined) this.responseStatus = { metadata: {}, code };
    else if (this.responseStatus.code !== code) this.responseStatus = { ...this.responseStatus, code };
  }

  /** kube's status of a panicked request. */
  setPanic(): void {
    this.responseStatus = {
      metadata: {},
      status: 'Failure',
      message: `APIServer panic'd: ${this.panic?.message ?? ''}`,
      reason: 'InternalError',
      code: 500,
    };
  }

  /** The event at `stage`, with `annotations` (null: none). */
  snapshot(stage: AuditStage, annotations: Readonly<Record<string, string>> | null): AuditEvent {
    const level = this.config.level;
    const ref = this.objectRef;
    const ev: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: AUDIT_API_VERSION,
      level,
      auditID: this.auditID,
      stage,
      requestURI: this.requestURI,
      verb: this.verb,
      user: this.user,
    };
    if (this.impersonatedUser !== undefined) ev['impersonatedUser'] = this.impersonatedUser;
    if (this.sourceIPs.length > 0) ev['sourceIPs'] = this.sourceIPs;
    if (this.userAgent !== undefined) ev['userAgent'] = this.userAgent;
    if (ref !== undefined) {
      const o: Record<string, string> = {};
      for (const k of [
        'resource',
        'namespace',
        'name',
        'uid',
        'apiGroup',
        'apiVersion',
        'resourceVersion',
        'subresource',
      ] as const) {
        const v = ref[k];
        if (v !== undefined && v !== '') o[k] = v;
      }
      ev['objectRef'] = o;
    }
    if (this.responseStatus !== undefined && stage !== 'RequestReceived')
      ev['responseStatus'] = this.responseStatus;
    if (this.requestObject !== undefined && stage !== 'RequestReceived')
      ev['requestObject'] = this.requestObject;
    if (this.responseObject !== undefined && stage === 'ResponseComplete')
      ev['responseObject'] = this.responseObject;
    ev['requestReceivedTimestamp'] = this.received;
    ev['stageTimestamp'] = stage === 'RequestReceived' ? this.received : this.#clock.now();
    if (annotations !== null && Object.keys(annotations).length > 0)
      ev['annotations'] = sortedMap(annotations);
    return ev as unknown as AuditEvent;
  }
}
