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
  goStringSlice,
  invalid,
  notSupported,
  required,
  tooMany,
  type FieldError,
} from './field-error.js';
import { isDNS1035Label, isDNS1123Subdomain, isPathSegmentName, isQualifiedName } from './formats.js';
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

/** kube's `validateResources` (subresources allowed): required, and the wildcard rules. */
function validateResources(resources: string[], path: string, errs: FieldError[]): void {
  if (resources.length === 0) errs.push(required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((r, i) => {
    if (r === '') {
      errs.push(required(index(path, i)));
      return;
    }
    if (r === '*/*') doubleWildcard = true;
    if (r === '*') singleWildcard = true;
    const slash = r.indexOf('/');
    if (slash === -1) {
      withoutSub = r !== '*';
      return;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if (withWildcardSub.has(res))
      errs.push(invalid(index(path, i), r, `if '${res}/*' is present, must not specify ${r}`));
    if (subWithWildcardRes.has(sub))
      errs.push(invalid(index(path, i), r, `if '*/${sub}' is present, must not specify ${r}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    errs.push(
      invalid(path, goStringSlice(resources), "if '*/*' is present, must not specify other resources"),
    );
  }
  if (singleWildcard && withoutSub) {
    errs.push(
      invalid(
        path,
        goStringSlice(resources),
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  }
}

/**
 * A rule's list (`what`: operations, API groups, API versions) must not be empty, and `*` must
 * be alone in it.
 */
function nonEmptyWithStarAlone(
  values: string[],
  path: string,
  what: string,
  errs: FieldError[],
  goType?: string,
): void {
  if (values.length === 0) errs.push(required(path));
  if (values.length > 1 && values.includes('*')) {
    errs.push(
      invalid(path, goStringSlice(values, goType), `if '*' is present, must not specify other ${what}`),
    );
  }
}

/**
 * kube's `validateNamedRuleWithOperations` (webhook rules are the same without resourceNames),
 * in its order.
 */
export function validateNamedRules(rules: JsonObject[], path: string, errs: FieldError[]): void {
  rules.forEach((rule, i) => {
    const rp = index(path, i);
    const names = new Set<string>();
    strings(rule, 'resourceNames').forEach((n, j) => {
      const np = index(child(rp, 'resourceNames'), j);
      for (const msg of isPathSegmentName(n)) errs.push(invalid(np, n, msg));
      if (names.has(n)) errs.push(duplicate(np, n));
      names.add(n);
    });
    const ops = strings(rule, 'operations');
    nonEmptyWithStarAlone(
      ops,
      child(rp, 'operations'),
      'operations',
      errs,
      'admissionregistration.OperationType',
    );
    ops.forEach((op, j) => {
      if (!OPERATIONS.includes(op))
        errs.push(notSupported(index(child(rp, 'operations'), j), op, OPERATIONS));
    });
    const groups = strings(rule, 'apiGroups');
    nonEmptyWithStarAlone(groups, child(rp, 'apiGroups'), 'API groups', errs);
    const versions = strings(rule, 'apiVersions');
    nonEmptyWithStarAlone(versions, child(rp, 'apiVersions'), 'API versions', errs);
    versions.forEach((v, j) => {
      if (v === '') errs.push(required(index(child(rp, 'apiVersions'), j)));
    });
    validateResources(strings(rule, 'resources'), child(rp, 'resources'), errs);
    optionalOneOf(rule, 'scope', ['*', 'Cluster', 'Namespaced'], rp, errs);
  });
}

function validateMatchResources(m: JsonObject, path: string, policy: boolean, errs: FieldError[]): void {
  optionalOneOf(m, 'matchPolicy', ['Equivalent', 'Exact'], path, errs);
  errs.push(...validateLabelSelector(m['namespaceSelector'], child(path, 'namespaceSelector')));
  errs.push(...validateLabelSelector(m['objectSelector'], child(path, 'objectSelector')));
  const rules = objects(m, 'resourceRules');
  validateNamedRules(rules, child(path, 'resourceRules'), errs);
  validateNamedRules(objects(m, 'excludeResourceRules'), child(path, 'excludeResourceRules'), errs);
  // At least one resource rule gives the policy's expressions their types.
  if (policy && rules.length === 0) errs.push(required(child(path, 'resourceRules')));
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

/** kube's `validateParamKind`: a group/version and a kind, each a DNS name. */
function validateParamKind(pk: JsonObject, pp: string, errs: FieldError[]): void {
  const apiVersion = str(pk, 'apiVersion');
  const av = child(pp, 'apiVersion');
  if (apiVersion === '') errs.push(required(av));
  else if (apiVersion.split('/').length > 2) {
    errs.push(invalid(av, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  } else if (apiVersion !== '/') {
    const slash = apiVersion.indexOf('/');
    const group = slash === -1 ? '' : apiVersion.slice(0, slash);
    const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
    const groupErrs = group === '' ? [] : isDNS1123Subdomain(group);
    if (groupErrs.length > 0) errs.push(invalid(av, group, groupErrs.join(',')));
    if (version === '') errs.push(invalid(av, apiVersion, 'version must be specified'));
    else {
      const versionErrs = isDNS1035Label(version);
      if (versionErrs.length > 0) errs.push(invalid(av, version, versionErrs.join(',')));
    }
  }
  const kind = str(pk, 'kind');
  if (kind === '') errs.push(required(child(pp, 'kind')));
  else {
    const kindErrs = isDNS1035Label(kind.toLowerCase());
    if (kindErrs.length > 0) {
      errs.push(
        invalid(
          child(pp, 'kind'),
          kind,
          `may have mixed case, but should otherwise match: ${kindErrs.join(',')}`,
        ),
      );
    }
  }
}

/** A ValidatingAdmissionPolicy. */
export function validateValidatingAdmissionPolicy(o: JsonObject, errs: FieldError[]): void {
  const spec = obj(o, 'spec') ?? {};
  const sp = 'spec';
  const pk = obj(spec, 'paramKind');
  if (pk !== undefined) {
    validateParamKind(pk, child(sp, 'paramKind'), errs);
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
  const policyName = str(spec, 'policyName');
  if (policyName === '') errs.push(required(child(sp, 'policyName')));
  else {
    for (const msg of isDNS1123Subdomain(policyName))
      errs.push(invalid(child(sp, 'policyName'), policyName, msg));
  }
  const pr = obj(spec, 'paramRef');
  if (pr !== undefined) {
    const pp = child(sp, 'paramRef');
    const hasName = str(pr, 'name') !== '';
    for (const msg of isPathSegmentName(str(pr, 'name'))) {
      if (hasName) errs.push(invalid(child(pp, 'name'), str(pr, 'name'), msg));
    }
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
