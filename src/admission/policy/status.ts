/**
 * Type checking of policies (kube's type-checking controller): each policy whose
 * `status.observedGeneration` lags its generation gets `status.typeChecking.expressionWarnings`
 * (one per expression that does not compile, with its field path) and the generation it
 * describes. Written straight to storage with a compare on the policy's revision; a lost race is
 * retried on the next change the informer delivers.
 */
import { ConflictError } from '../../../storage/errors.js';
import type { Store } from '../../../storage/interface.js';
import { encodeForStorage, isJsonObject, type JsonObject, type KubeObject } from '../../api/object.js';
import type { Informer } from '../webhook/informer.js';
import type { ExpressionCache } from './cel.js';
import { policyOf, type PolicySpec } from './spec.js';

/** What the writer needs. */
export interface StatusWriterDeps {
  readonly informer: Informer;
  readonly store: Pick<Store, 'update'>;
  readonly cache: ExpressionCache;
  /** Type checking against the matched kinds' schemas (./type-checking.ts); none when absent. */
  readonly typeCheck?: (policy: PolicySpec) => JsonObject[];
  readonly onError: (message: string, err: unknown) => void;
}

/** kube's `expressionWarnings` of a policy: the compile errors of its expressions by field. */
export function expressionWarnings(
  cache: ExpressionCache,
  obj: KubeObject,
  typeCheck?: (policy: PolicySpec) => JsonObject[],
): JsonObject[] {
  const p = policyOf(obj);
  const out: JsonObject[] = [];
  const params = p.paramKind !== undefined;
  const scope = cache.policyScope(params, p.variables);
  const check = (fieldRef: string, expression: string, at = scope): void => {
    if (expression === '') return;
    const c = cache.compile(expression, at);
    if ('error' in c) out.push({ fieldRef, warning: c.error });
  };
  p.matchConditions.forEach((c, i) =>
    check(`spec.matchConditions[${i}].expression`, c.expression, { params, authorizer: true }),
  );
  const { errors } = cache.compiler.variableTypes(p.variables, params);
  errors.forEach((e, i) => {
    if (e !== undefined) out.push({ fieldRef: `spec.variables[${i}].expression`, warning: e });
  });
  p.validations.forEach((v, i) => {
    check(`spec.validations[${i}].expression`, v.expression);
    check(`spec.validations[${i}].messageExpression`, v.messageExpression, { ...scope, authorizer: false });
  });
  p.auditAnnotations.forEach((a, i) =>
    check(`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression),
  );
  // Expressions that compile are checked against the kinds they will see.
  if (out.length === 0 && typeCheck !== undefined) out.push(...typeCheck(p));
  return out;
}

/** Starts writing type-checking status on changes of the policies informer. */
export function startStatusWriter(deps: StatusWriterDeps): { start(): void; stop(): void } {
  let stopped = false;
  let remove: (() => void) | undefined;
  const inFlight = new Set<string>();
  const sweep = (): void => {
    if (stopped) return;
    for (const obj of deps.informer.values()) {
      const generation = obj.metadata.generation ?? 0;
      const status = isJsonObject(obj['status']) ? obj['status'] : {};
      if (status['observedGeneration'] === generation) continue;
      const key = `${obj.metadata.name ?? ''}@${obj.metadata.resourceVersion ?? ''}`;
      if (inFlight.has(key)) continue;
      inFlight.add(key);
      void write(obj, generation)
        .catch((err: unknown) => {
          // A conflict means a newer version is on its way through the informer.
          if (!(err instanceof ConflictError)) {
            deps.onError('admission policies: writing type-checking status failed', err);
          }
        })
        .finally(() => inFlight.delete(key));
    }
  };
  const write = async (obj: KubeObject, generation: number): Promise<void> => {
    const warnings = expressionWarnings(deps.cache, obj, deps.typeCheck);
    const status: JsonObject = {
      ...(isJsonObject(obj['status']) ? obj['status'] : {}),
      observedGeneration: generation,
      typeChecking: warnings.length === 0 ? {} : { expressionWarnings: warnings },
    };
    const updated: KubeObject = { ...obj, status };
    const storageKey = keyOf(deps.informer, obj);
    if (storageKey === undefined) return;
    await deps.store.update(storageKey, encodeForStorage(updated), {
      ifModRevision: BigInt(obj.metadata.resourceVersion ?? '0'),
    });
  };
  return {
    start: () => {
      remove ??= deps.informer.onChange(sweep);
      sweep();
    },
    stop: () => {
      stopped = true;
      remove?.();
    },
  };
}

function keyOf(informer: Informer, obj: KubeObject): string | undefined {
  for (const [k, v] of informer.entries()) if (v === obj) return k;
  return undefined;
}
