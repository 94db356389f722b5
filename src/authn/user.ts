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
 * A frozen user with `system:authenticated` added to its groups (once; kube's
 * `AuthenticatedGroupAdder` leaves a user that already has it, or is anonymous, as it is).
 */
export function authenticatedUser(user: {
  readonly name: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}): UserInfo {
  const groups = [...(user.groups ?? [])];
  if (user.name !== ANONYMOUS.name && !groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  return Object.freeze({
    name: user.name,
    uid: user.uid ?? '',
    groups: Object.freeze(groups),
    extra: user.extra === undefined ? EMPTY_EXTRA : Object.freeze({ ...user.extra }),
  });
}
