/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * (kube's `ValidateValidatingAdmissionPolicy` / `...Binding`, their structural checks: required
 * fields, supported values, unique names). Expressions are compiled by the admission plugin,
 * which reports what does not compile in `status.typeChecking` and fails those validations per
 * failurePolicy.
 */
import {
  duplicate,
  forbidden,
  invalid,
  notSupported,
  required,
  tooMany,
  type FieldError,
} from './field-error.js';
import { isQualifiedName } from './formats.js';
import { type JsonObject, obj, objects, str, strings } from './json.js';
import { validateLabelSelector } from './meta.js';
import { child, index } from './path.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const ACTIONS = ['Audit', 'Deny', 'Warn'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

function optionalOneOf(
  o: JsonObject,
  key: string,
  allowed: readonly string[],
  path: string,
  errs: FieldError[],
): void {
  const v = o[key];
  if (v !== undefined && v !== null && !allowed.includes(v as string)) {
    errs.push(notSupported(child(path, key), v, allowed));
  }
}

function validateNamedRules(rules: JsonObject[], path: string, errs: FieldError[]): void {
  rules.forEach((rule, i) => {
    const rp = index(path, i);
    for (const k of ['operations', 'apiGroups', 'apiVersions', 'resources'] as const) {
      const values = strings(rule, k);
      if (values.length === 0) errs.push(required(child(rp, k)));
      if (values.length > 1 && values.includes('*')) {
        errs.push(invalid(child(rp, k), values, `if '*' is present, must not specify other ${k}`));
      }
    }
    strings(rule, 'operations').forEach((op, j) => {
      if (!OPERATIONS.includes(op))
        errs.push(notSupported(index(child(rp, 'operations'), j), op, OPERATIONS));
    });
    optionalOneOf(rule, 'scope', ['*', 'Cluster', 'Namespaced'], rp, errs);
  });
}

function validateMatchResources(m: JsonObject, path: string, policy: boolean, errs: FieldError[]): void {
  const rules = objects(m, 'resourceRules');
  if (policy && rules.length === 0) errs.push(required(child(path, 'resourceRules')));
  validateNamedRules(rules, child(path, 'resourceRules'), errs);
  validateNamedRules(objects(m, 'excludeResourceRules'), child(path, 'excludeResourceRules'), errs);
  optionalOneOf(m, 'matchPolicy', ['Equivalent', 'Exact'], path, errs);
  errs.push(...validateLabelSelector(m['namespaceSelector'], child(path, 'namespaceSelector')));
  errs.push(...validateLabelSelector(m['objectSelector'], child(path, 'objectSelector')));
}

/** CEL's reserved words (never a variable name). */
const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** kube's checks of `variables` (names are CEL identifiers; no duplicate check, as kube). */
function validateVariables(items: JsonObject[], path: string, errs: FieldError[]): void {
  items.forEach((item, i) => {
    const p = index(path, i);
    const name = str(item, 'name');
    if (name.trim() === '') errs.push(required(child(p, 'name'), 'name is not specified'));
    else if (!CEL_IDENTIFIER.test(name) || CEL_RESERVED.has(name)) {
      errs.push(invalid(child(p, 'name'), name, 'name is not a valid CEL identifier'));
    }
    if (str(item, 'expression').trim() === '') {
      errs.push(required(child(p, 'expression'), 'expression is not specified'));
    }
  });
}

/** kube's checks of `matchConditions` (expression, then a qualified, unique name). */
function validateMatchConditions(items: JsonObject[], path: string, errs: FieldError[]): void {
  if (items.length > 64) errs.push(tooMany(path, items.length, 64));
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const p = index(path, i);
    if (str(item, 'expression').trim() === '') errs.push(required(child(p, 'expression')));
    const name = str(item, 'name');
    if (name === '') errs.push(required(child(p, 'name')));
    else for (const msg of isQualifiedName(name)) errs.push(invalid(child(p, 'name'), name, msg));
    if (name !== '') {
      if (seen.has(name)) errs.push(duplicate(child(p, 'name'), name));
      seen.add(name);
    }
  });
}

