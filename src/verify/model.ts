/**
 * The reference model of `capstan verify`: what one namespace's ConfigMaps looked like at every
 * revision, written from the spec's "Resource version semantics" rules and independent of the
 * server's own read planning (`src/resource/read-plan.ts`).
 *
 * The server picks revisions; the model learns them from responses. A run is a sequence of
 * steps (one write, or one delete-collection of several objects); a step's `hi` is the first
 * revision at which its outcome is visible: the write's own resourceVersion for creates and
 * updates, and for deletes (whose response carries no deletion revision) the revision of a
 * consistent list made right after, an upper bound. Between the previous step's `hi` and such an
 * upper bound the state is ambiguous: the model answers with a base state and the names that
 * may or may not still be there.
 */

/** One ConfigMap as the model sees it. */
export interface ModelObject {
  readonly name: string;
  readonly value: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The resourceVersion it carries (its last write's revision). */
  readonly rv: bigint;
}

/** Objects by name. */
export type ModelState = ReadonlyMap<string, ModelObject>;

/** One change of a step. */
export interface ModelChange {
  readonly type: 'create' | 'update' | 'delete';
  readonly name: string;
  /** The new version (create, update) or the last version before the delete. */
  readonly object: ModelObject;
  /** The version before an update. */
  readonly prev?: ModelObject;
}

/** A step: one write, or a delete-collection (whose deletes happen in an unknown order). */
export interface ModelStep {
  readonly changes: readonly ModelChange[];
  /** The previous step's `hi` (exclusive lower bound of this step's revisions). */
  readonly lo: bigint;
  /** First revision showing the whole step; exact for creates and updates. */
  readonly hi: bigint;
  /** Whether `hi` is the step's exact revision (false for deletes: an upper bound). */
  readonly exact: boolean;
  /** The state after the step. */
  readonly state: ModelState;
}

/** The possible states at one revision: `base` minus any subset of `removable`. */
export interface StateAt {
  readonly base: ModelState;
  readonly removable: ReadonlySet<string>;
  /** Index of the step whose state `base` is (0: before the first step). */
  readonly step: number;
}

/** A selector the model can evaluate, with its query-string form. */
export interface ModelSelector {
  /** `labelSelector` value, if any. */
  readonly label?: string;
  /** `fieldSelector` value, if any. */
  readonly field?: string;
  matches(o: ModelObject): boolean;
}

/** The history of one run. */
export class Model {
  readonly #base: bigint;
  readonly #steps: ModelStep[] = [];
  #maxSeen: bigint;

  /** @param base a revision at which the namespace held no ConfigMaps (its creation). */
  constructor(base: bigint) {
    this.#base = base;
    this.#maxSeen = base;
  }

  /** The revision the run started at. */
  get base(): bigint {
    return this.#base;
  }

  /** Steps so far. */
  get steps(): readonly ModelStep[] {
    return this.#steps;
  }

  /** The current state. */
  get state(): ModelState {
    return this.#steps[this.#steps.length - 1]?.state ?? new Map<string, ModelObject>();
  }

  /** The `hi` of the last step (or the base). */
  get head(): bigint {
    return this.#steps[this.#steps.length - 1]?.hi ?? this.#base;
  }

  /** The largest revision any response showed so far. */
  get maxSeen(): bigint {
    return this.#maxSeen;
  }

  /** Records a revision a response showed. */
  saw(rv: bigint): void {
    if (rv > this.#maxSeen) this.#maxSeen = rv;
  }

  /** `hi` of step `i` (0: the base). */
  point(i: number): bigint {
    return i === 0 ? this.#base : (this.#steps[i - 1]?.hi ?? this.#base);
  }

  /** The state after step `i` (0: empty). */
  stateAfter(i: number): ModelState {
    return i === 0 ? new Map<string, ModelObject>() : (this.#steps[i - 1]?.state ?? new Map());
  }

  /** Records a create or update that the server answered with `object` (its rv exact). */
  write(type: 'create' | 'update', object: ModelObject): void {
    const prev = this.state.get(object.name);
    const state = new Map(this.state);
    state.set(object.name, object);
    const change: ModelChange =
      prev === undefined ? { type, name: object.name, object } : { type, name: object.name, object, prev };
    this.#steps.push({ changes: [change], lo: this.head, hi: object.rv, exact: true, state });
    this.saw(object.rv);
  }

  /**
   * Records deletes of `names` (one delete, or a delete-collection) made visible at or before
   * `upper` (a consistent list's revision after them).
   */
  delete(names: readonly string[], upper: bigint): void {
    const state = new Map(this.state);
    const changes: ModelChange[] = [];
    for (const name of names) {
      const object = state.get(name);
      if (object === undefined) continue;
      state.delete(name);
      changes.push({ type: 'delete', name, object });
    }
    if (changes.length === 0) return;
    this.#steps.push({ changes, lo: this.head, hi: upper, exact: false, state });
    this.saw(upper);
  }

  /** The possible states at revision `rv`. */
  at(rv: bigint): StateAt {
    let i = 0;
    while (i < this.#steps.length && (this.#steps[i]?.hi ?? 0n) <= rv) i++;
    const base = this.stateAfter(i);
    const next = this.#steps[i];
    if (next !== undefined && !next.exact && rv > next.lo) {
      return { base, removable: new Set(next.changes.map((c) => c.name)), step: i };
    }
    return { base, removable: new Set(), step: i };
  }
}

/** Objects of `state` a selector keeps, in name order (the order of keys in storage). */
export function selected(state: ModelState, sel: ModelSelector | undefined): ModelObject[] {
  const out = [...state.values()].filter((o) => sel === undefined || sel.matches(o));
  return out.sort((a, b) => compareNames(a.name, b.name));
}

/** Byte order of names (they are ASCII here). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether two objects are the same version (name, value, labels, rv). */
export function sameObject(a: ModelObject, b: ModelObject, checkRv = true): boolean {
  return (
    a.name === b.name &&
    a.value === b.value &&
    (!checkRv || a.rv === b.rv) &&
    JSON.stringify(sortedLabels(a.labels)) === JSON.stringify(sortedLabels(b.labels))
  );
}

function sortedLabels(l: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(l).sort((x, y) => compareNames(x[0], y[0]));
}

/** A short form of an object for messages: `a(v=x,tier=a)@12`. */
export function describeObject(o: ModelObject): string {
  const labels = sortedLabels(o.labels)
    .map(([k, v]) => `,${k}=${v}`)
    .join('');
  return `${o.name}(v=${o.value}${labels})@${o.rv}`;
}

/**
 * Whether `items` is one of the states `at` allows, filtered by `sel`: returns undefined when
 * it is, else what differs.
 */
export function stateMismatch(
  items: readonly ModelObject[],
  at: StateAt,
  sel: ModelSelector | undefined,
): string | undefined {
  const want = selected(at.base, sel);
  const got = new Map(items.map((o) => [o.name, o]));
  const problems: string[] = [];
  for (const o of want) {
    const g = got.get(o.name);
    if (g === undefined) {
      if (!at.removable.has(o.name)) problems.push(`missing ${describeObject(o)}`);
    } else if (!sameObject(g, o)) problems.push(`got ${describeObject(g)}, want ${describeObject(o)}`);
    got.delete(o.name);
  }
  for (const g of got.values()) problems.push(`unexpected ${describeObject(g)}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}
