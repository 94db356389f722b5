/**
 * The CEL side of admission: one environment per variable set (webhook `matchConditions` see
 * `object`, `oldObject`, `request`; ValidatingAdmissionPolicy adds `params`, `namespaceObject`
 * and `variables`), a cache of compiled expressions, and the evaluation of one expression on
 * JSON values. Every variable is `dyn`: the objects are not type checked against their schemas.
 */
import { actualSizes, CelEnvironment, jsonToCel, type CelProgram, type SizeOracle } from '../../cel/index.js';

/** Variables of webhook match conditions. */
export const WEBHOOK_VARIABLES: Readonly<Record<string, string>> = {
  object: 'dyn',
  oldObject: 'dyn',
  request: 'dyn',
};

/** Variables of ValidatingAdmissionPolicy expressions. */
export const POLICY_VARIABLES: Readonly<Record<string, string>> = {
  ...WEBHOOK_VARIABLES,
  params: 'dyn',
  namespaceObject: 'dyn',
  variables: 'dyn',
};

/** A compiled expression or kube's compile error (`compilation failed: ...`). */
export type Compiled = { readonly program: CelProgram } | { readonly error: string };

/** Compiles expressions once per text (the cache lives as long as its owner). */
export class ExpressionCache {
  readonly #env: CelEnvironment;
  readonly #cache = new Map<string, Compiled>();

  constructor(variables: Readonly<Record<string, string>>) {
    this.#env = new CelEnvironment({ variables });
  }

  /** The compiled `expression`, from the cache when seen before. */
  compile(expression: string): Compiled {
    let c = this.#cache.get(expression);
    if (c === undefined) {
      const r = this.#env.compile(expression);
      c = r.ok ? { program: r.program } : { error: `compilation failed: ${r.message}` };
      if (this.#cache.size > 4096) this.#cache.clear();
      this.#cache.set(expression, c);
    }
    return c;
  }
}

/**
 * kube's per-call cost limit of admission expressions (`celconfig.PerCallLimit`): an expression
 * whose cost on the data at hand is over it is refused before it runs.
 */
export const PER_CALL_COST_LIMIT = 1_000_000;

/** cel-go's wording of a few evaluation errors cel-js words differently. */
function celGoRuntimeWording(msg: string): string {
  return msg.replace(/^No such key: /, 'no such key: ');
}

/** The outcome of {@link runExpression}. */
export type RunResult =
  | { readonly value: unknown; readonly error?: undefined }
  | { readonly value?: undefined; readonly error: string };

/**
 * Compiles (cached) and evaluates `expression` on `activation`, refusing it unrun when its cost
 * on these values (`sizes`, from {@link actualSizes}) is over {@link PER_CALL_COST_LIMIT}.
 */
export function runExpression(
  cache: ExpressionCache,
  expression: string,
  activation: Readonly<Record<string, unknown>>,
  sizes: SizeOracle = actualSizes(activation),
): RunResult {
  const c = cache.compile(expression);
  if ('error' in c) return { error: c.error };
  if (c.program.costWith(sizes) > PER_CALL_COST_LIMIT) {
    return { error: 'operation cancelled: actual cost limit exceeded' };
  }
  const r = c.program.evaluate(activation);
  return r.error === undefined ? { value: r.value } : { error: celGoRuntimeWording(r.error) };
}

/** JSON values (null for absent) as CEL values. */
export function celActivation(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) out[k] = v === undefined ? null : jsonToCel(v);
  return out;
}

/** The CEL value as JSON (bigints as numbers) for messages and annotations. */
export function celToString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? String(v);
}
