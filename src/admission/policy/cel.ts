/**
 * The CEL side of admission: kube's environments (src/cel/admission.ts: `object`, `oldObject`,
 * typed `request` and `namespaceObject`; `params`, `authorizer` and `variables` where kube
 * declares them), a cache of compiled expressions, and the evaluation of one expression on
 * JSON values. Evaluation is asynchronous: the authorizer library asks the server's authorizer.
 */
import { AdmissionCompiler, type AdmissionEnvOptions } from '../../cel/admission.js';
import { CelAuthorizer, type CelAuthorize, type CelRequestResource } from '../../cel/authz.js';
import { actualSizes, jsonToCel, type CelProgram, type SizeOracle } from '../../cel/index.js';
import type { UserInfo } from '../../api/user.js';
import type { PolicySpec } from './spec.js';

/** The declarations of webhook match conditions. */
export const WEBHOOK_SCOPE: AdmissionEnvOptions = { params: false, authorizer: true };

/** A compiled expression or kube's compile error (`compilation failed: ...`). */
export type Compiled = { readonly program: CelProgram } | { readonly error: string };

/** Compiles expressions once per environment and text (the cache lives as long as its owner). */
export class ExpressionCache {
  readonly #compiler = new AdmissionCompiler();
  readonly #cache = new Map<string, Compiled>();

  /** The compiler (policies' variable types). */
  get compiler(): AdmissionCompiler {
    return this.#compiler;
  }

  readonly #scopes = new Map<string, AdmissionEnvOptions>();
  /** Each scope's part of the cache key (scopes are kept per policy, so this is computed once). */
  readonly #scopeKeys = new WeakMap<AdmissionEnvOptions, string>();
  /** The scopes of each parsed policy (a policy version's spec is parsed once). */
  readonly #policyScopes = new WeakMap<PolicySpec, PolicyScopes>();

  /**
   * The declarations of a policy's expressions: `params` with a paramKind, the authorizer
   * (not for messageExpression), and its variables typed by their expressions.
   */
  policyScope(
    params: boolean,
    variables: readonly { readonly name: string; readonly expression: string }[],
  ): AdmissionEnvOptions {
    if (variables.length === 0) return { params, authorizer: true };
    const key = JSON.stringify([params, variables]);
    let scope = this.#scopes.get(key);
    if (scope === undefined) {
      scope = { params, authorizer: true, variables: this.#compiler.variableTypes(variables, params).types };
      if (this.#scopes.size > 1024) this.#scopes.clear();
      this.#scopes.set(key, scope);
    }
    return scope;
  }

  /** Every scope `policy`'s expressions are compiled in, worked out once per parsed policy. */
  scopesOf(policy: PolicySpec): PolicyScopes {
    let scopes = this.#policyScopes.get(policy);
    if (scopes === undefined) {
      const params = policy.paramKind !== undefined;
      const scope = this.policyScope(params, policy.variables);
      const declared = scope.variables ?? [];
      scopes = {
        conditions: { params, authorizer: true },
        // Each variable sees the earlier ones only.
        variables: policy.variables.map((_, i) => ({ ...scope, variables: declared.slice(0, i) })),
        expressions: scope,
        messages: { ...scope, authorizer: false },
      };
      this.#policyScopes.set(policy, scopes);
    }
    return scopes;
  }

  /** The compiled `expression` in `scope`, from the cache when seen before. */
  compile(expression: string, scope: AdmissionEnvOptions = WEBHOOK_SCOPE): Compiled {
    let scopeKey = this.#scopeKeys.get(scope);
    if (scopeKey === undefined) {
      const vars = scope.variables?.map((v) => `${v.name}:${v.type}`).join(',') ?? '-';
      scopeKey = `${scope.params ? 'p' : ''}${scope.authorizer ? 'a' : ''}|${vars}|`;
      this.#scopeKeys.set(scope, scopeKey);
    }
    const key = scopeKey + expression;
    let c = this.#cache.get(key);
    if (c === undefined) {
      const r = this.#compiler.compile(expression, scope, 'any');
      c = r.error === undefined ? { program: r.program } : { error: r.error };
      if (this.#cache.size > 4096) this.#cache.clear();
      this.#cache.set(key, c);
    }
    return c;
  }
}

/** The scopes of one policy's expressions (see {@link ExpressionCache.scopesOf}). */
export interface PolicyScopes {
  /** matchConditions: params and the authorizer, no variables. */
  readonly conditions: AdmissionEnvOptions;
  /** Per variable: the scope with the variables before it. */
  readonly variables: readonly AdmissionEnvOptions[];
  /** validations and auditAnnotations. */
  readonly expressions: AdmissionEnvOptions;
  /** messageExpression: no authorizer. */
  readonly messages: AdmissionEnvOptions;
}

/** The `authorizer` value of a request's user (undefined authorize: every check is allowed). */
export function celAuthorizer(
  user: UserInfo,
  authorize: CelAuthorize | undefined,
  request: CelRequestResource,
): CelAuthorizer {
  return new CelAuthorizer(user, authorize ?? (() => ({ allowed: true, reason: '', error: '' })), request);
}

/**
 * kube's per-call cost limit of admission expressions (`celconfig.PerCallLimit`): an expression
 * whose cost on the data at hand is over it is refused before it runs.
 */
export const PER_CALL_COST_LIMIT = 1_000_000;

/** cel-go's wording of a few evaluation errors cel-js words differently. */
function celGoRuntimeWording(msg: string): string {
  // A string that does not parse: cel-js does not name the source type, cel-go does.
  const conversion = /^(?:int|uint|double)\(\) type error: cannot convert to (\w+)$/.exec(msg);
  if (conversion !== null) return `type conversion error from 'string' to '${conversion[1] ?? ''}'`;
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
export async function runExpression(
  cache: ExpressionCache,
  expression: string,
  activation: Readonly<Record<string, unknown>>,
  scope: AdmissionEnvOptions = WEBHOOK_SCOPE,
  sizes: SizeOracle = actualSizes(activation),
): Promise<RunResult> {
  const c = cache.compile(expression, scope);
  if ('error' in c) return { error: c.error };
  if (c.program.costWith(sizes) > PER_CALL_COST_LIMIT) {
    return { error: 'operation cancelled: actual cost limit exceeded' };
  }
  const r = await c.program.evaluateAsync(activation);
  return r.error === undefined ? { value: r.value } : { error: celGoRuntimeWording(r.error) };
}

/** JSON values (null for absent) as CEL values; an `authorizer` is kept as it is. */
export function celActivation(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    out[k] = v === undefined ? null : v instanceof CelAuthorizer ? v : jsonToCel(v);
  }
  return out;
}

/** The CEL value as JSON (bigints as numbers) for messages and annotations. */
export function celToString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? String(v);
}
