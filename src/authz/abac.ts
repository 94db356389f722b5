/**
 * `--authorization-mode=ABAC` with `--authorization-policy-file`: one JSON policy per line
 * (`abac.authorization.kubernetes.io/v1beta1` Policy objects, or the unversioned v0 form where an
 * empty field matches anything), as kube's ABAC authorizer: a policy matches the user (name or
 * `*`) or a group of the user, `readonly` policies only get/list/watch, and resource requests
 * need the namespace, resource and API group (each or `*`), non-resource requests the path
 * (exact, `*`, or a `prefix*`). A match allows; no match is no opinion.
 */
import { readFileSync } from 'node:fs';
import type { Attributes } from './attributes.js';
import {
  NO_OPINION,
  type Authorization,
  type Authorizer,
  type NonResourceRuleInfo,
  type ResourceRuleInfo,
  type RulesInfo,
} from './authorizer.js';

/** One policy's fields (v1beta1 spec, or a v0 line). */
interface PolicySpec {
  readonly user?: string;
  readonly group?: string;
  readonly readonly?: boolean;
  readonly apiGroup?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly nonResourcePath?: string;
}

interface Policy {
  readonly spec: PolicySpec;
  /** v0: an empty field matches anything. */
  readonly v0: boolean;
}

/** The policy file is unusable. */
export class AbacPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbacPolicyError';
  }
}

/** Parses the policy file text. @throws AbacPolicyError naming the bad line. */
export function parseAbacPolicies(text: string, file = 'policy file'): Policy[] {
  const out: Policy[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new AbacPolicyError(`${file}:${i + 1}: ${(err as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new AbacPolicyError(`${file}:${i + 1}: not a JSON object`);
    }
    const o = value as Record<string, unknown>;
    if (o['apiVersion'] === undefined) {
      out.push({ spec: o, v0: true });
      return;
    }
    if (o['apiVersion'] !== 'abac.authorization.kubernetes.io/v1beta1' || o['kind'] !== 'Policy') {
      throw new AbacPolicyError(
        `${file}:${i + 1}: unknown apiVersion/kind ${JSON.stringify(o['apiVersion'])}/${JSON.stringify(o['kind'])}`,
      );
    }
    out.push({ spec: o['spec'] ?? {}, v0: false });
  });
  return out;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

function field(p: Policy, value: string | undefined, actual: string): boolean {
  const v = value ?? '';
  if (p.v0 && v === '') return true;
  return v === '*' || v === actual;
}

function subjectMatches(p: Policy, subject: Attributes['user']): boolean {
  const { user, group } = p.spec;
  if (p.v0) {
    if ((user ?? '') !== '' && user !== '*' && user !== subject.name) return false;
    if ((group ?? '') !== '' && group !== '*' && !subject.groups.includes(group ?? '')) return false;
    return true;
  }
  let matched = false;
  if ((user ?? '') !== '') {
    if (user === '*') matched = true;
    else if (user !== subject.name) return false;
    else matched = true;
  }
  if ((group ?? '') !== '') {
    if (group === '*' || subject.groups.includes(group ?? '')) matched = true;
    else return false;
  }
  return matched;
}

/**
 * What a policy grants, as kube reads it: a v0 line's empty namespace and resource are `*`, its
 * API group always is, and with neither namespace nor resource it grants every path.
 */
function grants(p: Policy): { namespace: string; resource: string; apiGroup: string; path: string } {
  const { namespace = '', resource = '', apiGroup = '', nonResourcePath = '' } = p.spec;
  if (!p.v0) return { namespace, resource, apiGroup, path: nonResourcePath };
  return {
    namespace: namespace === '' ? '*' : namespace,
    resource: resource === '' ? '*' : resource,
    apiGroup: '*',
    path: namespace === '' && resource === '' ? '*' : nonResourcePath,
  };
}

function matches(p: Policy, attrs: Attributes): boolean {
  if (!subjectMatches(p, attrs.user)) return false;
  if (p.spec.readonly === true && !READ_ONLY.has(attrs.verb)) return false;
  if (attrs.isResourceRequest) {
    if (!p.v0 && p.spec.nonResourcePath !== undefined && p.spec.resource === undefined) return false;
    return (
      field(p, p.spec.namespace, attrs.namespace) &&
      field(p, p.spec.resource, attrs.resource) &&
      field(p, p.spec.apiGroup, attrs.apiGroup)
    );
  }
  const path = p.spec.nonResourcePath ?? '';
  if (p.v0 && path === '') return true;
  if (path === '*' || path === attrs.path) return true;
  return path.endsWith('*') && attrs.path.startsWith(path.replace(/\*+$/, ''));
}

/** The ABAC authorizer over a policy file's lines. */
export class AbacAuthorizer implements Authorizer {
  readonly name = 'ABAC';
  readonly #policies: readonly Policy[];

  constructor(policies: readonly Policy[]) {
    this.#policies = policies;
  }

  /** Reads `--authorization-policy-file`. @throws AbacPolicyError */
  static fromFile(path: string): AbacAuthorizer {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new AbacPolicyError(`--authorization-policy-file ${path}: ${(err as Error).message}`);
    }
    return new AbacAuthorizer(parseAbacPolicies(text, path));
  }

  authorize(attrs: Attributes): Authorization {
    for (const p of this.#policies) if (matches(p, attrs)) return { decision: 'allow', reason: '' };
    return { ...NO_OPINION, reason: 'No policy matched.' };
  }

  /** The rules of the user's policies for `namespace` (kube's ABAC rule resolver): complete. */
  rulesFor(user: Attributes['user'], namespace: string): RulesInfo {
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    for (const p of this.#policies) {
      if (!subjectMatches(p, user)) continue;
      const g = grants(p);
      if (g.namespace !== '*' && g.namespace !== namespace) continue;
      const verbs = p.spec.readonly === true ? [...READ_ONLY] : ['*'];
      if (g.resource !== '') {
        resourceRules.push({ verbs, apiGroups: [g.apiGroup], resources: [g.resource], resourceNames: [] });
      }
      if (g.path !== '') nonResourceRules.push({ verbs, nonResourceURLs: [g.path] });
    }
    return { resourceRules, nonResourceRules, incomplete: false };
  }
}
