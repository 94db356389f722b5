/**
 * Who a request is: kube's `user.Info`. A leaf shape, so the layers below authentication
 * (admission, the resource handler) can carry the requester without importing `src/authn/`.
 */

/** The authenticated identity of a request (kube's `user.Info`). */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

/**
 * The identity of writes the server makes itself (bootstrap objects, controllers): kube's
 * loopback client, `system:apiserver` in `system:masters`.
 */
export const SERVER_USER: UserInfo = Object.freeze({
  name: 'system:apiserver',
  uid: '',
  groups: Object.freeze(['system:authenticated', 'system:masters']),
  extra: Object.freeze({}),
});
