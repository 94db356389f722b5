/**
 * RBAC's matching rules (kube's `rbac/v1` helpers): a PolicyRule covers a request when its verbs,
 * API groups, resources (with the star, star-slash-sub and res/sub forms) and resourceNames match, or, for
 * a non-resource request, its verbs and nonResourceURLs (exact, `*`, or a `prefix*`). A subject
 * matches a user by name, a group the user is in, or a service account's user name.
 */
import type { UserInfo } from '../authn/user.js';
import type { Attributes } from './attributes.js';

/** An RBAC PolicyRule as stored. */
export interface PolicyRule {
  readonly verbs?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** An RBAC Subject as stored. */
export interface Subject {
  readonly kind?: string;
  readonly apiGroup?: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** A binding's roleRef. */
export interface RoleRef {
  readonly apiGroup?: string;
  readonly kind?: string;
  readonly name?: string;
}

function has(list: readonly string[] | undefined, value: string): boolean {
  if (list === undefined) return false;
  for (const v of list) if (v === '*' || v === value) return true;
  return false;
}

/** The rule's verbs allow `verb`. */
export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, verb);
}

/** The rule's resources cover `resource` (and `subresource`). */
export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource !== '' && r.length === subresource.length + 2 && r === `*/${subresource}`) return true;
  }
  return false;
}

/** The rule covers the resource request `attrs`. */
export function ruleAllowsResource(rule: PolicyRule, attrs: Attributes): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!has(rule.apiGroups, attrs.apiGroup)) return false;
  if (!resourceMatches(rule, attrs.resource, attrs.subresource)) return false;
  const names = rule.resourceNames;
  if (names === undefined || names.length === 0) return true;
  return names.includes(attrs.name);
}

/** The rule covers the non-resource request (`verb` on `path`). */
export function ruleAllowsPath(rule: PolicyRule, verb: string, path: string): boolean {
  if (!verbMatches(rule, verb)) return false;
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** The rule covers the request. */
export function ruleAllows(rule: PolicyRule, attrs: Attributes): boolean {
  return attrs.isResourceRequest
    ? ruleAllowsResource(rule, attrs)
    : ruleAllowsPath(rule, attrs.verb, attrs.path);
}

const SA_PREFIX = 'system:serviceaccount:';

/** The subject names `user` (a binding in `bindingNamespace` defaults a service account's namespace). */
export function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return subject.name !== undefined && user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns =
        subject.namespace === undefined || subject.namespace === '' ? bindingNamespace : subject.namespace;
      return user.name === `${SA_PREFIX}${ns}:${subject.name ?? ''}`;
    }
    default:
      return false;
  }
}

/** The user name a ServiceAccount subject stands for. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `${SA_PREFIX}${namespace}:${name}`;
}
