/**
 * The CEL environments of admission expressions (kube's `plugin/cel` compiler): webhook and
 * policy `matchConditions`, ValidatingAdmissionPolicy `validations`, `messageExpression`,
 * `auditAnnotations` and `variables`. Every environment declares `object`, `oldObject` (dyn),
 * `request` (kube's `kubernetes.AdmissionRequest` type) and `namespaceObject`
 * (`kubernetes.Namespace`); optionally `params` (a policy with `paramKind`), `authorizer` and
 * `authorizer.requestResource` (everything but messageExpression) and `variables` (the
 * policy's variables, each typed by its expression's output type).
 *
 * {@link AdmissionCompiler.compile} gives a program or kube's error detail:
 * `compilation failed: ERROR: <input>:1:5: ...` with cel-go's source frame, or
 * `must evaluate to bool but got dyn` when the output type is not one the field allows.
 */
import { AUTHORIZER_TYPE } from './authz.js';
import { CelEnvironment, type CelObjectType, type CelProgram } from './index.js';

/** What an environment declares beside object, oldObject, request and namespaceObject. */
export interface AdmissionEnvOptions {
  /** `params` (the policy has a paramKind). */
  readonly params: boolean;
  /** `authorizer` and `authorizer.requestResource`. */
  readonly authorizer: boolean;
  /** The policy's variables in order with their CEL types; undefined: no `variables`. */
  readonly variables?: readonly { readonly name: string; readonly type: string }[];
  /**
   * The type of `object` and `oldObject` (type checking against a matched kind's schema);
   * undefined: `dyn`.
   */
  readonly objectType?: { readonly name: string; readonly objectTypes: readonly CelObjectType[] };
}

/** The output types an expression may have (kube's `ReturnTypes`). */
export type AdmissionReturn = 'bool' | 'string' | 'string-or-null' | 'any';

/** A compiled expression with its output type, or kube's error detail. */
export type AdmissionCompiled =
  | { readonly program: CelProgram; readonly outputType: string; readonly error?: undefined }
  | { readonly error: string };

const GVK = 'kubernetes.GroupVersionKind';
const GVR = 'kubernetes.GroupVersionResource';
const USER_INFO = 'kubernetes.UserInfo';
const REQUEST = 'kubernetes.AdmissionRequest';
const NS = 'kubernetes.Namespace';

/** kube's request and namespace types (nested types first). */
const OBJECT_TYPES: readonly CelObjectType[] = [
  { name: GVK, fields: { group: 'string', version: 'string', kind: 'string' } },
  { name: GVR, fields: { group: 'string', version: 'string', resource: 'string' } },
  {
    name: USER_INFO,
    fields: {
      username: 'string',
      uid: 'string',
      groups: 'list<string>',
      extra: 'map<string, list<string>>',
    },
  },
  {
    name: REQUEST,
    fields: {
      kind: GVK,
      resource: GVR,
      subResource: 'string',
      requestKind: GVK,
      requestResource: GVR,
      requestSubResource: 'string',
      name: 'string',
      namespace: 'string',
      operation: 'string',
      userInfo: USER_INFO,
      dryRun: 'bool',
      options: 'dyn',
    },
  },
  { name: 'kubernetes.NamespaceSpec', fields: { finalizers: 'list<string>' } },
  {
    name: 'kubernetes.NamespaceCondition',
    fields: {
      status: 'string',
      type: 'string',
      lastTransitionTime: 'google.protobuf.Timestamp',
      message: 'string',
      reason: 'string',
    },
  },
  {
    name: 'kubernetes.NamespaceStatus',
    fields: { conditions: 'list<kubernetes.NamespaceCondition>', phase: 'string' },
  },
  {
    name: 'kubernetes.NamespaceMetadata',
    fields: {
      name: 'string',
      generateName: 'string',
      namespace: 'string',
      labels: 'map<string, string>',
      annotations: 'map<string, string>',
      UID: 'string',
      creationTimestamp: 'google.protobuf.Timestamp',
      deletionGracePeriodSeconds: 'int',
      deletionTimestamp: 'google.protobuf.Timestamp',
      generation: 'int',
      resourceVersion: 'string',
      finalizers: 'list<string>',
    },
  },
  {
    name: NS,
    fields: {
      metadata: 'kubernetes.NamespaceMetadata',
      spec: 'kubernetes.NamespaceSpec',
      status: 'kubernetes.NamespaceStatus',
    },
  },
];

