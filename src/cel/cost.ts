/**
 * Static cost estimation of a parsed CEL expression, in the spirit of cel-go's estimator that
 * kube uses to refuse expensive rules before they run: every node costs 1, a call's arguments
 * add up, string functions cost a tenth of the string's maximum length, and a comprehension
 * (all, exists, exists_one, map, filter) costs its body times the list's maximum size. Sizes come
 * from the caller ({@link SizeOracle}: the schema's maxItems/maxLength/maxProperties or kube's
 * estimates for unbounded values); unknown sizes count as {@link UNKNOWN_SIZE}.
 */

/** kube's per-expression static cost limit (`StaticEstimatedCostLimit`). */
export const PER_EXPRESSION_COST_LIMIT = 10_000_000;
/** kube's per-CRD static cost limit (`StaticEstimatedCRDCostLimit`). */
export const PER_CRD_COST_LIMIT = 100_000_000;
/** kube's runtime CEL cost budget of one custom resource validation (`RuntimeCELCostBudget`). */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** The size assumed for a list, map or string whose bound is unknown. */
export const UNKNOWN_SIZE = 1;

/** The maximum size of the value at a variable path (`['self', 'spec', 'items', '@items']`). */
export type SizeOracle = (path: readonly string[]) => number | undefined;

interface AstNode {
  readonly op: string;
  readonly args: unknown;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const STRING_FNS = new Set([
  'matches',
  'contains',
  'startsWith',
  'endsWith',
  'find',
  'findAll',
  'replace',
  'split',
  'lowerAscii',
  'upperAscii',
  'trim',
  'indexOf',
  'lastIndexOf',
  'substring',
  'charAt',
  'join',
]);

function isNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && 'op' in v;
}

/** The estimated worst-case cost of `ast` (cel-js AST). */
export function estimateCost(ast: unknown, sizes: SizeOracle): number {
  const scopes = new Map<string, readonly string[]>();
  const pathOf = (n: unknown): readonly string[] | undefined => {
    if (!isNode(n)) return undefined;
    if (n.op === 'id' && typeof n.args === 'string') return scopes.get(n.args) ?? [n.args];
    if ((n.op === '.' || n.op === '.?') && Array.isArray(n.args)) {
      const base = pathOf(n.args[0]);
      return base === undefined ? undefined : [...base, String(n.args[1])];
    }
    if (n.op === '[]' && Array.isArray(n.args)) {
      const base = pathOf(n.args[0]);
      return base === undefined ? undefined : [...base, '@items'];
    }
    return undefined;
  };
  const sizeOf = (n: unknown): number => {
    const p = pathOf(n);
    return (p === undefined ? undefined : sizes(p)) ?? UNKNOWN_SIZE;
  };
  const cost = (n: unknown): number => {
    if (Array.isArray(n)) return n.reduce((s: number, c) => s + cost(c), 0);
    if (!isNode(n)) return 0;
    if (n.op === 'rcall' && Array.isArray(n.args)) {
      const [name, target, args] = n.args as [string, unknown, unknown[]];
      if (MACROS.has(name) && Array.isArray(args) && args.length >= 2) {
        const v = args[0];
        const iter = isNode(v) && typeof v.args === 'string' ? v.args : '';
        const base = pathOf(target);
        const prev = scopes.get(iter);
        if (base !== undefined) scopes.set(iter, [...base, '@items']);
        const body = cost(args.slice(1));
        if (prev !== undefined) scopes.set(iter, prev);
        else scopes.delete(iter);
        return cost(target) + sizeOf(target) * (body + 1) + 1;
      }
      const extra = STRING_FNS.has(name) ? Math.ceil(sizeOf(target) / 10) : 0;
      return 1 + extra + cost(target) + cost(args);
    }
    return 1 + cost(n.args);
  };
  return cost(ast);
}

/** kube's wording of a cost over budget (`estimated rule cost exceeds budget by factor of 1.5x (...)`). */
export function costErrorMessage(costName: string, limit: number, actual: number): string {
  const f = actual / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
