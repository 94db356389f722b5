/**
 * Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>` headers), as
 * kube-apiserver's filter: each requested attribute needs the `impersonate` verb on `users`,
 * `groups` or `serviceaccounts` (core group), or on `uids` and `userextras/<key>`
 * (`authentication.k8s.io`); then the request continues as the impersonated user, with
 * `system:authenticated` (or, for `system:anonymous`, `system:unauthenticated`) added and a
 * service account's groups filled in.
 */
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../api/errors.js';
import type { UserInfo } from '../authn/user.js';
import type { Attributes } from './attributes.js';
import { forbiddenError, type AuthorizerChain } from './authorizer.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA = 'impersonate-extra-';
const SA_PREFIX = 'system:serviceaccount:';

function headerValues(request: FastifyRequest, name: string): string[] {
  // Repeated headers (several Impersonate-Group lines) must stay separate values: the parsed
  // `headers` join them with ", " (HTTP/2 compat requests have no headersDistinct), so read the
  // raw name/value list.
  const raw = request.raw as { rawHeaders?: readonly string[] };
  const flat = raw.rawHeaders;
  if (flat !== undefined) {
    const out: string[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if ((flat[i] ?? '').toLowerCase() === name) out.push(flat[i + 1] ?? '');
    }
    return out;
  }
  const v = request.headers[name];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

function impersonationAttrs(
  requester: UserInfo,
  resource: string,
  name: string,
  extra: { group?: string; namespace?: string; subresource?: string } = {},
): Attributes {
  return {
    user: requester,
    verb: 'impersonate',
    isResourceRequest: true,
    path: '',
    apiGroup: extra.group ?? '',
    apiVersion: '',
    resource,
    subresource: extra.subresource ?? '',
    namespace: extra.namespace ?? '',
    name,
  };
}

/** True when the request asks to impersonate anyone (cheap header scan). */
function wantsImpersonation(request: FastifyRequest): boolean {
  for (const h of Object.keys(request.headers)) if (h.startsWith('impersonate-')) return true;
  return false;
}

/** The pipeline's impersonation step over `chain`. */
export function impersonationStep(chain: AuthorizerChain): (request: FastifyRequest) => void | Promise<void> {
  const impersonate = impersonateWith(chain);
  return (request) => (wantsImpersonation(request) ? impersonate(request) : undefined);
}

function impersonateWith(chain: AuthorizerChain): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const requester = request.user;
    const userName = headerValues(request, USER)[0] ?? '';
    const groups = headerValues(request, GROUP);
    const uid = headerValues(request, UID)[0];
    const extra: Record<string, string[]> = {};
    for (const h of Object.keys(request.headers)) {
      if (!h.startsWith(EXTRA)) continue;
      let key = h.slice(EXTRA.length);
      try {
        key = decodeURIComponent(key);
      } catch {
        throw badRequest(`invalid impersonation extra header ${JSON.stringify(h)}`);
      }
      extra[key.toLowerCase()] = headerValues(request, h);
    }
    if (userName === '') {
      throw badRequest(
        'requested impersonation of groups, a uid or extra fields without impersonating a user',
      );
    }
    const checks: Attributes[] = [];
    let userGroups: string[] = [];
    if (userName.startsWith(SA_PREFIX)) {
      const [namespace = '', name = ''] = userName.slice(SA_PREFIX.length).split(':');
      checks.push(impersonationAttrs(requester, 'serviceaccounts', name, { namespace }));
      userGroups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
    } else {
      checks.push(impersonationAttrs(requester, 'users', userName));
    }
    for (const g of groups) checks.push(impersonationAttrs(requester, 'groups', g));
    if (uid !== undefined)
      checks.push(impersonationAttrs(requester, 'uids', uid, { group: 'authentication.k8s.io' }));
    for (const [key, values] of Object.entries(extra)) {
      for (const v of values) {
        checks.push(
          impersonationAttrs(requester, 'userextras', v, {
            group: 'authentication.k8s.io',
            subresource: key,
          }),
        );
      }
    }
    for (const attrs of checks) {
      const answer = await chain.authorize(attrs);
      if (answer.decision !== 'allow') throw forbiddenError(attrs, answer.reason);
    }
    const all = [...userGroups, ...groups.filter((g) => !userGroups.includes(g))];
    if (userName === 'system:anonymous') {
      if (!all.includes('system:unauthenticated')) all.push('system:unauthenticated');
    } else if (!all.includes('system:authenticated')) {
      all.push('system:authenticated');
    }
    request.user = Object.freeze({
      name: userName,
      uid: uid ?? '',
      groups: Object.freeze(all),
      extra: Object.freeze(extra),
    });
  };
}
