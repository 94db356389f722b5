/**
 * Who a request is, as authentication sets it on the request: the anonymous user and the group
 * every authenticated user gains. The `UserInfo` shape itself is in `src/api/user.ts` (a leaf,
 * so lower layers can carry it); it is re-exported here.
 */

import type { UserInfo } from '../api/user.js';

export type { UserInfo };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook; defined in every later hook and handler. */
    user: UserInfo;
  }
}

/** Group of every authenticated user. */
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** Group of the anonymous user. */
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/** The anonymous user (kube's `system:anonymous`). */
export const ANONYMOUS: UserInfo = Object.freeze({
  name: 'system:anonymous',
  uid: '',
  groups: Object.freeze([UNAUTHENTICATED_GROUP]),
  extra: Object.freeze({}),
});

const EMPTY_EXTRA: Readonly<Record<string, readonly string[]>> = Object.freeze({});

/**
 * A frozen user as an authenticator names it, without the groups authentication adds around the
 * whole chain ({@link withAuthenticatedGroup}): every authenticator builds its user with this.
 */
export function userInfo(user: {
  readonly name: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}): UserInfo {
  return Object.freeze({
    name: user.name,
    uid: user.uid ?? '',
    groups: Object.freeze([...(user.groups ?? [])]),
    extra: user.extra === undefined ? EMPTY_EXTRA : Object.freeze({ ...user.extra }),
  });
}

/**
 * kube's `AuthenticatedGroupAdder`, which wraps the whole authenticator union: the user with
 * `system:authenticated` appended, once. The anonymous user, and a user that already has
 * `system:authenticated` or `system:unauthenticated`, are returned as they are.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.name === ANONYMOUS.name) return user;
  if (user.groups.some((g) => g === AUTHENTICATED_GROUP || g === UNAUTHENTICATED_GROUP)) return user;
  return Object.freeze({ ...user, groups: Object.freeze([...user.groups, AUTHENTICATED_GROUP]) });
}
