/**
 * The CEL checks of admissionregistration.k8s.io objects at create and update (kube's
 * `ValidateValidatingAdmissionPolicy` and webhook configuration compile steps): every
 * expression of a ValidatingAdmissionPolicy (matchConditions, variables, validations'
 * expression and messageExpression, auditAnnotations' valueExpression) and every webhook's
 * matchConditions must compile in kube's environment and have a type the field allows, else a
 * 422 field error (`Invalid value: "<expr>": compilation failed: ERROR: <input>:1:5: ...`).
 * The strategy of those kinds adds these to the structural checks of src/validation.
 */
import { isJsonObject, type KubeObject } from '../api/object.js';
import { AdmissionCompiler, type AdmissionEnvOptions, type AdmissionReturn } from '../cel/admission.js';
import type { ResourceType } from '../registry/types.js';
import { duplicate, invalid, required, tooMany, type FieldError } from '../validation/field-error.js';
import { isQualifiedName } from '../validation/formats.js';
import { objects, semanticEqual, str, type JsonObject } from '../validation/json.js';
import { BuiltInStrategy } from './builtin.js';

const POLICY = 'ValidatingAdmissionPolicy';
const WEBHOOKS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);

/** True for the kinds whose expressions {@link AdmissionExpressionStrategy} compiles. */
export function hasAdmissionExpressions(type: Pick<ResourceType, 'group' | 'kind'>): boolean {
  return type.group === 'admissionregistration.k8s.io' && (type.kind === POLICY || WEBHOOKS.has(type.kind));
}

function specOf(o: KubeObject | undefined): JsonObject {
  return o !== undefined && isJsonObject(o['spec']) ? o['spec'] : {};
}

function check(
  compiler: AdmissionCompiler,
  errs: FieldError[],
  path: string,
  expression: string,
  options: AdmissionEnvOptions,
  returns: AdmissionReturn,
  shown = expression,
): void {
  const c = compiler.compile(expression, options, returns);
  if (c.error !== undefined) errs.push(invalid(path, shown, c.error));
}

/** kube's matchConditions checks (count, expression, name, duplicate names). */
function matchConditionErrors(
  compiler: AdmissionCompiler,
  conditions: JsonObject[],
  path: string,
  params: boolean,
  structural: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  if (structural && conditions.length > 64) errs.push(tooMany(path, conditions.length, 64));
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const expression = str(c, 'expression').trim();
    if (expression === '') {
      if (structural) errs.push(required(`${p}.expression`));
    } else {
      check(compiler, errs, `${p}.expression`, expression, { params, authorizer: true }, 'bool');
    }
    if (!structural) return;
    const name = str(c, 'name');
    if (name === '') errs.push(required(`${p}.name`));
    else for (const msg of isQualifiedName(name)) errs.push(invalid(`${p}.name`, name, msg));
    if (name !== '') {
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
  });
  return errs;
}

/** The expression errors of a ValidatingAdmissionPolicy (its structural checks are elsewhere). */
function policyExpressionErrors(
  compiler: AdmissionCompiler,
  obj: KubeObject,
  old: KubeObject | undefined,
): FieldError[] {
  const spec = specOf(obj);
  const params = isJsonObject(spec['paramKind']);
  const errs: FieldError[] = [];
  const conditions = objects(spec, 'matchConditions');
  // kube skips match conditions an update leaves alone (with the same paramKind).
  const oldSpec = specOf(old);
  const unchanged =
    old !== undefined &&
    semanticEqual(spec['paramKind'], oldSpec['paramKind']) &&
    semanticEqual(spec['matchConditions'], oldSpec['matchConditions']);
  if (!unchanged)
    errs.push(...matchConditionErrors(compiler, conditions, 'spec.matchConditions', params, false));
  const variables = objects(spec, 'variables').map((v) => ({
    name: str(v, 'name'),
    expression: str(v, 'expression'),
  }));
  let declared: AdmissionEnvOptions['variables'];
  if (variables.length > 0) {
    const { types, errors } = compiler.variableTypes(
      variables.filter((v) => v.expression.trim() !== ''),
      params,
    );
    let k = 0;
    variables.forEach((v, i) => {
      if (v.expression.trim() === '') return;
      const e = errors[k++];
      if (e !== undefined) errs.push(invalid(`spec.variables[${i}].expression`, v.expression, e));
    });
    declared = types;
  }
  const env: AdmissionEnvOptions = {
    params,
    authorizer: true,
    ...(declared === undefined ? {} : { variables: declared }),
  };
  const messageEnv: AdmissionEnvOptions = { ...env, authorizer: false };
  objects(spec, 'validations').forEach((v, i) => {
    const p = `spec.validations[${i}]`;
    const expression = str(v, 'expression');
    if (expression.trim() !== '') check(compiler, errs, `${p}.expression`, expression, env, 'bool');
    const messageExpression = str(v, 'messageExpression');
    if (messageExpression !== '' && messageExpression.trim() === '') {
      errs.push(invalid(`${p}.messageExpression`, messageExpression, 'must be non-empty if specified'));
    } else if (messageExpression !== '') {
      check(compiler, errs, `${p}.messageExpression`, messageExpression, messageEnv, 'string');
    }
  });
  objects(spec, 'auditAnnotations').forEach((a, i) => {
    const value = str(a, 'valueExpression');
    const trimmed = value.trim();
    if (trimmed === '' || trimmed.length > 5 * 1024) return;
    check(
      compiler,
      errs,
      `spec.auditAnnotations[${i}].valueExpression`,
      trimmed,
      env,
      'string-or-null',
      value,
    );
  });
  return errs;
}