/** A ValidatingAdmissionPolicy. */
export function validateValidatingAdmissionPolicy(o: JsonObject, errs: FieldError[]): void {
  const spec = obj(o, 'spec') ?? {};
  const sp = 'spec';
  const pk = obj(spec, 'paramKind');
  if (pk !== undefined) {
    const pp = child(sp, 'paramKind');
    if (str(pk, 'apiVersion') === '') errs.push(required(child(pp, 'apiVersion')));
    else if (str(pk, 'apiVersion').split('/').length > 2) {
      errs.push(invalid(child(pp, 'apiVersion'), str(pk, 'apiVersion'), 'must be a valid group/version'));
    }
    if (str(pk, 'kind') === '') errs.push(required(child(pp, 'kind')));
  }
  const mc = obj(spec, 'matchConstraints');
  if (mc === undefined) errs.push(required(child(sp, 'matchConstraints')));
  else validateMatchResources(mc, child(sp, 'matchConstraints'), true, errs);
  optionalOneOf(spec, 'failurePolicy', ['Fail', 'Ignore'], sp, errs);
  const validations = objects(spec, 'validations');
  const annotations = objects(spec, 'auditAnnotations');
  if (validations.length === 0 && annotations.length === 0) {
    for (const f of ['validations', 'auditAnnotations']) {
      errs.push(required(child(sp, f), 'validations or auditAnnotations must contain at least one item'));
    }
  }
  validations.forEach((v, i) => {
    const p = index(child(sp, 'validations'), i);
    if (str(v, 'expression').trim() === '')
      errs.push(required(child(p, 'expression'), 'expression is not specified'));
    optionalOneOf(v, 'reason', REASONS, p, errs);
    const message = str(v, 'message');
    if (message.includes('\n'))
      errs.push(invalid(child(p, 'message'), message, 'message must not contain line breaks'));
  });
  const keys = new Set<string>();
  annotations.forEach((a, i) => {
    const p = index(child(sp, 'auditAnnotations'), i);
    const key = str(a, 'key');
    if (key === '') errs.push(required(child(p, 'key')));
    else if (keys.has(key)) errs.push(duplicate(child(p, 'key'), key));
    keys.add(key);
    if (str(a, 'valueExpression').trim() === '')
      errs.push(required(child(p, 'valueExpression'), 'valueExpression is not specified'));
  });
  validateMatchConditions(objects(spec, 'matchConditions'), child(sp, 'matchConditions'), errs);
  validateVariables(objects(spec, 'variables'), child(sp, 'variables'), errs);
}

/** A ValidatingAdmissionPolicyBinding. */
export function validateValidatingAdmissionPolicyBinding(o: JsonObject, errs: FieldError[]): void {
  const spec = obj(o, 'spec') ?? {};
  const sp = 'spec';
  if (str(spec, 'policyName') === '') errs.push(required(child(sp, 'policyName')));
  const pr = obj(spec, 'paramRef');
  if (pr !== undefined) {
    const pp = child(sp, 'paramRef');
    const hasName = str(pr, 'name') !== '';
    const selector = obj(pr, 'selector');
    if (hasName && selector !== undefined) {
      errs.push(forbidden(child(pp, 'name'), 'name and selector are mutually exclusive'));
    }
    if (selector !== undefined) {
      errs.push(...validateLabelSelector(selector, child(pp, 'selector')));
      if (hasName) errs.push(forbidden(child(pp, 'selector'), 'name and selector are mutually exclusive'));
    }
    if (!hasName && selector === undefined) {
      errs.push(required(pp, 'one of name or selector must be specified'));
    }
    const action = pr['parameterNotFoundAction'];
    if (action === undefined || action === null || action === '') {
      errs.push(required(child(pp, 'parameterNotFoundAction')));
    } else if (action !== 'Allow' && action !== 'Deny') {
      errs.push(notSupported(child(pp, 'parameterNotFoundAction'), action, ['Allow', 'Deny']));
    }
  }
  const mr = obj(spec, 'matchResources');
  if (mr !== undefined) validateMatchResources(mr, child(sp, 'matchResources'), false, errs);
  const actions = strings(spec, 'validationActions');
  const ap = child(sp, 'validationActions');
  if (actions.length === 0) errs.push(required(ap, 'at least one validation action is required'));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!ACTIONS.includes(a)) errs.push(notSupported(index(ap, i), a, ACTIONS));
    else if (seen.has(a)) errs.push(duplicate(index(ap, i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(
      invalid(
        ap,
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  }
}
