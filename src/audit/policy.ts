/**
 * The audit policy (`--audit-policy-file`, `audit.k8s.io/v1` Policy) and its evaluation, as
 * kube-apiserver's `pkg/audit/policy`: rules are tried in order and the first that matches
 * decides the level; a request no rule matches is not audited (level None). A rule matches when
 * every list it sets matches (`users`, `userGroups`, `verbs`; then `namespaces`/`resources` for
 * resource requests or `nonResourceURLs` for the others). The policy's `omitStages` join each
 * rule's; `omitManagedFields` on a rule overrides the policy's.
 *
 * Loading is strict where kube is strict (validation: levels, stages, URL wildcards, resource
 * groups) and lenient where kube falls back to lenient decoding (unknown fields are a warning).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { UserInfo } from '../api/user.js';
import type { RequestInfo } from '../http/request-info.js';
import { invalid, notSupported, required, type FieldError } from '../validation/field-error.js';
import { isDNS1123Subdomain } from '../validation/formats.js';

/** Audit levels, least first. */
export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof LEVELS)[number];

/** Audit stages. */
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof STAGES)[number];

/** `level` as a number for comparisons (None 0 … RequestResponse 3). */
export function levelRank(level: AuditLevel): number {
  return LEVELS.indexOf(level);
}

/** One `resources` entry of a rule. */
export interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

/** One rule, normalized (absent lists are empty). */
export interface PolicyRule {
  readonly level: AuditLevel;
  readonly users: readonly string[];
  readonly userGroups: readonly string[];
  readonly verbs: readonly string[];
  readonly resources: readonly GroupResources[];
  readonly namespaces: readonly string[];
  readonly nonResourceURLs: readonly string[];
  /** The rule's own stages joined with the policy's. */
  readonly omitStages: ReadonlySet<AuditStage>;
  readonly omitManagedFields: boolean | undefined;
}

/** What the policy says about one request (kube's `RequestAuditConfig`). */
export interface RequestAuditConfig {
  readonly level: AuditLevel;
  readonly omitStages: ReadonlySet<AuditStage>;
  readonly omitManagedFields: boolean;
}

/** A loaded policy. */
export interface AuditPolicy {
  readonly rules: readonly PolicyRule[];
  readonly omitStages: ReadonlySet<AuditStage>;
  readonly omitManagedFields: boolean;
  /** Lenient-decoding warnings (unknown fields), for the start log. */
  readonly warnings: readonly string[];
}

/** A policy file kube-apiserver would refuse to start with. */
export class AuditPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuditPolicyError';
  }
}

const POLICY_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const RULE_FIELDS = new Set([
  'level',
  'users',
  'userGroups',
  'verbs',
  'resources',
  'namespaces',
  'nonResourceURLs',
  'omitStages',
  'omitManagedFields',
]);
const GR_FIELDS = new Set(['group', 'resources', 'resourceNames']);

type Doc = Record<string, unknown>;

function strings(value: unknown, at: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new AuditPolicyError(`failed decoding: ${at}: expected a list of strings`);
  return value as string[];
}

function unknownFields(obj: Doc, known: ReadonlySet<string>, at: string, out: string[]): void {
  for (const k of Object.keys(obj)) if (!known.has(k)) out.push(`unknown field "${at}${k}"`);
}

function aggregate(errors: readonly FieldError[]): string {
  const texts = errors.map((e) => `${e.field}: ${e.message}`);
  return texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
}

function validateOmitStages(stages: readonly string[], at: string, errs: FieldError[]): void {
  stages.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s))
      errs.push(invalid(`${at}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`));
  });
}

function parseRule(
  raw: unknown,
  i: number,
  policyOmit: readonly string[],
  errs: FieldError[],
  warnings: string[],
): PolicyRule {
  const at = `rules[${i}]`;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new AuditPolicyError(`failed decoding: ${at}: expected an object`);
  const r = raw as Doc;
  unknownFields(r, RULE_FIELDS, `${at}.`, warnings);
  const level = r['level'] ?? '';
  if (level === '') errs.push(required(`${at}.level`));
  else if (!(LEVELS as readonly unknown[]).includes(level))
    errs.push(notSupported(`${at}.level`, level, LEVELS));
  const nonResourceURLs = strings(r['nonResourceURLs'], `${at}.nonResourceURLs`);
  nonResourceURLs.forEach((url, j) => {
    if (url === '*') return;
    const field = `${at}.nonResourceURLs[${j}]`;
    if (!url.startsWith('/'))
      errs.push(invalid(field, url, "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*'))
      errs.push(
        invalid(field, url, "non-resource URL wildcards '*' must be the final character of the rule"),
      );
  });
  const rawResources = r['resources'] ?? [];
  if (!Array.isArray(rawResources))
    throw new AuditPolicyError(`failed decoding: ${at}.resources: expected a list`);
  const resources = rawResources.map((g: unknown, j): GroupResources => {
    const gat = `${at}.resources[${j}]`;
    if (g === null || typeof g !== 'object')
      throw new AuditPolicyError(`failed decoding: ${gat}: expected an object`);
    const gr = g as Doc;
    unknownFields(gr, GR_FIELDS, `${gat}.`, warnings);
    const group = gr['group'] ?? '';
    if (typeof group !== 'string')
      throw new AuditPolicyError(`failed decoding: ${gat}.group: expected a string`);
    const out = {
      group,
      resources: strings(gr['resources'], `${gat}.resources`),
      resourceNames: strings(gr['resourceNames'], `${gat}.resourceNames`),
    };
    if (group !== '' && group !== '*') {
      const msgs = isDNS1123Subdomain(group);
      if (msgs.length > 0) errs.push(invalid(`${at}.resources.group`, group, msgs.join(',')));
    }
    if (out.resourceNames.length > 0 && out.resources.length === 0)
      errs.push(
        invalid(
          `${at}.resources.resourceNames`,
          out.resourceNames,
          'using resourceNames requires at least one resource',
        ),
      );
    return out;
  });
  const omit = strings(r['omitStages'], `${at}.omitStages`);
  validateOmitStages(omit, `${at}.omitStages`, errs);
  const namespaces = strings(r['namespaces'], `${at}.namespaces`);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0))
    errs.push(
      invalid(
        `${at}.nonResourceURLs`,
        nonResourceURLs,
        'rules cannot apply to both regular resources and non-resource URLs',
      ),
    );
  const omf = r['omitManagedFields'];
  if (omf !== undefined && omf !== null && typeof omf !== 'boolean')
    throw new AuditPolicyError(`failed decoding: ${at}.omitManagedFields: expected a boolean`);
  return {
    level: level as AuditLevel,
    users: strings(r['users'], `${at}.users`),
    userGroups: strings(r['userGroups'], `${at}.userGroups`),
    verbs: strings(r['verbs'], `${at}.verbs`),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: new Set([...policyOmit, ...omit] as AuditStage[]),
    omitManagedFields: typeof omf === 'boolean' ? omf : undefined,
  };
}