/** The matchConditions errors of a Validating- or MutatingWebhookConfiguration. */
function webhookExpressionErrors(
  compiler: AdmissionCompiler,
  obj: KubeObject,
  old: KubeObject | undefined,
): FieldError[] {
  const hooks = Array.isArray(obj['webhooks']) ? obj['webhooks'].filter(isJsonObject) : [];
  if (old !== undefined) {
    const before = Array.isArray(old['webhooks']) ? old['webhooks'].filter(isJsonObject) : [];
    const same =
      before.length === hooks.length &&
      hooks.every((h, i) => semanticEqual(h['matchConditions'], before[i]?.['matchConditions']));
    if (same) return [];
  }
  const errs: FieldError[] = [];
  hooks.forEach((h, i) => {
    errs.push(
      ...matchConditionErrors(
        compiler,
        objects(h, 'matchConditions'),
        `webhooks[${i}].matchConditions`,
        false,
        true,
      ),
    );
  });
  return errs;
}

const SECTIONS = [
  'failurePolicy',
  'paramKind',
  'matchConstraints',
  'matchConditions',
  'variables',
  'validations',
  'auditAnnotations',
];
const SUBFIELDS = ['expression', 'messageExpression', 'message', 'reason', 'name', 'key', 'valueExpression'];

/** kube's order of a policy's errors: by section, item, then field within the item. */
function policyOrder(e: FieldError): [number, number, number] {
  const m = /^spec\.(\w+)(?:\[(\d+)\])?(?:\.(\w+))?/.exec(e.field);
  if (m === null) return [-1, 0, 0];
  const section = SECTIONS.indexOf(m[1] ?? '');
  // kube checks a variable's name before its expression, other items' expression first.
  let sub = m[1] === 'variables' && m[3] === 'name' ? -1 : SUBFIELDS.indexOf(m[3] ?? '');
  if (m[1] === 'auditAnnotations' && m[3] === 'key' && e.reason === 'FieldValueDuplicate') sub = 99;
  return [section, m[2] === undefined ? -1 : Number(m[2]), sub];
}

/** kube's order of a webhook configuration's errors: per webhook, matchConditions after its other fields. */
function webhookOrder(e: FieldError): [number, number, number] {
  const m = /^webhooks\[(\d+)\](?:\.(\w+))?/.exec(e.field);
  if (m === null) return [-1, 0, 0];
  let sub = 0;
  if (m[2] === 'matchConditions') sub = 1;
  else if (m[2] === 'admissionReviewVersions') sub = 2;
  else if (m[2] === 'name' && e.reason === 'FieldValueDuplicate') sub = 3;
  return [Number(m[1]), sub, 0];
}

function sortStable(errs: FieldError[], key: (e: FieldError) => [number, number, number]): FieldError[] {
  return errs
    .map((e, i) => ({ e, k: key(e), i }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.k[2] - b.k[2] || a.i - b.i)
    .map((x) => x.e);
}

/** The strategy of ValidatingAdmissionPolicy and the webhook configurations. */
export class AdmissionExpressionStrategy extends BuiltInStrategy {
  readonly #compiler = new AdmissionCompiler();
  readonly #policy: boolean;

  constructor(type: ResourceType) {
    super(type);
    this.#policy = type.kind === POLICY;
  }

  override validate(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
    const base = super.validate(obj, old);
    if (!this.#policy) {
      return sortStable([...base, ...webhookExpressionErrors(this.#compiler, obj, old)], webhookOrder);
    }
    return sortStable([...base, ...policyExpressionErrors(this.#compiler, obj, old)], policyOrder);
  }
}
