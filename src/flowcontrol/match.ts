/**
 * Classification: the first FlowSchema (in matching order) one of whose rules matches the
 * request's user and attributes, and the flow the request belongs to within it.
 */
import type { RequestInfo } from '../http/request-info.js';
import type { NonResourceRule, PolicyRules, ResourceRule, Schema, Subject } from './config.js';

/** Who asks (the authenticated user). */
export interface Requester {
  readonly name: string;
  readonly groups: readonly string[];
}

const SA_PREFIX = 'system:serviceaccount:';

function subjectMatches(s: Subject, user: Requester): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === '*' || s.name === user.name;
    case 'Group':
      return s.name === '*' || user.groups.includes(s.name);
    case 'ServiceAccount': {
      const prefix = `${SA_PREFIX}${s.namespace}:`;
      if (!user.name.startsWith(prefix)) return false;
      return (
        s.name === '*' || (user.name.length === prefix.length + s.name.length && user.name.endsWith(s.name))
      );
    }
  }
}

const has = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);

function resourceRuleMatches(r: ResourceRule, info: RequestInfo): boolean {
  if (!has(r.verbs, info.verb) || !has(r.apiGroups, info.apiGroup)) return false;
  const resource = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`;
  if (!has(r.resources, resource)) return false;
  // A request without a namespace (cluster-scoped, or across all namespaces) needs clusterScope.
  return info.namespace === '' ? r.clusterScope : has(r.namespaces, info.namespace);
}

function urlMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  return pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1));
}

function nonResourceRuleMatches(r: NonResourceRule, info: RequestInfo): boolean {
  return has(r.verbs, info.verb) && r.nonResourceURLs.some((u) => urlMatches(u, info.path));
}

function rulesMatch(rules: PolicyRules, user: Requester, info: RequestInfo): boolean {
  if (!rules.subjects.some((s) => subjectMatches(s, user))) return false;
  return info.isResourceRequest
    ? rules.resourceRules.some((r) => resourceRuleMatches(r, info))
    : rules.nonResourceRules.some((r) => nonResourceRuleMatches(r, info));
}

/** The first schema of `ordered` that matches, or undefined. */
export function classify(ordered: readonly Schema[], user: Requester, info: RequestInfo): Schema | undefined {
  for (const schema of ordered) {
    if (schema.rules.some((r) => rulesMatch(r, user, info))) return schema;
  }
  return undefined;
}

/** The flow's distinguisher within its schema: the user or namespace name, or nothing. */
export function flowDistinguisher(schema: Schema, user: Requester, info: RequestInfo): string {
  if (schema.distinguisher === 'ByUser') return user.name;
  if (schema.distinguisher === 'ByNamespace') return info.namespace;
  return '';
}
