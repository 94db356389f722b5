/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1)
 * read from their stored objects into shapes with kube's v1 defaults filled in.
 */
import type { JsonObject, KubeObject } from '../../api/object.js';
import { isJsonObject } from '../../api/object.js';
import { objects, ruleOf, str } from '../webhook/configurations.js';
import type { MatchCondition, WebhookRule } from '../webhook/types.js';

/** A `resourceRules[]` / `excludeResourceRules[]` entry (kube's NamedRuleWithOperations). */
export interface NamedRule extends WebhookRule {
  /** Empty: every name. */
  readonly resourceNames: readonly string[];
}

/** `matchConstraints` of a policy, `matchResources` of a binding. */
export interface MatchResources {
  readonly rules: readonly NamedRule[];
  readonly excludeRules: readonly NamedRule[];
  readonly namespaceSelector: JsonObject;
  readonly objectSelector: JsonObject;
  readonly matchPolicy: 'Exact' | 'Equivalent';
}

/** One `validations[]` entry. */
export interface Validation {
  readonly expression: string;
  readonly message: string;
  readonly messageExpression: string;
  /** Unauthorized, Forbidden, Invalid, RequestEntityTooLarge; '' (kube's default: Invalid). */
  readonly reason: string;
}

/** A policy, defaults applied. */
export interface PolicySpec {
  readonly name: string;
  readonly generation: number;
  readonly paramKind: { readonly apiVersion: string; readonly kind: string } | undefined;
  readonly matchConstraints: MatchResources;
  readonly validations: readonly Validation[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly auditAnnotations: readonly { readonly key: string; readonly valueExpression: string }[];
  readonly matchConditions: readonly MatchCondition[];
  readonly variables: readonly { readonly name: string; readonly expression: string }[];
}

/** A binding's `paramRef`. */
export interface ParamRef {
  readonly name: string;
  readonly namespace: string;
  readonly selector: JsonObject | undefined;
  readonly parameterNotFoundAction: 'Allow' | 'Deny';
}

/** A binding, defaults applied. */
export interface BindingSpec {
  readonly name: string;
  readonly policyName: string;
  readonly paramRef: ParamRef | undefined;
  readonly matchResources: MatchResources | undefined;
  readonly validationActions: readonly ('Deny' | 'Warn' | 'Audit')[];
}

function specOf(obj: KubeObject): JsonObject {
  return isJsonObject(obj['spec']) ? obj['spec'] : {};
}

function namedRule(r: JsonObject): NamedRule {
  const names = r['resourceNames'];
  return {
    ...ruleOf(r),
    resourceNames: Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [],
  };
}

function matchResourcesOf(m: JsonObject): MatchResources {
  return {
    rules: objects(m['resourceRules']).map(namedRule),
    excludeRules: objects(m['excludeResourceRules']).map(namedRule),
    namespaceSelector: isJsonObject(m['namespaceSelector']) ? m['namespaceSelector'] : {},
    objectSelector: isJsonObject(m['objectSelector']) ? m['objectSelector'] : {},
    matchPolicy: m['matchPolicy'] === 'Exact' ? 'Exact' : 'Equivalent',
  };
}

/** The policy stored as `obj`. */
export function policyOf(obj: KubeObject): PolicySpec {
  const spec = specOf(obj);
  const pk = isJsonObject(spec['paramKind']) ? spec['paramKind'] : undefined;
  return {
    name: obj.metadata.name ?? '',
    generation: typeof obj.metadata.generation === 'number' ? obj.metadata.generation : 0,
    paramKind: pk === undefined ? undefined : { apiVersion: str(pk, 'apiVersion'), kind: str(pk, 'kind') },
    matchConstraints: matchResourcesOf(
      isJsonObject(spec['matchConstraints']) ? spec['matchConstraints'] : {},
    ),
    validations: objects(spec['validations']).map((v) => ({
      expression: str(v, 'expression'),
      message: str(v, 'message'),
      messageExpression: str(v, 'messageExpression'),
      reason: str(v, 'reason'),
    })),
    failurePolicy: spec['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail',
    auditAnnotations: objects(spec['auditAnnotations']).map((a) => ({
      key: str(a, 'key'),
      valueExpression: str(a, 'valueExpression'),
    })),
    matchConditions: objects(spec['matchConditions']).map((c) => ({
      name: str(c, 'name'),
      expression: str(c, 'expression'),
    })),
    variables: objects(spec['variables']).map((v) => ({
      name: str(v, 'name'),
      expression: str(v, 'expression'),
    })),
  };
}

/** The binding stored as `obj`. */
export function bindingOf(obj: KubeObject): BindingSpec {
  const spec = specOf(obj);
  const pr = isJsonObject(spec['paramRef']) ? spec['paramRef'] : undefined;
  const actions = Array.isArray(spec['validationActions'])
    ? spec['validationActions'].filter((a): a is 'Deny' | 'Warn' | 'Audit' =>
        ['Deny', 'Warn', 'Audit'].includes(a as string),
      )
    : [];
  return {
    name: obj.metadata.name ?? '',
    policyName: str(spec, 'policyName'),
    paramRef:
      pr === undefined
        ? undefined
        : {
            name: str(pr, 'name'),
            namespace: str(pr, 'namespace'),
            selector: isJsonObject(pr['selector']) ? pr['selector'] : undefined,
            parameterNotFoundAction: pr['parameterNotFoundAction'] === 'Allow' ? 'Allow' : 'Deny',
          },
    matchResources: isJsonObject(spec['matchResources'])
      ? matchResourcesOf(spec['matchResources'])
      : undefined,
    validationActions: actions,
  };
}