const VARIABLES = 'kubernetes.Variables';

/** cel-go's name of a cel-js type (`list(int)`, `map(string, dyn)`, `null_type`). */
export function celGoTypeName(t: string): string {
  if (t === 'null') return 'null_type';
  return t.replace(/</g, '(').replace(/>/g, ')');
}

function accepts(returns: AdmissionReturn, outputType: string): boolean {
  switch (returns) {
    case 'any':
      return true;
    case 'bool':
      return outputType === 'bool';
    case 'string':
      return outputType === 'string';
    case 'string-or-null':
      return outputType === 'string' || outputType === 'null';
  }
}

function returnError(returns: AdmissionReturn, outputType: string): string {
  const got = celGoTypeName(outputType);
  if (returns === 'string-or-null') return `must evaluate to one of [string null_type] but got ${got}`;
  return `must evaluate to ${returns} but got ${got}`;
}

function keyOf(o: AdmissionEnvOptions): string {
  const vars = o.variables === undefined ? '-' : o.variables.map((v) => `${v.name}:${v.type}`).join(',');
  return `${o.params ? 'p' : ''}${o.authorizer ? 'a' : ''}|${vars}|${o.objectType?.name ?? ''}`;
}

/**
 * Compiles admission expressions, one environment per set of declarations (kept while its
 * owner lives; environments of policies' variables are dropped past a bound).
 */
export class AdmissionCompiler {
  readonly #envs = new Map<string, CelEnvironment>();

  #env(o: AdmissionEnvOptions): CelEnvironment {
    const key = keyOf(o);
    let env = this.#envs.get(key);
    if (env === undefined) {
      const objectType = o.objectType?.name ?? 'dyn';
      const variables: Record<string, string> = {
        object: objectType,
        oldObject: objectType,
        request: REQUEST,
        namespaceObject: NS,
      };
      if (o.params) variables['params'] = 'dyn';
      if (o.authorizer) variables['authorizer'] = AUTHORIZER_TYPE;
      const objectTypes = [...OBJECT_TYPES, ...(o.objectType?.objectTypes ?? [])];
      if (o.variables !== undefined) {
        const fields: Record<string, string> = {};
        for (const v of o.variables) fields[v.name] = v.type;
        objectTypes.push({ name: VARIABLES, fields });
        variables['variables'] = VARIABLES;
      }
      try {
        env = new CelEnvironment({ variables, objectTypes, costLimit: Infinity, sourceFrames: true });
      } catch {
        // A variable type cel-js cannot declare as a field: every variable dyn.
        const fields: Record<string, string> = {};
        for (const v of o.variables ?? []) fields[v.name] = 'dyn';
        objectTypes[objectTypes.length - 1] = { name: VARIABLES, fields };
        env = new CelEnvironment({ variables, objectTypes, costLimit: Infinity, sourceFrames: true });
      }
      if (this.#envs.size > 256) this.#envs.clear();
      this.#envs.set(key, env);
    }
    return env;
  }

  /** Compiles `expression` in the environment `options` declares, checking its output type. */
  compile(expression: string, options: AdmissionEnvOptions, returns: AdmissionReturn): AdmissionCompiled {
    const r = this.#env(options).compile(expression);
    if (!r.ok) return { error: `compilation failed: ${r.message}` };
    const outputType = r.program.outputType;
    if (!accepts(returns, outputType)) return { error: returnError(returns, outputType) };
    return { program: r.program, outputType };
  }

  /**
   * The types of a policy's variables, compiled in order (each sees the earlier ones); a
   * variable that does not compile is `dyn`. Also gives each variable's compile error.
   */
  variableTypes(
    variables: readonly { readonly name: string; readonly expression: string }[],
    params: boolean,
    objectType?: AdmissionEnvOptions['objectType'],
  ): { readonly types: { name: string; type: string }[]; readonly errors: (string | undefined)[] } {
    const types: { name: string; type: string }[] = [];
    const errors: (string | undefined)[] = [];
    for (const v of variables) {
      const c = this.compile(
        v.expression,
        {
          params,
          authorizer: true,
          variables: [...types],
          ...(objectType === undefined ? {} : { objectType }),
        },
        'any',
      );
      errors.push(c.error);
      types.push({ name: v.name, type: c.error === undefined ? c.outputType : 'dyn' });
    }
    return { types, errors };
  }
}
