/**
 * The operations of a verify run, as plain data (so that fast-check can shrink them and a
 * counterexample prints as readable steps), their generators, and the selectors they use.
 */
import fc from 'fast-check';
import type { ModelObject, ModelSelector } from './model.js';

/** Object names of a run (one namespace; lists are in this order). */
// Names sort after the objects others keep in a namespace (`kube-root-ca.crt`), so that with the
// owned-label selector a chunk that ends at the last of the tool's objects ends the list.
export const NAMES = ['va', 'vb', 'vc', 'vd'] as const;
/** Name of the end marker every watch must deliver last. */
export const MARKER = 'zz-end';
const VALUES = ['x', 'y', 'z'] as const;
const TIERS = ['a', 'b', ''] as const;

/** Where a list reads: the rows of the spec's table. */
export type ListRv = 'unset' | '0' | 'point' | 'old' | 'future';
/** Where a watch starts. */
export type WatchFrom = 'unset' | '0' | 'point' | 'list' | 'old';

/** One operation. `point` picks the revision of the step that many steps back (0: the last). */
export type Op =
  | { readonly op: 'create'; readonly name: string; readonly value: string; readonly tier: string }
  | { readonly op: 'update'; readonly name: string; readonly value: string; readonly tier: string }
  | { readonly op: 'updateStale'; readonly name: string }
  | { readonly op: 'delete'; readonly name: string }
  | { readonly op: 'deleteCollection'; readonly selector: number }
  | {
      readonly op: 'list';
      readonly rv: ListRv;
      readonly match: '' | 'Exact' | 'NotOlderThan';
      readonly limit: number;
      readonly selector: number;
      readonly point: number;
      /** For a paged list: probe the second chunk with resourceVersion `0` and with a revision. */
      readonly probeContinue: boolean;
    }
  | {
      readonly op: 'watch';
      readonly from: WatchFrom;
      readonly point: number;
      readonly bookmarks: boolean;
      readonly initialEvents: boolean;
      readonly selector: number;
    };

/** Operation groups of `--only`. */
export const GROUPS = ['writes', 'lists', 'watch', 'errors'] as const;
export type Group = (typeof GROUPS)[number];

function labelSel(query: string, test: (tier: string | undefined) => boolean): ModelSelector {
  return { label: query, matches: (o: ModelObject) => test(o.labels['tier']) };
}

/**
 * Selectors of lists and delete-collections; index 0 is none. Watches use only the first
 * `WATCH_SELECTORS`, which all keep the end marker (labelled `tier=a`).
 */
export const SELECTORS: readonly (ModelSelector | undefined)[] = [
  undefined,
  labelSel('tier=a', (t) => t === 'a'),
  labelSel('tier in (a,b)', (t) => t === 'a' || t === 'b'),
  labelSel('tier!=b', (t) => t !== 'b'),
  labelSel('tier', (t) => t !== undefined),
  { field: 'metadata.name!=vb', matches: (o) => o.name !== 'vb' },
  {
    label: 'tier=a',
    field: 'metadata.name!=vc',
    matches: (o) => o.labels['tier'] === 'a' && o.name !== 'vc',
  },
  labelSel('!tier', (t) => t === undefined),
  { field: 'metadata.name=va', matches: (o) => o.name === 'va' },
];
export const WATCH_SELECTORS = 7;

/**
 * The label every object the tool creates carries. Every list, watch and delete-collection
 * selects on it, so objects others keep in the namespace (the `kube-root-ca.crt` ConfigMap of
 * kube's root-CA publisher) are neither seen nor deleted.
 */
export const OWNED_LABEL = 'capstan.dev/verify-object';

/** The selector of `sel` as the user reads it (no owned-label requirement). */
export function selectorText(sel: ModelSelector | undefined): string {
  if (sel === undefined) return '';
  const parts: string[] = [];
  if (sel.label !== undefined) parts.push(`labelSelector=${encodeURIComponent(sel.label)}`);
  if (sel.field !== undefined) parts.push(`fieldSelector=${encodeURIComponent(sel.field)}`);
  return parts.join('&');
}

/** The query parameters of a selector, with the owned-label requirement. */
export function selectorQuery(sel: ModelSelector | undefined): string {
  const label = sel?.label === undefined ? OWNED_LABEL : `${OWNED_LABEL},${sel.label}`;
  const parts = [`labelSelector=${encodeURIComponent(label)}`];
  if (sel?.field !== undefined) parts.push(`fieldSelector=${encodeURIComponent(sel.field)}`);
  return parts.join('&');
}

