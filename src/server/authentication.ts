/**
 * Moved: the user model lives in `src/authn/user.ts` and the request authenticator in
 * `src/authn/request-authenticator.ts`. This re-export keeps imports of branches written
 * against the old path compiling until they are updated; delete it after the merge.
 */
export { ANONYMOUS, type UserInfo } from '../authn/user.js';
