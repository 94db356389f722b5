/**
 * Label and node selectors compiled once into predicates: the scheduler evaluates them for every
 * node and every pod of a cycle, so parsing happens once per pod, never per node.
 */
import type { LabelSelector } from '../api/types/meta-v1.js';
import type { Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm } from '../api/types/core-v1.js';

/** Labels of an object (absent = none). */
export type Labels = Readonly<Record<string, string>> | null | undefined;

/** A compiled selector. */
export type LabelPredicate = (labels: Labels) => boolean;

/** Matches everything (an empty selector). */
export const EVERYTHING: LabelPredicate = () => true;
/** Matches nothing (a null selector, as in kube's `labels.Nothing()`). */
export const NOTHING: LabelPredicate = () => false;

function requirement(key: string, op: string, values: readonly string[]): LabelPredicate | undefined {
  switch (op) {
    case 'In': {
      const set = new Set(values);
      return (l) => l?.[key] !== undefined && set.has(l[key]);
    }
    case 'NotIn': {
      const set = new Set(values);
      return (l) => l?.[key] === undefined || !set.has(l[key]);
    }
    case 'Exists':
      return (l) => l?.[key] !== undefined;
    case 'DoesNotExist':
      return (l) => l?.[key] === undefined;
    case 'Gt':
    case 'Lt': {
      const bound = Number.parseInt(values[0] ?? '', 10);
      if (values.length !== 1 || Number.isNaN(bound)) return undefined;
      return (l) => {
        const raw = l?.[key];
        if (raw === undefined || !/^-?\d+$/.test(raw)) return false;
        const v = Number.parseInt(raw, 10);
        return op === 'Gt' ? v > bound : v < bound;
      };
    }
    default:
      return undefined;
  }
}

function all(preds: readonly LabelPredicate[]): LabelPredicate {
  if (preds.length === 0) return EVERYTHING;
  if (preds.length === 1) return preds[0] as LabelPredicate;
  return (l) => {
    for (const p of preds) if (!p(l)) return false;
    return true;
  };
}

/**
 * A metav1.LabelSelector as a predicate. `undefined` (a nil selector) matches nothing, `{}`
 * matches everything; an invalid selector matches nothing (kube refuses it at validation).
 */
export function compileLabelSelector(sel: LabelSelector | undefined | null): LabelPredicate {
  if (sel === undefined || sel === null) return NOTHING;
  const preds: LabelPredicate[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) preds.push((l) => l?.[k] === v);
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'Gt' || e.operator === 'Lt') return NOTHING;
    const p = requirement(e.key ?? '', e.operator ?? '', e.values ?? []);
    if (p === undefined) return NOTHING;
    preds.push(p);
  }
  return all(preds);
}

/** A `{key: value}` map (nodeSelector, service selector) as a predicate; empty matches all. */
export function compileMapSelector(map: Readonly<Record<string, string>> | undefined): LabelPredicate {
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return EVERYTHING;
  return (l) => {
    for (const [k, v] of entries) if (l?.[k] !== v) return false;
    return true;
  };
}

/** A compiled node predicate. */
export type NodePredicate = (node: Node) => boolean;

function fieldRequirement(r: NodeSelectorRequirement): NodePredicate | undefined {
  if (r.key !== 'metadata.name') return undefined;
  const p = requirement('n', r.operator ?? '', r.values ?? []);
  if (p === undefined || r.operator === 'Gt' || r.operator === 'Lt') return undefined;
  return (node) => p({ n: node.metadata.name ?? '' });
}

/** One NodeSelectorTerm; a term with no requirements matches nothing (kube's rule). */
export function compileNodeSelectorTerm(term: NodeSelectorTerm): NodePredicate {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return () => false;
  const labelPreds: LabelPredicate[] = [];
  for (const e of exprs) {
    const p = requirement(e.key ?? '', e.operator ?? '', e.values ?? []);
    if (p === undefined) return () => false;
    labelPreds.push(p);
  }
  const fieldPreds: NodePredicate[] = [];
  for (const f of fields) {
    const p = fieldRequirement(f);
    if (p === undefined) return () => false;
    fieldPreds.push(p);
  }
  const labels = all(labelPreds);
  return (node) => {
    if (!labels(node.metadata.labels)) return false;
    for (const p of fieldPreds) if (!p(node)) return false;
    return true;
  };
}

/** A NodeSelector: the terms are ORed. */
export function compileNodeSelector(sel: NodeSelector): NodePredicate {
  const terms = (sel.nodeSelectorTerms ?? []).map(compileNodeSelectorTerm);
  return (node) => {
    for (const t of terms) if (t(node)) return true;
    return false;
  };
}