const name = fc.constantFrom(...NAMES);
const value = fc.constantFrom(...VALUES);
const tier = fc.constantFrom(...TIERS);

/** Writes with their weights: more creates than deletes, so that lists have pages to read. */
const writes: [fc.Arbitrary<Op>, number][] = [
  [fc.record({ op: fc.constant('create' as const), name, value, tier }), 60],
  [fc.record({ op: fc.constant('update' as const), name, value, tier }), 40],
  [fc.record({ op: fc.constant('delete' as const), name }), 20],
  [
    fc.record({
      op: fc.constant('deleteCollection' as const),
      selector: fc.integer({ min: 0, max: SELECTORS.length - 1 }),
    }),
    10,
  ],
];

const list = (rvs: readonly ListRv[]): fc.Arbitrary<Op> =>
  fc.record({
    op: fc.constant('list' as const),
    rv: fc.constantFrom(...rvs),
    match: fc.constantFrom('' as const, 'Exact' as const, 'NotOlderThan' as const),
    limit: fc.constantFrom(0, 0, 1, 1, 1, 2, 3),
    // Half the lists have no selector: those check remainingItemCount and exact chunk sizes.
    selector: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: SELECTORS.length - 1 })),
    point: fc.nat({ max: 4 }),
    probeContinue: fc.boolean(),
  });

const watch: fc.Arbitrary<Op> = fc.record({
  op: fc.constant('watch' as const),
  from: fc.constantFrom('unset' as const, '0' as const, 'point' as const, 'list' as const, 'old' as const),
  point: fc.nat({ max: 4 }),
  bookmarks: fc.boolean(),
  initialEvents: fc.boolean(),
  selector: fc.integer({ min: 0, max: WATCH_SELECTORS - 1 }),
});

/** The generator of one operation, from the groups asked for. */
export function opArbitrary(groups: ReadonlySet<Group>): fc.Arbitrary<Op> {
  const arbs: fc.WeightedArbitrary<Op>[] = [];
  // Writes are always generated: reads of an empty namespace check little.
  for (const [w, weight] of writes)
    arbs.push({ arbitrary: w, weight: groups.has('writes') ? weight : weight / 2 });
  if (groups.has('writes'))
    arbs.push({ arbitrary: fc.record({ op: fc.constant('updateStale' as const), name }), weight: 10 });
  if (groups.has('lists')) arbs.push({ arbitrary: list(['unset', '0', 'point']), weight: 60 });
  if (groups.has('errors')) {
    arbs.push({ arbitrary: list(['old']), weight: 4 });
    // A too-large resourceVersion waits for the server's timeout (3 s in kube-apiserver): rare.
    arbs.push({ arbitrary: list(['future']), weight: 1 });
  }
  if (groups.has('watch')) arbs.push({ arbitrary: watch, weight: 40 });
  return fc.oneof(...arbs);
}

/** A run: a short sequence of operations. */
export function runArbitrary(groups: ReadonlySet<Group>, maxSteps: number): fc.Arbitrary<Op[]> {
  return fc.array(opArbitrary(groups), { minLength: 1, maxLength: maxSteps, size: 'max' });
}

/** One line for an operation (counterexamples). */
export function describeOp(o: Op): string {
  switch (o.op) {
    case 'create':
    case 'update':
      return `${o.op} ${o.name} v=${o.value}${o.tier === '' ? '' : ` tier=${o.tier}`}`;
    case 'updateStale':
      return `update ${o.name} with a stale resourceVersion`;
    case 'delete':
      return `delete ${o.name}`;
    case 'deleteCollection':
      return `deletecollection ${selectorText(SELECTORS[o.selector]) || '(all)'}`;
    case 'list':
      return `list rv=${o.rv}${o.rv === 'point' ? `(${o.point} steps back)` : ''}${o.match === '' ? '' : ` match=${o.match}`}${o.limit > 0 ? ` limit=${o.limit}` : ''}${o.selector > 0 ? ` ${decodeURIComponent(selectorText(SELECTORS[o.selector]))}` : ''}${o.limit > 0 && o.probeContinue ? ' (probe continue)' : ''}`;
    case 'watch':
      return `watch from=${o.from}${o.from === 'point' ? `(${o.point} steps back)` : ''}${o.bookmarks ? ' bookmarks' : ''}${o.initialEvents ? ' sendInitialEvents' : ''}${o.selector > 0 ? ` ${decodeURIComponent(selectorText(SELECTORS[o.selector]))}` : ''}`;
  }
}
