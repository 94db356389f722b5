/**
 * Who may use the agent's API, with kubelet's flags:
 * - authentication: a client certificate verified against `--client-ca-file` (user = CN,
 *   groups = O), else anonymous (`system:anonymous`, group `system:unauthenticated`) when
 *   `--anonymous-auth` is true (the default), else 401;
 * - authorization: `AlwaysAllow`, or `Webhook`: a SubjectAccessReview for the node's resource
 *   (`nodes`, name = the node) with kubelet's subresources by path ({@link subresourcesOf}),
 *   verb from the method; answers are cached 5 min when allowed and 30 s when denied.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Client } from '../../client/index.js';

/** The authenticated caller. */
export interface AgentUser {
  readonly name: string;
  readonly groups: readonly string[];
}

/** The server's authentication and authorization settings. */
export interface AgentAuthOptions {
  readonly anonymous: boolean;
  readonly clientCA: boolean;
  readonly mode: 'AlwaysAllow' | 'Webhook';
  /** The API client for webhook reviews (required for Webhook). */
  readonly client?: Client;
  readonly nodeName: string;
}

/** Authenticates a request; undefined means 401. */
export function authenticate(req: IncomingMessage, opts: AgentAuthOptions): AgentUser | undefined {
  const socket = req.socket as TLSSocket;
  if (opts.clientCA && socket.authorized) {
    const cert = socket.getPeerCertificate();
    const subject = cert.subject as unknown as Record<string, string | string[]> | undefined;
    const cn = subject?.['CN'];
    const o = subject?.['O'];
    if (typeof cn === 'string' && cn) {
      return { name: cn, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'] };
    }
  }
  if (opts.anonymous) return { name: 'system:anonymous', groups: ['system:unauthenticated'] };
  return undefined;
}

function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * kubelet's subresources for a path, in the order they are asked (v1.33, with its default
 * `KubeletFineGrainedAuthz`): `/pods`, `/runningpods`, `/healthz` and `/configz` try their own
 * subresource and then `proxy`; `/stats` → `stats`, `/metrics` → `metrics`, `/logs` → `log`,
 * `/checkpoint` → `checkpoint`; everything else (`/spec`, `/exec`, `/containerLogs`...) → `proxy`.
 */
export function subresourcesOf(path: string): string[] {
  const out: string[] = [];
  if (isSubpath(path, '/pods') || isSubpath(path, '/runningpods')) out.push('pods');
  else if (isSubpath(path, '/healthz')) out.push('healthz');
  else if (isSubpath(path, '/configz')) out.push('configz');
  if (isSubpath(path, '/stats')) out.push('stats');
  else if (isSubpath(path, '/metrics')) out.push('metrics');
  else if (isSubpath(path, '/logs')) out.push('log');
  else if (isSubpath(path, '/checkpoint')) out.push('checkpoint');
  else out.push('proxy');
  return out;
}

/** kubelet's first subresource for a path (see {@link subresourcesOf}). */
export function subresourceOf(path: string): string {
  return subresourcesOf(path)[0] ?? 'proxy';
}

const VERBS: Record<string, string> = {
  GET: 'get',
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
  HEAD: 'get',
};

/** Caches webhook answers and asks the API server. */
export class AgentAuthorizer {
  readonly #opts: AgentAuthOptions;
  readonly #cache = new Map<string, { allowed: boolean; until: number }>();

  constructor(opts: AgentAuthOptions) {
    this.#opts = opts;
  }

  /** True when any of the path's subresources is allowed (kubelet asks them in order). */
  async allowed(user: AgentUser, method: string, path: string): Promise<boolean> {
    if (this.#opts.mode === 'AlwaysAllow') return true;
    for (const subresource of subresourcesOf(path))
      if (await this.#allowed(user, method, subresource)) return true;
    return false;
  }

  async #allowed(user: AgentUser, method: string, subresource: string): Promise<boolean> {
    const client = this.#opts.client;
    if (!client) return false;
    const verb = VERBS[method] ?? method.toLowerCase();
    const key = [user.name, user.groups.join(','), verb, subresource].join('\0');
    const hit = this.#cache.get(key);
    if (hit && hit.until > Date.now()) return hit.allowed;
    const review = await client.json<{ status?: { allowed?: boolean } }>(
      {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.name,
            groups: user.groups,
            resourceAttributes: {
              verb,
              resource: 'nodes',
              subresource,
              name: this.#opts.nodeName,
              version: 'v1',
            },
          },
        },
      },
      'SubjectAccessReview',
    );
    const allowed = review.status?.allowed === true;
    this.#cache.set(key, { allowed, until: Date.now() + (allowed ? 300_000 : 30_000) });
    return allowed;
  }
}
