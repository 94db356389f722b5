/**
 * A Kubernetes CEL environment, independent of CRDs: CRD `x-kubernetes-validations`,
 * ValidatingAdmissionPolicy and webhook `matchConditions` all build one.
 *
 * Built on `@marcbachmann/cel-js` (parser, type checker, evaluator, macros, optional types)
 * plus Kubernetes' libraries (./libraries.ts) and a static cost estimator (./cost.ts).
 *
 * Usage:
 * ```ts
 * const env = new CelEnvironment({
 *   objectTypes: [{ name: 'Spec', fields: { replicas: 'int', name: 'string' } }],
 *   variables: { self: 'Spec', oldSelf: 'Spec' },
 * });
 * const compiled = env.compile('self.replicas <= 10', (path) => undefined);
 * if (!compiled.ok) report(compiled.message); // kube's "compilation failed: ..." detail
 * const r = compiled.program.evaluate({ self: { replicas: 3n, name: 'x' } });
 * // r: { value: true } | { error: 'no such key: ...' }
 * ```
 * Values passed to `evaluate` are CEL values: integers as `bigint`, doubles as `number`,
 * objects as plain objects or Maps, lists as arrays ({@link jsonToCel} converts JSON by guess).
 * Type checking uses the declared types (fields of object types are checked, `self.nope` fails
 * to compile); evaluation is dynamic, so equality of objects compares values.
 */
import { Environment, Optional } from '@marcbachmann/cel-js';
import { estimateCost, PER_EXPRESSION_COST_LIMIT, type SizeOracle } from './cost.js';
import { registerKubernetesLibraries } from './libraries.js';

export {
  costErrorMessage,
  estimateCost,
  PER_CRD_COST_LIMIT,
  PER_EXPRESSION_COST_LIMIT,
  RUNTIME_COST_BUDGET,
  type SizeOracle,
} from './cost.js';
export { CelQuantity, CelURL } from './libraries.js';

/** An object type for type checking: field name → CEL type string (`int`, `list<T>`, ...). */
export interface CelObjectType {
  readonly name: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** Options of {@link CelEnvironment}. */
export interface CelEnvironmentOptions {
  /** Variable name → CEL type string (`dyn`, `int`, `map<string, dyn>`, an object type name). */
  readonly variables: Readonly<Record<string, string>>;
  /** Object types the variables' types refer to (declare nested types before their users). */
  readonly objectTypes?: readonly CelObjectType[];
  /** Static cost limit per expression (kube: 10,000,000). */
  readonly costLimit?: number;
}

/** The outcome of one evaluation. */
export type CelResult =
  | { readonly value: unknown; readonly error?: undefined }
  | { readonly value?: undefined; readonly error: string };

/** A compiled, type-checked expression. */
export interface CelProgram {
  /** The expression's CEL output type (`bool`, `string`, ...). */
  readonly outputType: string;
  /** The static cost estimate. */
  readonly estimatedCost: number;
  /**
   * The estimate again with other size bounds, e.g. the actual sizes of the values about to be
   * evaluated: callers refuse to run an expression whose cost on this data is over budget.
   */
  costWith(sizes: SizeOracle): number;
  /** Evaluates with these variable values; never throws. */
  evaluate(activation: Readonly<Record<string, unknown>>): CelResult;
}

/** Compilation result: a program or kube's error text. */
export type CelCompileResult =
  | { readonly ok: true; readonly program: CelProgram }
  | { readonly ok: false; readonly message: string; readonly costExceeded?: number };

const ENV_OPTIONS = { enableOptionalTypes: true, homogeneousAggregateLiterals: false } as const;

let base: Environment | undefined;

/**
 * The standard library plus Kubernetes' libraries, built once: cel-js freezes an environment
 * once it is cloned, so this shared parent is immutable and every {@link CelEnvironment}
 * extends its own clones (registering ~70 functions per environment costs milliseconds).
 */
function libraryEnvironment(): Environment {
  base ??= registerKubernetesLibraries(new Environment(ENV_OPTIONS));
  return base;
}

function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split('\n')[0] ?? msg;
}

/** cel-go's wording of a few checker errors cel-js words differently. */
function celGoWording(msg: string): string {
  const key = /^No such key: (.*)$/.exec(msg);
  if (key !== null) return `undefined field '${key[1] ?? ''}'`;
  return msg;
}

