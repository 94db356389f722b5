/**
 * A small reference model of RBAC for the authorization matrix, written from kube's documented
 * rules and deliberately independent of src/authz: given every Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding (aggregation computed here, from labels), does a user's request pass?
 */

export interface MRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
export interface MSubject {
  kind: string;
  name: string;
  namespace?: string;
}
export interface MRole {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  rules: MRule[];
  /** matchLabels of each clusterRoleSelector. */
  aggregate?: Record<string, string>[];
}
export interface MBinding {
  namespace: string;
  name: string;
  roleKind: 'Role' | 'ClusterRole';
  roleName: string;
  subjects: MSubject[];
}
export interface MWorld {
  roles: MRole[];
  clusterRoles: MRole[];
  bindings: MBinding[];
}
export interface MUser {
  name: string;
  groups: string[];
}
export interface MRequest {
  user: MUser;
  verb: string;
  resource?: { group: string; resource: string; subresource: string; namespace: string; name: string };
  path?: string;
}

/** ClusterRole rules after aggregation (a fixpoint over aggregated roles selecting each other). */
export function effectiveClusterRules(world: MWorld): Map<string, MRule[]> {
  const rules = new Map(world.clusterRoles.map((r) => [r.name, r.rules] as const));
  for (let round = 0; round < 10; round++) {
    let changed = false;
    for (const r of world.clusterRoles) {
      if (r.aggregate === undefined) continue;
      const picked = world.clusterRoles
        .filter(
          (o) =>
            o.name !== r.name &&
            r.aggregate?.some(
              (sel) =>
                Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => o.labels[k] === v),
            ),
        )
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      const out: MRule[] = [];
      const seen = new Set<string>();
      for (const o of picked) {
        for (const rule of rules.get(o.name) ?? []) {
          const k = canonical(rule);
          if (!seen.has(k)) {
            seen.add(k);
            out.push(rule);
          }
        }
      }
      if (canonicalList(out) !== canonicalList(rules.get(r.name) ?? [])) {
        rules.set(r.name, out);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return rules;
}

function canonical(r: MRule): string {
  const s = (l?: string[]): string[] => [...(l ?? [])].sort();
  return JSON.stringify([
    s(r.verbs),
    s(r.apiGroups),
    s(r.resources),
    s(r.resourceNames),
    s(r.nonResourceURLs),
  ]);
}

/** Order-insensitive form of a rule list. */
export function canonicalList(rules: MRule[]): string {
  return JSON.stringify([...new Set(rules.map(canonical))].sort());
}

function subjectIs(s: MSubject, user: MUser, bindingNs: string): boolean {
  if (s.kind === 'User') return s.name === user.name;
  if (s.kind === 'Group') return user.groups.includes(s.name);
  if (s.kind === 'ServiceAccount') {
    const ns = s.namespace !== undefined && s.namespace !== '' ? s.namespace : bindingNs;
    return user.name === `system:serviceaccount:${ns}:${s.name}`;
  }
  return false;
}

function listHas(list: string[] | undefined, v: string): boolean {
  return (list ?? []).some((x) => x === '*' || x === v);
}

function ruleCovers(rule: MRule, req: MRequest): boolean {
  if (!listHas(rule.verbs, req.verb)) return false;
  if (req.resource === undefined) {
    const path = req.path ?? '';
    return (rule.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
    );
  }
  const r = req.resource;
  if (!listHas(rule.apiGroups, r.group)) return false;
  const full = r.subresource === '' ? r.resource : `${r.resource}/${r.subresource}`;
  const resOk = (rule.resources ?? []).some(
    (x) => x === '*' || x === full || (r.subresource !== '' && x === `*/${r.subresource}`),
  );
  if (!resOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(r.name);
}

/** Which binding and rule allow `req` in the model (for failure messages). */
export function modelWhy(world: MWorld, clusterRules: Map<string, MRule[]>, req: MRequest): string {
  const ns = req.resource?.namespace ?? '';
  for (const b of world.bindings) {
    if (b.namespace !== '' && b.namespace !== ns) continue;
    if (!b.subjects.some((s) => subjectIs(s, req.user, b.namespace))) continue;
    const rules =
      b.roleKind === 'ClusterRole'
        ? (clusterRules.get(b.roleName) ?? [])
        : (world.roles.find((r) => r.namespace === b.namespace && r.name === b.roleName)?.rules ?? []);
    const rule = rules.find((r) => ruleCovers(r, req));
    if (rule !== undefined)
      return `binding ${b.namespace}/${b.name} -> ${b.roleKind} ${b.roleName}: ${JSON.stringify(rule)}`;
  }
  return 'no binding';
}

/** The model's answer: allowed or not. */
export function modelAllows(world: MWorld, clusterRules: Map<string, MRule[]>, req: MRequest): boolean {
  if (req.user.groups.includes('system:masters')) return true;
  const ns = req.resource?.namespace ?? '';
  for (const b of world.bindings) {
    if (b.namespace !== '' && b.namespace !== ns) continue;
    if (!b.subjects.some((s) => subjectIs(s, req.user, b.namespace))) continue;
    let rules: MRule[] = [];
    if (b.roleKind === 'ClusterRole') rules = clusterRules.get(b.roleName) ?? [];
    else if (b.namespace !== '')
      rules = world.roles.find((r) => r.namespace === b.namespace && r.name === b.roleName)?.rules ?? [];
    if (rules.some((rule) => ruleCovers(rule, req))) return true;
  }
  return false;
}
