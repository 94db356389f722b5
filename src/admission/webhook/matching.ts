/**
 * Which webhooks a request goes to (kube's `ShouldCallHook` predicates): the rules (operation,
 * group, version, resource with `*` and `<resource>/<subresource>` forms, scope), `matchPolicy`
 * Equivalent (the same objects under another group or version: in Capstan, the served types that
 * share the request's storage), the object selector (new or old object's labels), and the
 * namespace selector (the namespace's labels; a Namespace create or update is matched on its own
 * labels). The configuration kinds themselves never go to webhooks.
 */
import { notFound } from '../../api/errors.js';
import type { KubeObject } from '../../api/object.js';
import type { Registry, ResourceType } from '../../registry/types.js';
import { selectorMatches } from '../../validation/meta.js';
import type { AdmissionAttributes } from '../types.js';
import type { WebhookRule, WebhookSpec } from './types.js';

/** Kinds whose writes no webhook sees (kube's `IsExemptAdmissionConfigurationResource`). */
const EXEMPT_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** True for writes of the admission configuration kinds (never sent to webhooks). */
export function isExempt(attrs: AdmissionAttributes): boolean {
  return attrs.type.group === 'admissionregistration.k8s.io' && EXEMPT_KINDS.has(attrs.type.kind);
}

/** True when the request addresses the core Namespace resource itself. */
export function isNamespaceResource(type: ResourceType): boolean {
  return type.group === '' && type.plural === 'namespaces';
}

function exactOrWildcard(items: readonly string[], requested: string): boolean {
  return items.some((i) => i === '*' || i === requested);
}

function scopeMatches(rule: WebhookRule, attrs: AdmissionAttributes): boolean {
  if (rule.scope === '*') return true;
  const clusterScoped = isNamespaceResource(attrs.type) || attrs.namespace === '';
  return rule.scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

function resourceMatches(rule: WebhookRule, resource: string, subresource: string): boolean {
  return rule.resources.some((r) => {
    const slash = r.indexOf('/');
    const res = slash === -1 ? r : r.slice(0, slash);
    const sub = slash === -1 ? '' : r.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

/** Whether `rule` matches the request as addressed to `type` (the request's or an equivalent). */
export function ruleMatches(rule: WebhookRule, attrs: AdmissionAttributes, type: ResourceType): boolean {
  return (
    scopeMatches(rule, attrs) &&
    exactOrWildcard(rule.operations, attrs.operation) &&
    exactOrWildcard(rule.apiGroups, type.group) &&
    exactOrWildcard(rule.apiVersions, type.version) &&
    resourceMatches(rule, type.plural, attrs.subresource ?? '')
  );
}

/**
 * The resource type the webhook is called for: the request's own when a rule matches it, else
 * (matchPolicy Equivalent) the first equivalent type a rule matches; undefined when none does.
 */
export function invocationType(
  webhook: Pick<WebhookSpec, 'rules' | 'matchPolicy'>,
  attrs: AdmissionAttributes,
  registry: Registry,
): ResourceType | undefined {
  if (webhook.rules.some((r) => ruleMatches(r, attrs, attrs.type))) return attrs.type;
  if (webhook.matchPolicy !== 'Equivalent') return undefined;
  const equivalents = equivalentTypes(attrs.type, registry);
  for (const rule of webhook.rules) {
    for (const t of equivalents) if (ruleMatches(rule, attrs, t)) return t;
  }
  return undefined;
}

/** Other served group/versions of the same stored objects (kube's equivalent resource mapper). */
export function equivalentTypes(type: ResourceType, registry: Registry): ResourceType[] {
  if (type.storageResource === '' || type.virtual) return [];
  return registry.all().filter((t) => t !== type && !t.virtual && t.storageResource === type.storageResource);
}

function labelsOf(obj: KubeObject | undefined): Map<string, string> | undefined {
  if (obj === undefined) return undefined;
  return new Map(Object.entries(obj.metadata.labels ?? {}));
}

function selectorEmpty(selector: Record<string, unknown>): boolean {
  const ml = selector['matchLabels'];
  const me = selector['matchExpressions'];
  return (
    (ml === undefined || ml === null || Object.keys(ml).length === 0) &&
    (!Array.isArray(me) || me.length === 0)
  );
}

/** The object selector: the new or the old object's labels match (kube's object matcher). */
export function objectSelectorMatches(
  webhook: Pick<WebhookSpec, 'objectSelector'>,
  attrs: AdmissionAttributes,
): boolean {
  if (selectorEmpty(webhook.objectSelector)) return true;
  const now = labelsOf(attrs.object);
  const old = labelsOf(attrs.oldObject);
  return (
    (now !== undefined && selectorMatches(webhook.objectSelector, now)) ||
    (old !== undefined && selectorMatches(webhook.objectSelector, old))
  );
}

/** True when the namespace selector needs no lookup: it is empty or the request is cluster-scoped. */
function namespaceSelectorTrivial(
  webhook: Pick<WebhookSpec, 'namespaceSelector'>,
  attrs: AdmissionAttributes,
): boolean {
  if (attrs.namespace === '' && !isNamespaceResource(attrs.type)) return true;
  return selectorEmpty(webhook.namespaceSelector);
}

/**
 * The namespace whose labels the namespace selector is matched against: `object` for a Namespace
 * create or update (its own labels), else the name of the namespace to look up.
 */
export function namespaceLabelSource(
  attrs: AdmissionAttributes,
): { readonly labels: Readonly<Record<string, string>> } | { readonly lookup: string } {
  if (isNamespaceResource(attrs.type)) {
    if (
      attrs.subresource === undefined &&
      (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE') &&
      attrs.object !== undefined
    ) {
      return { labels: attrs.object.metadata.labels ?? {} };
    }
    return { lookup: attrs.name };
  }
  return { lookup: attrs.namespace };
}

/**
 * Whether the object selector and the namespace selector both select the request; the namespace's
 * labels are looked up only when the namespace selector needs them.
 * @throws ApiError (NotFound) when the namespace to look up does not exist
 */
export async function selectorsMatch(
  spec: Pick<WebhookSpec, 'objectSelector' | 'namespaceSelector'>,
  attrs: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Readonly<Record<string, string>> | undefined>,
): Promise<boolean> {
  if (!objectSelectorMatches(spec, attrs)) return false;
  if (namespaceSelectorTrivial(spec, attrs)) return true;
  const source = namespaceLabelSource(attrs);
  if ('labels' in source) return namespaceSelectorMatches(spec, source.labels);
  const found = await namespaceLabels(source.lookup);
  if (found === undefined) throw notFound({ resource: 'namespaces', group: '', name: source.lookup });
  return namespaceSelectorMatches(spec, found);
}

/** Whether `labels` satisfy the webhook's namespace selector. */
function namespaceSelectorMatches(
  webhook: Pick<WebhookSpec, 'namespaceSelector'>,
  labels: Readonly<Record<string, string>>,
): boolean {
  return selectorMatches(webhook.namespaceSelector, new Map(Object.entries(labels)));
}
