/**
 * What validation needs to know about each built-in kind before looking inside it: whether it
 * is namespaced and which name rule kube-apiserver's `Validate<Kind>` passes to
 * `ValidateObjectMeta`. Both come from proto/kinds.yaml (`namespaced`, `nameRule`) through the
 * generated kind table, so they cannot drift from what the registry serves. Kinds not there
 * (custom resources) get kube's custom-resource rule: DNS-1123 subdomain names, scope unknown here.
 */
import { KINDS } from '../registry/kinds.js';
import type { NameRule } from '../registry/types.js';

export type { NameRule } from '../registry/types.js';

/** Scope and name rule of a built-in kind. */
export interface KindInfo {
  readonly namespaced: boolean;
  readonly name: NameRule;
}

/** The table key of a group and kind. */
export function kindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** Derived once from the generated (immutable) kind table; the versions of a kind agree. */
const TABLE: ReadonlyMap<string, KindInfo> = new Map(
  KINDS.kinds.map((k) => [kindKey(k.group, k.kind), { namespaced: k.namespaced, name: k.nameRule }]),
);

/** What is known about a built-in kind, or undefined for custom resources. */
export function kindInfo(group: string, kind: string): KindInfo | undefined {
  return TABLE.get(kindKey(group, kind));
}
