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
  /** Static cost limit per expression (kube: 10,000,000; `Infinity`: no static limit). */
  readonly costLimit?: number;
  /**
   * Compile errors carry cel-go's source frame (`\n | <line>\n | ....^`), as admission
   * expressions' errors do in kube (CRD rule errors are reported without it).
   */
  readonly sourceFrames?: boolean;
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
  /**
   * Evaluates, awaiting functions that answer asynchronously (the authorizer library's
   * `check()`); never rejects.
   */
  evaluateAsync(activation: Readonly<Record<string, unknown>>): Promise<CelResult>;
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
  const variable = /^Unknown variable: (.*)$/.exec(msg);
  if (variable !== null) return `undeclared reference to '${variable[1] ?? ''}' (in container '')`;
  const ternary = /^Ternary branches must have the same type, got '(.*)' and '(.*)'$/.exec(msg);
  if (ternary !== null) {
    return `found no matching overload for '_?_:_' applied to '(bool, ${ternary[1] ?? ''}, ${ternary[2] ?? ''})'`;
  }
  const op = OPERATOR_OVERLOAD.exec(msg);
  if (op !== null) {
    return `found no matching overload for '_${op[2] ?? ''}_' applied to '(${op[1] ?? ''}, ${op[3] ?? ''})'`;
  }
  return msg;
}

const OPERATOR_OVERLOAD = /^no such overload: (\S+) (\+|-|\*|\/|%|==|!=|<|<=|>|>=) (\S+)$/;

/**
 * The 1-based column of the first `op` at or after `col` in `line`, outside string literals
 * (cel-go places an operator's error on the operator, cel-js on its left operand); `col` when
 * there is none.
 */
function operatorColumn(line: string, col: number, op: string): number {
  let quote = '';
  for (let i = col - 1; i < line.length; i++) {
    const ch = line[i];
    if (quote !== '') {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (line.startsWith(op, i)) return i + 1;
  }
  return col;
}

/** cel-go's source frame under an error at `line`:`col` (1-based) of `expression`. */
function sourceFrame(expression: string, line: number, col: number): string {
  const text = expression.split('\n')[line - 1] ?? '';
  return `\n | ${text}\n | ${'.'.repeat(Math.max(0, col - 1))}^`;
}

/** cel-go's `ERROR: <input>:line:col: message` from a cel-js error and its source frame. */
function compileError(e: unknown, expression?: string): string {
  const text = e instanceof Error ? e.message : String(e);
  const lines = text.split('\n');
  let where = '';
  const at = lines.findIndex((l) => /^>\s+\d+ \| /.test(l));
  const caret = at >= 0 ? lines[at + 1] : undefined;
  const frame = at >= 0 ? lines[at] : undefined;
  if (frame !== undefined && caret !== undefined && caret.includes('^')) {
    const line = /^>\s+(\d+)/.exec(frame)?.[1] ?? '1';
    let col = caret.indexOf('^') - (frame.indexOf('| ') + 2) + 1;
    if (expression !== undefined) {
      // cel-go places a selection's error on its dot, cel-js on the field name.
      const src = expression.split('\n')[Number(line) - 1] ?? '';
      const first = lines[0] ?? '';
      if (/^No such key: /.test(first) && src[col - 2] === '.') col -= 1;
      const op = OPERATOR_OVERLOAD.exec(first)?.[2];
      if (op !== undefined) col = operatorColumn(src, col, op);
      else if (first.startsWith('Ternary branches')) col = operatorColumn(src, col, '?');
      where = `${line}:${col}:`;
      return `ERROR: <input>:${where} ${celGoWording(lines[0] ?? text)}${sourceFrame(expression, Number(line), col)}`;
    }
    where = `${line}:${col}:`;
  }
  return `ERROR: <input>:${where} ${celGoWording(lines[0] ?? text)}`;
}

/** A CEL environment: declared variables and types, Kubernetes libraries, cost limit. */
export class CelEnvironment {
  readonly #check: Environment;
  readonly #eval: Environment;
  readonly #costLimit: number;
  readonly #frames: boolean;

  constructor(options: CelEnvironmentOptions) {
    this.#costLimit = options.costLimit ?? PER_EXPRESSION_COST_LIMIT;
    this.#frames = options.sourceFrames ?? false;
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
    const source = this.#frames ? expression : undefined;
    try {
      ast = this.#check.parse(expression).ast;
      checked = this.#check.check(expression);
    } catch (e) {
      return { ok: false, message: compileError(e, source) };
    }
    if (!checked.valid) return { ok: false, message: compileError(checked.error, source) };
    const estimatedCost = estimateCost(ast, sizes);
    if (estimatedCost > this.#costLimit) {
      return { ok: false, message: 'estimated rule cost exceeds budget', costExceeded: estimatedCost };
    }
    let evaluator: (ctx: Record<string, unknown>) => unknown;
    try {
      const parsed = this.#eval.parse(expression);
      evaluator = (ctx) => parsed(ctx);
    } catch (e) {
      return { ok: false, message: compileError(e, source) };
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
        async evaluateAsync(activation): Promise<CelResult> {
          try {
            return { value: await evaluator({ ...activation }) };
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
