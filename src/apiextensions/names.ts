/**
 * kube's naming controller, as a pure function: which of a CRD's requested names it may take
 * (`status.acceptedNames`) given the names other CRDs of its group have accepted, and the
 * NamesAccepted and Established conditions that follow. A name already accepted stays; a new
 * one is taken only when no other CRD of the group uses it; conflicts keep the old accepted name
 * and report kube's reason (`PluralConflict`, `SingularConflict`, `ShortNamesConflict`,
 * `KindConflict`, `ListKindConflict`) with `"<name>" is already in use`.
 */
import { transitionTime } from '../api/conditions.js';
import type { CrdCondition, CrdNames, Definition } from './definition.js';

/** The requested names with kube's defaults (singular: lower-case kind; listKind: kind + List). */
export function requestedNames(def: Definition): CrdNames {
  const n = def.names;
  return {
    ...n,
    singular: n.singular === '' ? n.kind.toLowerCase() : n.singular,
    listKind: n.listKind === '' ? `${n.kind}List` : n.listKind,
  };
}

/** The outcome of {@link computeNames}. */
export interface NamesOutcome {
  readonly acceptedNames: CrdNames;
  readonly namesAccepted: CrdCondition;
  /** The Established condition to store along (kube: `Installing` until the handler serves). */
  readonly established: CrdCondition;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** True when the accepted names are the requested ones. */
export function namesSettled(def: Definition): boolean {
  const r = requestedNames(def);
  const a = def.acceptedNames;
  return (
    r.plural === a.plural &&
    r.singular === a.singular &&
    r.kind === a.kind &&
    r.listKind === a.listKind &&
    sameList(r.shortNames, a.shortNames) &&
    sameList(r.categories, a.categories)
  );
}

function inUse(requested: string, accepted: string, used: ReadonlySet<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `${JSON.stringify(requested)} is already in use`;
}

/**
 * Names and conditions for `def`, given every CRD of the store (`def` itself included, as kube
 * reads its own accepted names back).
 */
export function computeNames(def: Definition, all: Iterable<Definition>): NamesOutcome {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of all) {
    if (other.group !== def.group) continue;
    const a = other.acceptedNames;
    for (const r of [a.plural, a.singular, ...a.shortNames]) resources.add(r);
    kinds.add(a.kind);
    kinds.add(a.listKind);
  }
  const requested = requestedNames(def);
  const accepted = def.acceptedNames;
  let plural = accepted.plural;
  let singular = accepted.singular;
  let shortNames = accepted.shortNames;
  let kind = accepted.kind;
  let listKind = accepted.listKind;
  let failure: { reason: string; message: string } | undefined;
  const check = (reason: string, message: string | undefined): boolean => {
    if (message === undefined) return true;
    failure = { reason, message };
    return false;
  };
  if (check('PluralConflict', inUse(requested.plural, accepted.plural, resources))) plural = requested.plural;
  if (check('SingularConflict', inUse(requested.singular, accepted.singular, resources)))
    singular = requested.singular;
  if (!sameList(requested.shortNames, accepted.shortNames)) {
    const mine = new Set(accepted.shortNames);
    const errs: string[] = [];
    for (const s of requested.shortNames) {
      if (mine.has(s) || s === accepted.plural || s === accepted.singular) continue;
      const e = inUse(s, '', resources);
      if (e !== undefined) errs.push(e);
    }
    const message = errs.length === 0 ? undefined : errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
    if (check('ShortNamesConflict', message)) shortNames = requested.shortNames;
  }
  if (check('KindConflict', inUse(requested.kind, accepted.kind, kinds))) kind = requested.kind;
  if (check('ListKindConflict', inUse(requested.listKind, accepted.listKind, kinds)))
    listKind = requested.listKind;
  const acceptedNames: CrdNames = {
    plural,
    singular,
    shortNames,
    kind,
    listKind,
    categories: requested.categories,
  };
  const namesAccepted: CrdCondition =
    failure === undefined
      ? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }
      : { type: 'NamesAccepted', status: 'False', reason: failure.reason, message: failure.message };
  const old = def.conditions.find((c) => c.type === 'Established');
  let established: CrdCondition = old ?? {
    type: 'Established',
    status: 'False',
    reason: 'NotAccepted',
    message: 'not all names are accepted',
  };
  if (established.status !== 'True' && namesAccepted.status === 'True') {
    established = {
      type: 'Established',
      status: 'False',
      reason: 'Installing',
      message: 'the initial names have been accepted',
    };
  }
  return { acceptedNames, namesAccepted, established };
}

/**
 * `conditions` with `cond` set (kube's `SetCRDCondition`): the transition time is `now` when the
 * status changes, else the old one.
 */
export function setCondition(conditions: CrdCondition[], cond: CrdCondition, now: string): void {
  const at = conditions.findIndex((c) => c.type === cond.type);
  const old = at < 0 ? undefined : conditions[at];
  const next: CrdCondition = {
    type: cond.type,
    status: cond.status,
    lastTransitionTime: transitionTime(old, cond.status, now),
    ...(cond.reason === undefined ? {} : { reason: cond.reason }),
    ...(cond.message === undefined ? {} : { message: cond.message }),
  };
  if (at < 0) conditions.push(next);
  else conditions[at] = next;
}

/** JSON of accepted names as kube writes them (empty lists omitted). */
export function namesJson(n: CrdNames): Record<string, unknown> {
  return {
    plural: n.plural,
    ...(n.singular === '' ? {} : { singular: n.singular }),
    ...(n.shortNames.length === 0 ? {} : { shortNames: [...n.shortNames] }),
    kind: n.kind,
    ...(n.listKind === '' ? {} : { listKind: n.listKind }),
    ...(n.categories.length === 0 ? {} : { categories: [...n.categories] }),
  };
}
