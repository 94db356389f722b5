/**
 * Authorization attributes: what an authorizer decides on (kube's `authorizer.Attributes`): the
 * user, the verb, and either a resource (API group, resource, subresource, namespace, name) or a
 * non-resource path. Built from the request info the pipeline parsed once. The shape itself is
 * in `src/api/authorization.ts` (a leaf, so the CEL authorizer library can use it).
 */
import type { RequestInfo } from '../http/request-info.js';
import type { UserInfo } from '../authn/user.js';
import type { Attributes } from '../api/authorization.js';

export type { Attributes };

/** The attributes of a request (dry-run needs exactly the permission of the real request). */
export function attributesOf(user: UserInfo, info: RequestInfo): Attributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

/** kube's forbidden message of `attrs` (without the `<resource> is forbidden: ` prefix). */
export function forbiddenMessage(attrs: Attributes): string {
  const user = attrs.user.name;
  if (!attrs.isResourceRequest) return `User "${user}" cannot ${attrs.verb} path "${attrs.path}"`;
  const resource = attrs.subresource === '' ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
  const scope = attrs.namespace === '' ? 'at the cluster scope' : `in the namespace "${attrs.namespace}"`;
  return `User "${user}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" ${scope}`;
}