/**
 * Parses a policy document (YAML or JSON).
 * @throws AuditPolicyError with kube's wording (`loaded illegal policy with 0 rules`, field
 *   errors such as `rules[0].level: Required value`).
 */
export function parsePolicy(text: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new AuditPolicyError(`failed decoding: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new AuditPolicyError("failed decoding: Object 'Kind' is missing in policy");
  const d = doc as Doc;
  const kind = d['kind'];
  const apiVersion = d['apiVersion'];
  if (typeof kind !== 'string' || kind === '')
    throw new AuditPolicyError(
      `failed decoding: Object 'Kind' is missing in ${JSON.stringify(text.slice(0, 80))}`,
    );
  if (apiVersion !== 'audit.k8s.io/v1' || kind !== 'Policy') {
    const [group = '', version = ''] = typeof apiVersion === 'string' ? apiVersion.split('/') : [];
    throw new AuditPolicyError(
      `failed decoding: no kind "${kind}" is registered for version "${String(apiVersion)}" in scheme (group ${JSON.stringify(group)}, version ${JSON.stringify(version)})`,
    );
  }
  const warnings: string[] = [];
  unknownFields(d, POLICY_FIELDS, '', warnings);
  const errs: FieldError[] = [];
  const policyOmit = strings(d['omitStages'], 'omitStages');
  validateOmitStages(policyOmit, 'omitStages', errs);
  const rawRules = d['rules'] ?? [];
  if (!Array.isArray(rawRules)) throw new AuditPolicyError('failed decoding: rules: expected a list');
  const rules = rawRules.map((r: unknown, i) => parseRule(r, i, policyOmit, errs, warnings));
  if (errs.length > 0) throw new AuditPolicyError(aggregate(errs));
  if (rules.length === 0) throw new AuditPolicyError('loaded illegal policy with 0 rules');
  const omf = d['omitManagedFields'];
  return {
    rules,
    omitStages: new Set(policyOmit as AuditStage[]),
    omitManagedFields: omf === true,
    warnings:
      warnings.length === 0
        ? []
        : [`Audit policy contains errors, falling back to lenient decoding: ${warnings.join(', ')}`],
  };
}

/**
 * Reads `--audit-policy-file`.
 * @throws AuditPolicyError `loading audit policy file: <why>: from file <path>`, kube's start-up error.
 */
export function loadPolicyFile(path: string): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AuditPolicyError(
      `loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${(err as Error).message}`,
    );
  }
  try {
    return parsePolicy(text);
  } catch (err) {
    throw new AuditPolicyError(`loading audit policy file: ${(err as Error).message}: from file ${path}`);
  }
}

function matchesResource(r: PolicyRule, info: RequestInfo): boolean {
  if (!info.isResourceRequest) return false;
  if (r.namespaces.length > 0 && !r.namespaces.includes(info.namespace)) return false;
  if (r.resources.length === 0) return true;
  const { resource, subresource, name } = info;
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const gr of r.resources) {
    if (gr.group !== info.apiGroup && gr.group !== '*') continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource !== '' && res.startsWith('*/') && subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && resource === res.slice(0, -2)) return true;
    }
  }
  return false;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function ruleMatches(r: PolicyRule, user: UserInfo | undefined, info: RequestInfo): boolean {
  if (r.users.length > 0 && (user === undefined || !r.users.includes(user.name))) return false;
  if (r.userGroups.length > 0 && (user === undefined || !user.groups.some((g) => r.userGroups.includes(g))))
    return false;
  if (r.verbs.length > 0 && !r.verbs.includes(info.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return matchesResource(r, info);
  if (r.nonResourceURLs.length > 0)
    return !info.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(info.path, spec));
  return true;
}

/**
 * The policy's answer for a request by `user` (undefined: authentication failed) about `info`.
 * No matching rule: level None with the policy's stages.
 */
export function evaluatePolicy(
  policy: AuditPolicy,
  user: UserInfo | undefined,
  info: RequestInfo,
): RequestAuditConfig {
  for (const r of policy.rules) {
    if (ruleMatches(r, user, info)) {
      return {
        level: r.level,
        omitStages: r.omitStages,
        omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields,
      };
    }
  }
  return { level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
}
