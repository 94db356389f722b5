/**
 * Whether a set of rules covers another rule (kube's `validation.Covers`): the rule is split
 * into atoms (one verb, one API group, one resource, one resource name; or one verb and one
 * non-resource URL) and every atom must be allowed by some owner rule. Used by escalation
 * prevention and by the bootstrap policy's reconcile.
 */
import type { PolicyRule } from './rbac-rules.js';

function hasOrStar(list: readonly string[] | undefined, v: string): boolean {
  return list !== undefined && (list.includes('*') || list.includes(v));
}

function resourceCovers(owner: string, requested: string): boolean {
  if (owner === '*' || owner === requested) return true;
  // `*/sub` covers `anything/sub`.
  if (owner.startsWith('*/')) {
    const slash = requested.indexOf('/');
    return slash !== -1 && requested.slice(slash) === owner.slice(1);
  }
  return false;
}

function urlCovers(owner: string, requested: string): boolean {
  if (owner === '*' || owner === requested) return true;
  return owner.endsWith('*') && requested.startsWith(owner.slice(0, -1));
}

interface Atom {
  readonly verb: string;
  readonly group?: string;
  readonly resource?: string;
  readonly name?: string;
  readonly url?: string;
}

function atomsOf(rule: PolicyRule): Atom[] {
  const out: Atom[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const url of rule.nonResourceURLs ?? []) out.push({ verb, url });
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ verb, group, resource });
        else for (const name of names) out.push({ verb, group, resource, name });
      }
    }
  }
  return out;
}

function atomCovered(owner: PolicyRule, a: Atom): boolean {
  if (!hasOrStar(owner.verbs, a.verb)) return false;
  if (a.url !== undefined) return (owner.nonResourceURLs ?? []).some((u) => urlCovers(u, a.url ?? ''));
  if (!hasOrStar(owner.apiGroups, a.group ?? '')) return false;
  if (!(owner.resources ?? []).some((r) => resourceCovers(r, a.resource ?? ''))) return false;
  const names = owner.resourceNames ?? [];
  if (names.length === 0) return true;
  return a.name !== undefined && names.includes(a.name);
}

/** The rules of `servant` that `owner` does not cover, as atoms rendered like kube's messages. */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const a of atomsOf(rule)) {
      if (owner.some((o) => atomCovered(o, a))) continue;
      missing.push(
        a.url !== undefined
          ? { verbs: [a.verb], nonResourceURLs: [a.url] }
          : {
              verbs: [a.verb],
              apiGroups: [a.group ?? ''],
              resources: [a.resource ?? ''],
              ...(a.name === undefined ? {} : { resourceNames: [a.name] }),
            },
      );
    }
  }
  return missing;
}

/** `owner` covers every rule of `servant`. */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): boolean {
  return uncoveredRules(owner, servant).length === 0;
}

/** A rule rendered as kube prints it in escalation errors (`{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`). */
export function ruleString(rule: PolicyRule): string {
  const q = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${q(rule.apiGroups ?? [])}`);
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${q(rule.resources ?? [])}`);
  if ((rule.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${q(rule.resourceNames ?? [])}`);
  if ((rule.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${q(rule.nonResourceURLs ?? [])}`);
  parts.push(`Verbs:${q(rule.verbs ?? [])}`);
  return `{${parts.join(', ')}}`;
}
