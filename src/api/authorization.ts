/**
 * What an authorizer decides on: kube's `authorizer.Attributes`. A leaf shape, so the layers
 * below authorization (the CEL authorizer library of admission expressions) can ask the
 * server's authorizer without importing `src/authz/`.
 */
import type { UserInfo } from './user.js';

/** The attributes of one authorization question. */
export interface Attributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** The attributes of a non-resource question: `verb` on `path`, every resource field empty. */
export function nonResourceAttributes(user: UserInfo, verb: string, path: string): Attributes {
  return {
    user,
    verb,
    isResourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}
