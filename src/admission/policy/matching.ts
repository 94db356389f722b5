/**
 * Whether a policy's `matchConstraints` (and its binding's `matchResources`) select a request:
 * kube's matcher for admission policies, on the webhook matcher's rule, selector and
 * equivalent-resource code (src/admission/webhook/matching.ts), plus `resourceNames` and
 * `excludeResourceRules`.
 */
import type { Registry, ResourceType } from '../../registry/types.js';
import type { AdmissionAttributes } from '../types.js';
import { equivalentTypes, ruleMatches, selectorsMatch } from '../webhook/matching.js';
import type { MatchResources, NamedRule } from './spec.js';

function namedRuleMatches(rule: NamedRule, attrs: AdmissionAttributes, type: ResourceType): boolean {
  if (rule.resourceNames.length > 0 && !rule.resourceNames.includes(attrs.name)) return false;
  return ruleMatches(rule, attrs, type);
}

/** The type a rule list matches the request as (its own, or an equivalent under Equivalent). */
function rulesMatch(
  rules: readonly NamedRule[],
  policy: 'Exact' | 'Equivalent',
  attrs: AdmissionAttributes,
  registry: Registry,
): ResourceType | undefined {
  if (rules.some((r) => namedRuleMatches(r, attrs, attrs.type))) return attrs.type;
  if (policy !== 'Equivalent') return undefined;
  for (const t of equivalentTypes(attrs.type, registry)) {
    if (rules.some((r) => namedRuleMatches(r, attrs, t))) return t;
  }
  return undefined;
}

/** What matching reads. */
export interface MatchDeps {
  readonly registry: Registry;
  /** A namespace's labels, undefined when it does not exist. */
  readonly namespaceLabels: (name: string) => Promise<Readonly<Record<string, string>> | undefined>;
}

/**
 * The type `m` selects the request as, or undefined. Empty `resourceRules` select every resource
 * (a binding's `matchResources` narrowing nothing).
 * @throws ApiError when the request's namespace does not exist and a namespace selector needs it
 */
export async function matchResources(
  deps: MatchDeps,
  m: MatchResources,
  attrs: AdmissionAttributes,
): Promise<ResourceType | undefined> {
  if (rulesMatch(m.excludeRules, m.matchPolicy, attrs, deps.registry) !== undefined) return undefined;
  const type = m.rules.length === 0 ? attrs.type : rulesMatch(m.rules, m.matchPolicy, attrs, deps.registry);
  if (type === undefined) return undefined;
  if (!(await selectorsMatch(m, attrs, deps.namespaceLabels))) return undefined;
  return type;
}