/** cel-go's `ERROR: <input>:line:col: message` from a cel-js error and its source frame. */
function compileError(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const lines = text.split('\n');
  let where = '';
  const at = lines.findIndex((l) => /^>\s+\d+ \| /.test(l));
  const caret = at >= 0 ? lines[at + 1] : undefined;
  const frame = at >= 0 ? lines[at] : undefined;
  if (frame !== undefined && caret !== undefined && caret.includes('^')) {
    const line = /^>\s+(\d+)/.exec(frame)?.[1] ?? '1';
    const col = caret.indexOf('^') - (frame.indexOf('| ') + 2) + 1;
    where = `${line}:${col}:`;
  }
  return `ERROR: <input>:${where} ${celGoWording(lines[0] ?? text)}`;
}

/** A CEL environment: declared variables and types, Kubernetes libraries, cost limit. */
export class CelEnvironment {
  readonly #check: Environment;
  readonly #eval: Environment;
  readonly #costLimit: number;

  constructor(options: CelEnvironmentOptions) {
    this.#costLimit = options.costLimit ?? PER_EXPRESSION_COST_LIMIT;
    const check = libraryEnvironment().clone();
    for (const t of options.objectTypes ?? []) {
      check.registerType(t.name, { fields: { ...t.fields } });
      check.registerOperator(`${t.name} == ${t.name}`, () => false);
    }
    const ev = libraryEnvironment().clone();
    for (const [name, type] of Object.entries(options.variables)) {
      check.registerVariable(name, type);
      ev.registerVariable(name, type.startsWith('optional<') ? 'optional<dyn>' : 'dyn');
    }
    this.#check = check;
    this.#eval = ev;
  }

  /**
   * Parses, type-checks and cost-estimates `expression`. `sizes` bounds the variables' lists,
   * maps and strings for the estimate.
   */
  compile(expression: string, sizes: SizeOracle = () => undefined): CelCompileResult {
    let checked: ReturnType<Environment['check']>;
    let ast: unknown;
    try {
      ast = this.#check.parse(expression).ast;
      checked = this.#check.check(expression);
    } catch (e) {
      return { ok: false, message: compileError(e) };
    }
    if (!checked.valid) return { ok: false, message: compileError(checked.error) };
    const estimatedCost = estimateCost(ast, sizes);
    if (estimatedCost > this.#costLimit) {
      return { ok: false, message: 'estimated rule cost exceeds budget', costExceeded: estimatedCost };
    }
    let evaluator: (ctx: Record<string, unknown>) => unknown;
    try {
      const parsed = this.#eval.parse(expression);
      evaluator = (ctx) => parsed(ctx);
    } catch (e) {
      return { ok: false, message: compileError(e) };
    }
    return {
      ok: true,
      program: {
        outputType: String(checked.type ?? 'dyn'),
        estimatedCost,
        costWith: (other) => estimateCost(ast, other),
        evaluate(activation): CelResult {
          try {
            const value = evaluator({ ...activation });
            if (value instanceof Promise) return { error: 'asynchronous evaluation is not supported' };
            return { value };
          } catch (e) {
            return { error: firstLine(e) };
          }
        },
      },
    };
  }
}

/**
 * A {@link SizeOracle} over actual values: the size of the value at a path (`@items`: the
 * largest over a list's items or a map's values).
 */
export function actualSizes(activation: Readonly<Record<string, unknown>>): SizeOracle {
  const sizeOf = (v: unknown): number | undefined => {
    if (typeof v === 'string') return v.length;
    if (Array.isArray(v)) return v.length;
    if (v instanceof Map) return v.size;
    if (typeof v === 'object' && v !== null) return Object.keys(v).length;
    return undefined;
  };
  const at = (v: unknown, segs: readonly string[]): number | undefined => {
    if (segs.length === 0) return sizeOf(v);
    const [seg, ...rest] = segs;
    if (seg === '@items') {
      const children = Array.isArray(v) ? v : typeof v === 'object' && v !== null ? Object.values(v) : [];
      let max: number | undefined;
      for (const c of children) {
        const n = at(c, rest);
        if (n !== undefined && (max === undefined || n > max)) max = n;
      }
      return max;
    }
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && seg !== undefined)
      return at((v as Record<string, unknown>)[seg], rest);
    return undefined;
  };
  return (path) => (path[0] === undefined ? undefined : at(activation[path[0]], path.slice(1)));
}

/** A CEL `optional` value: `optional.of(v)`, or `optional.none()` for undefined. */
export function celOptional(v: unknown): unknown {
  return v === undefined ? Optional.none() : Optional.of(v);
}

/** JSON → CEL values by guess: integral numbers become `int` (bigint), others `double`. */
export function jsonToCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(jsonToCel);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = jsonToCel(x);
    return out;
  }
  return v;
}
