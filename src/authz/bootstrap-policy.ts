/**
 * kube-apiserver's bootstrap RBAC policy, written as data in `bootstrap-policy.yaml` (beside this
 * file; `bootstrap-policy-data.ts` is its parsed form, generated, so that a server does not parse
 * YAML while it starts) and expanded into the API objects the server creates and reconciles at
 * start: ClusterRoles, ClusterRoleBindings, Roles and RoleBindings, each labelled
 * `kubernetes.io/bootstrapping=rbac-defaults` and annotated
 * `rbac.authorization.kubernetes.io/autoupdate=true`.
 */
import { BOOTSTRAP_POLICY_DATA } from './bootstrap-policy-data.js';
import type { PolicyRule, Subject } from './rbac-rules.js';

export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
const RBAC_API = 'rbac.authorization.k8s.io/v1';

/** One bootstrap object: its storage resource and the object. */
export interface PolicyObject {
  readonly resource: 'clusterroles' | 'clusterrolebindings' | 'roles' | 'rolebindings';
  readonly namespace: string;
  readonly name: string;
  readonly object: Record<string, unknown> & {
    metadata: {
      name: string;
      namespace?: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    };
  };
}

/** A rule in the file's shorthand (see the file's header). */
export interface ShortRule {
  v?: string[];
  g?: string[];
  r?: string[];
  n?: string[];
  u?: string[];
}
/** A ClusterRole or Role of the file. */
export interface RoleEntry {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  aggregateFrom?: string;
  controller?: boolean;
  rules?: ShortRule[];
}
/** A ClusterRoleBinding or RoleBinding of the file. */
export interface BindingEntry {
  name: string;
  namespace?: string;
  role: string;
  subjects: string[];
}
/** The file's content. */
export interface PolicyFile {
  clusterRoles: RoleEntry[];
  clusterRoleBindings: BindingEntry[];
  roles: RoleEntry[];
  roleBindings: BindingEntry[];
}

function rule(s: ShortRule): PolicyRule {
  if (s.u !== undefined) return { verbs: s.v ?? [], nonResourceURLs: s.u };
  return {
    verbs: s.v ?? [],
    apiGroups: s.g ?? [],
    resources: s.r ?? [],
    ...(s.n === undefined ? {} : { resourceNames: s.n }),
  };
}

function subject(s: string): Subject {
  const [kind, ...rest] = s.split(':');
  if (kind === 'ServiceAccount') {
    const [namespace, ...name] = rest;
    return { kind, name: name.join(':'), namespace: namespace ?? '' };
  }
  return { kind: kind ?? '', apiGroup: 'rbac.authorization.k8s.io', name: rest.join(':') };
}

function meta(
  name: string,
  namespace: string,
  labels: Record<string, string> = {},
): PolicyObject['object']['metadata'] {
  return {
    name,
    ...(namespace === '' ? {} : { namespace }),
    labels: { [BOOTSTRAP_LABEL]: 'rbac-defaults', ...labels },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
}

function roleObject(kind: 'ClusterRole' | 'Role', e: RoleEntry): PolicyObject['object'] {
  return {
    apiVersion: RBAC_API,
    kind,
    metadata: meta(e.name, e.namespace ?? '', e.labels),
    ...(e.aggregateFrom === undefined
      ? { rules: (e.rules ?? []).map(rule) }
      : {
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [e.aggregateFrom]: 'true' } }] },
          rules: [],
        }),
  };
}

function bindingObject(kind: 'ClusterRoleBinding' | 'RoleBinding', e: BindingEntry): PolicyObject['object'] {
  return {
    apiVersion: RBAC_API,
    kind,
    metadata: meta(e.name, e.namespace ?? ''),
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: kind === 'ClusterRoleBinding' ? 'ClusterRole' : 'Role',
      name: e.role,
    },
    // kube omits an empty subject list (system:node's binding has none).
    ...(e.subjects.length === 0 ? {} : { subjects: e.subjects.map(subject) }),
  };
}

/** The bootstrap objects, in creation order (roles before bindings). */
export function bootstrapPolicy(data: PolicyFile = BOOTSTRAP_POLICY_DATA): PolicyObject[] {
  const out: PolicyObject[] = [];
  for (const e of data.clusterRoles) {
    out.push({ resource: 'clusterroles', namespace: '', name: e.name, object: roleObject('ClusterRole', e) });
  }
  for (const e of data.roles) {
    out.push({
      resource: 'roles',
      namespace: e.namespace ?? '',
      name: e.name,
      object: roleObject('Role', e),
    });
  }
  const bindings = [...data.clusterRoleBindings];
  // Every controller role is bound to its controller's service account in kube-system.
  for (const e of data.clusterRoles) {
    if (e.controller !== true) continue;
    const sa = e.name.slice('system:controller:'.length);
    bindings.push({ name: e.name, role: e.name, subjects: [`ServiceAccount:kube-system:${sa}`] });
  }
  for (const e of bindings) {
    out.push({
      resource: 'clusterrolebindings',
      namespace: '',
      name: e.name,
      object: bindingObject('ClusterRoleBinding', e),
    });
  }
  for (const e of data.roleBindings) {
    out.push({
      resource: 'rolebindings',
      namespace: e.namespace ?? '',
      name: e.name,
      object: bindingObject('RoleBinding', e),
    });
  }
  return out;
}
