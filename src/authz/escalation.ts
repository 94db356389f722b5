/**
 * RBAC escalation prevention (kube's policy-based RBAC storage): creating or updating a Role or
 * ClusterRole needs the `escalate` verb on it, or holding every permission it grants; setting an
 * aggregationRule needs `escalate` or full access; creating or updating a binding needs the
 * `bind` verb on its role, or holding the role's permissions. Members of `system:masters` pass.
 *
 * Runs as a preHandler (after the body is parsed) on writes of the four RBAC kinds. A patch is
 * judged by the rules it sets (merge and apply patches replace `rules` whole) and the binding's
 * stored roleRef; a JSON patch or a protobuf body, whose result is not known here, needs the
 * `escalate` / `bind` verb.
 */
import type { FastifyRequest } from 'fastify';
import { isRequestBody } from '../http/body.js';
import { ProtobufBody } from '../representation/protobuf-body.js';
import { ApiError } from '../api/errors.js';
import type { UserInfo } from '../authn/user.js';
import type { Attributes } from './attributes.js';
import type { AuthorizerChain } from './authorizer.js';
import { uncoveredRules, ruleString } from './covers.js';
import type { RbacAuthorizer } from './rbac-authorizer.js';
import type { RbacIndex } from './rbac-index.js';
import type { PolicyRule, RoleRef } from './rbac-rules.js';

const GROUP = 'rbac.authorization.k8s.io';
const ROLE_KINDS = new Set(['roles', 'clusterroles']);
const BINDING_KINDS = new Set(['rolebindings', 'clusterrolebindings']);
const WRITES = new Set(['create', 'update', 'patch']);
const FULL: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
/** The protobuf message of each RBAC resource's body. */
const MESSAGE_TYPES: Readonly<Record<string, string>> = {
  roles: 'k8s.io.api.rbac.v1.Role',
  clusterroles: 'k8s.io.api.rbac.v1.ClusterRole',
  rolebindings: 'k8s.io.api.rbac.v1.RoleBinding',
  clusterrolebindings: 'k8s.io.api.rbac.v1.ClusterRoleBinding',
};

/** Decodes a protobuf request body as `messageType` (the resource layer's codec). */
export type ProtobufDecoder = (body: ProtobufBody, messageType: string) => unknown;

interface Written {
  metadata?: { name?: string };
  rules?: PolicyRule[] | null;
  aggregationRule?: unknown;
  roleRef?: RoleRef;
}

function groupsText(user: UserInfo): string {
  return `[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]`;
}

function escalationError(
  resource: string,
  name: string,
  user: UserInfo,
  missing: readonly PolicyRule[],
  extra = '',
): ApiError {
  const lines = missing.map(ruleString).join('\n');
  return new ApiError(
    'Forbidden',
    `${resource}.${GROUP} "${name}" is forbidden: user "${user.name}" (groups=${groupsText(user)}) is attempting to grant RBAC permissions not currently held:\n${lines}${extra}`,
    { name, group: GROUP, kind: resource },
  );
}

/**
 * The preHandler step; `rbac` and `index` are the RBAC mode's. Protobuf bodies (kubectl 1.33
 * sends them) are decoded with `decode`; without it, or when they do not decode, the change
 * counts as one that cannot be inspected (it needs `escalate` or `bind`).
 */
export function escalationStep(
  chain: AuthorizerChain,
  rbac: RbacAuthorizer,
  index: RbacIndex,
  decode?: ProtobufDecoder,
): (request: FastifyRequest) => void | Promise<void> {
  const check = escalationCheck(chain, rbac, index, decode);
  return (request) => {
    const info = request.requestInfo;
    if (!info.isResourceRequest || info.apiGroup !== GROUP) return undefined;
    return check(request);
  };
}

function escalationCheck(
  chain: AuthorizerChain,
  rbac: RbacAuthorizer,
  index: RbacIndex,
  decode: ProtobufDecoder | undefined,
): (request: FastifyRequest) => Promise<void> {
  const valueOf = (body: unknown, resource: string): unknown => {
    if (!isRequestBody(body)) return undefined;
    if (!(body.value instanceof ProtobufBody)) return body.value;
    try {
      return decode?.(body.value, MESSAGE_TYPES[resource] ?? '');
    } catch {
      return undefined;
    }
  };
  const allowed = async (
    user: UserInfo,
    verb: string,
    resource: string,
    namespace: string,
    name: string,
  ): Promise<boolean> => {
    const attrs: Attributes = {
      user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: GROUP,
      apiVersion: 'v1',
      resource,
      subresource: '',
      namespace,
      name,
    };
    return (await chain.authorize(attrs)).decision === 'allow';
  };
  return async (request) => {
    const info = request.requestInfo;
    if (
      !info.isResourceRequest ||
      info.apiGroup !== GROUP ||
      info.subresource !== '' ||
      !WRITES.has(info.verb)
    )
      return;
    const isRole = ROLE_KINDS.has(info.resource);
    if (!isRole && !BINDING_KINDS.has(info.resource)) return;
    const user = request.user;
    if (user.groups.includes('system:masters')) return;
    const body = isRequestBody(request.body) ? request.body : undefined;
    const value = valueOf(request.body, info.resource);
    const known =
      value !== undefined &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      body?.patchType !== 'json';
    const obj = (known ? value : {}) as Written;
    const name = info.name !== '' ? info.name : (obj.metadata?.name ?? '');
    const namespace = info.namespace;
    if (isRole) {
      if (await allowed(user, 'escalate', info.resource, namespace, name)) return;
      if (!known)
        throw escalationError(
          info.resource,
          name,
          user,
          [],
          '\n(the change could not be inspected; it needs the escalate verb)',
        );
      const held = rbac.rulesHeld(user, namespace);
      if (obj.aggregationRule !== undefined && obj.aggregationRule !== null) {
        const missing = uncoveredRules(held, FULL);
        if (missing.length > 0) throw escalationError(info.resource, name, user, FULL);
      }
      const missing = uncoveredRules(held, obj.rules ?? []);
      if (missing.length > 0) throw escalationError(info.resource, name, user, missing);
      return;
    }
    const ref = obj.roleRef ?? index.binding(namespace, name)?.roleRef;
    if (ref === undefined) {
      if (known && info.verb === 'patch') return; // the stored binding is unknown yet: the handler answers 404
      throw escalationError(
        info.resource,
        name,
        user,
        [],
        '\n(the change could not be inspected; it needs the bind verb)',
      );
    }
    const roleResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    const roleNamespace = ref.kind === 'Role' ? namespace : info.resource === 'rolebindings' ? namespace : '';
    if (await allowed(user, 'bind', roleResource, roleNamespace, ref.name ?? '')) return;
    const role =
      ref.kind === 'Role' ? index.role(namespace, ref.name ?? '') : index.clusterRole(ref.name ?? '');
    if (role === undefined) {
      throw new ApiError(
        'Forbidden',
        `${info.resource}.${GROUP} "${name}" is forbidden: ${ref.kind === 'Role' ? 'role' : 'clusterrole'}.${GROUP} "${ref.name ?? ''}" not found`,
        { name, group: GROUP, kind: info.resource },
      );
    }
    const missing = uncoveredRules(rbac.rulesHeld(user, namespace), role.rules);
    if (missing.length > 0) throw escalationError(info.resource, name, user, missing);
  };
}
