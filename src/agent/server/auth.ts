/**
 * Who may use the agent's API, with kubelet's flags:
 * - authentication: a client certificate verified against `--client-ca-file` (user = CN,
 *   groups = O), else anonymous (`system:anonymous`, group `system:unauthenticated`) when
 *   `--anonymous-auth` is true (the default), else 401;
 * - authorization: `AlwaysAllow`, or `Webhook`: a SubjectAccessReview for the node's resource
 *   (`nodes`, name = the node) with kubelet's subresource by path (`stats`, `metrics`, `log`,
 *   `spec`, `proxy` for everything else), verb from the method; answers are cached 5 min when
 *   allowed and 30 s when denied.
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

/** kubelet's subresource for a path. */
export function subresourceOf(path: string): string {
  if (path.startsWith('/stats')) return 'stats';
  if (path.startsWith('/metrics')) return 'metrics';
  if (path.startsWith('/logs')) return 'log';
  if (path.startsWith('/spec')) return 'spec';
  if (path.startsWith('/configz')) return 'configz';
  if (path.startsWith('/healthz')) return 'healthz';
  if (path.startsWith('/pods')) return 'pods';
  return 'proxy';
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

  async allowed(user: AgentUser, method: string, path: string): Promise<boolean> {
    if (this.#opts.mode === 'AlwaysAllow') return true;
    const client = this.#opts.client;
    if (!client) return false;
    const verb = VERBS[method] ?? method.toLowerCase();
    const subresource = subresourceOf(path);
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
