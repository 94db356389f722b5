/**
 * rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding
 * (`pkg/apis/rbac/validation`).
 */
import { invalid, notSupported, required, type FieldError } from './field-error.js';
import { isDNS1123Label, isDNS1123Subdomain, isPathSegmentName } from './formats.js';
import { obj, objects, semanticEqual, str, strings, type JsonObject } from './json.js';
import { validateLabelSelector } from './meta.js';
import { child, index } from './path.js';

const GROUP = 'rbac.authorization.k8s.io';

function validateRules(o: JsonObject, namespaced: boolean, errs: FieldError[]): void {
  objects(o, 'rules').forEach((rule, i) => {
    const p = index('rules', i);
    if (strings(rule, 'verbs').length === 0)
      errs.push(required(child(p, 'verbs'), 'verbs must contain at least one value'));
    const urls = strings(rule, 'nonResourceURLs');
    if (urls.length > 0) {
      if (namespaced)
        errs.push(
          invalid(child(p, 'nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'),
        );
      if (
        strings(rule, 'apiGroups').length > 0 ||
        strings(rule, 'resources').length > 0 ||
        strings(rule, 'resourceNames').length > 0
      ) {
        errs.push(
          invalid(
            child(p, 'nonResourceURLs'),
            urls,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      }
      return;
    }
    if (strings(rule, 'apiGroups').length === 0) {
      errs.push(required(child(p, 'apiGroups'), 'resource rules must supply at least one api group'));
    }
    if (strings(rule, 'resources').length === 0) {
      errs.push(required(child(p, 'resources'), 'resource rules must supply at least one resource'));
    }
  });
}

/** A Role: every rule has verbs, API groups and resources; no non-resource URLs. */
export function validateRole(role: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  validateRules(role, true, errs);
}

/** A ClusterRole: rules as Roles (non-resource URLs allowed), aggregation selectors. */
export function validateClusterRole(
  role: JsonObject,
  _old: JsonObject | undefined,
  errs: FieldError[],
): void {
  validateRules(role, false, errs);
  const aggregation = obj(role, 'aggregationRule');
  if (aggregation !== undefined) {
    const selectors = objects(aggregation, 'clusterRoleSelectors');
    if (selectors.length === 0) {
      errs.push(
        required(
          'aggregationRule.clusterRoleSelectors',
          'at least one clusterRoleSelector required if aggregationRule is non-nil',
        ),
      );
    }
    selectors.forEach((s, i) =>
      errs.push(...validateLabelSelector(s, index('aggregationRule.clusterRoleSelectors', i))),
    );
  }
}

function validateSubjects(binding: JsonObject, clusterScoped: boolean, errs: FieldError[]): void {
  objects(binding, 'subjects').forEach((s, i) => {
    const p = index('subjects', i);
    const name = str(s, 'name');
    if (name === '') errs.push(required(child(p, 'name')));
    const apiGroup = str(s, 'apiGroup');
    switch (str(s, 'kind')) {
      case 'ServiceAccount':
        if (name !== '')
          for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(child(p, 'name'), name, msg));
        if (apiGroup !== '') errs.push(notSupported(child(p, 'apiGroup'), apiGroup, ['']));
        if (clusterScoped && str(s, 'namespace') === '') errs.push(required(child(p, 'namespace')));
        else if (str(s, 'namespace') !== '') {
          for (const msg of isDNS1123Label(str(s, 'namespace')))
            errs.push(invalid(child(p, 'namespace'), str(s, 'namespace'), msg));
        }
        break;
      case 'User':
      case 'Group':
        if (apiGroup !== GROUP) errs.push(notSupported(child(p, 'apiGroup'), apiGroup, [GROUP]));
        break;
      default:
        errs.push(notSupported(child(p, 'kind'), str(s, 'kind'), ['ServiceAccount', 'User', 'Group']));
    }
  });
}

function validateRoleRef(binding: JsonObject, kinds: readonly string[], errs: FieldError[]): void {
  const ref = obj(binding, 'roleRef') ?? {};
  const group = str(ref, 'apiGroup');
  if (group !== GROUP) errs.push(notSupported('roleRef.apiGroup', group, [GROUP]));
  const kind = str(ref, 'kind');
  if (!kinds.includes(kind)) errs.push(notSupported('roleRef.kind', kind, kinds));
  const name = str(ref, 'name');
  if (name === '') errs.push(required('roleRef.name'));
  else for (const msg of isPathSegmentName(name)) errs.push(invalid('roleRef.name', name, msg));
}

function immutableRoleRef(binding: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  if (old !== undefined && !semanticEqual(binding['roleRef'], old['roleRef'])) {
    errs.push(invalid('roleRef', binding['roleRef'] ?? null, 'cannot change roleRef'));
  }
}

/** A RoleBinding: roleRef to a Role or ClusterRole (immutable), well-formed subjects. */
export function validateRoleBinding(rb: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  validateRoleRef(rb, ['Role', 'ClusterRole'], errs);
  validateSubjects(rb, false, errs);
  immutableRoleRef(rb, old, errs);
}

/** A ClusterRoleBinding: roleRef to a ClusterRole (immutable), namespaced service accounts. */
export function validateClusterRoleBinding(
  crb: JsonObject,
  old: JsonObject | undefined,
  errs: FieldError[],
): void {
  validateRoleRef(crb, ['ClusterRole'], errs);
  validateSubjects(crb, true, errs);
  immutableRoleRef(crb, old, errs);
}
