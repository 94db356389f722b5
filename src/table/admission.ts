/**
 * Printers of `admissionregistration.k8s.io` and `apiregistration.k8s.io` (API services, served by
 * the aggregator with its own columns).
 */
import type { KubeObject } from '../api/object.js';
import { AGE, column, columns, NAME } from './columns.js';
import { list, obj, str, objectAge as age, objectName as name } from './fields.js';
import { selectorString } from './format.js';
import type { TablePrinter } from './index.js';

const WEBHOOK_CONFIGURATION: TablePrinter = {
  columns: columns(NAME, column('Webhooks', 'integer', 'Number of webhooks in the configuration.'), AGE),
  cells: (config, now) => [name(config), list(config['webhooks']).length, age(config, now)],
};

/** PARAMKIND: `apiVersion/kind` of the parameter resource, or `<unset>`. */
function paramKind(spec: ReturnType<typeof obj>): string {
  const kind = spec['paramKind'];
  if (kind === undefined || kind === null) return '<unset>';
  return `${str(obj(kind)['apiVersion'])}/${str(obj(kind)['kind'])}`;
}

function policyPrinter(countColumn: string, countField: string): TablePrinter {
  return {
    columns: columns(
      NAME,
      column(countColumn, 'integer', `Number of ${countField} in the policy.`),
      column('ParamKind', 'string', 'Kind of the resources that parameterise the policy.'),
      AGE,
    ),
    cells(policy, now) {
      const spec = obj(policy['spec']);
      return [name(policy), list(spec[countField]).length, paramKind(spec), age(policy, now)];
    },
  };
}

/**
 * PARAMREF: `namespace/name`; the name under a `*` namespace when no namespace is given; else the
 * selector; else `<unset>`.
 */
function paramRef(spec: ReturnType<typeof obj>): string {
  const ref = spec['paramRef'];
  if (ref === undefined || ref === null) return '<unset>';
  const r = obj(ref);
  const refName = str(r['name']);
  if (refName !== '')
    return str(r['namespace']) !== '' ? `${str(r['namespace'])}/${refName}` : `*/${refName}`;
  const selector = r['selector'];
  if (selector === undefined || selector === null) return '<unset>';
  return selectorString(selector) ?? '';
}

const POLICY_BINDING: TablePrinter = {
  columns: columns(
    NAME,
    column('PolicyName', 'string', 'Policy the binding applies.'),
    column('ParamRef', 'string', 'Parameter resource of the binding.'),
    AGE,
  ),
  cells(binding, now) {
    const spec = obj(binding['spec']);
    return [name(binding), str(spec['policyName']), paramRef(spec), age(binding, now)];
  },
};

/** AVAILABLE of an API service: `True`, or the condition status with its reason. */
function apiServiceAvailable(service: KubeObject): string {
  for (const item of list(obj(service['status'])['conditions'])) {
    const condition = obj(item);
    if (str(condition['type']) !== 'Available') continue;
    const status = str(condition['status']);
    const reason = str(condition['reason']);
    return status !== 'True' && reason !== '' ? `${status} (${reason})` : status;
  }
  return 'Unknown';
}

const API_SERVICE: TablePrinter = {
  columns: columns(
    NAME,
    column('Service', 'string', 'Service that serves the API, or Local.'),
    column('Available', 'string', 'Whether the API is available.'),
    AGE,
  ),
  cells(service, now) {
    const ref = obj(service['spec'])['service'];
    const target =
      ref === undefined || ref === null ? 'Local' : `${str(obj(ref)['namespace'])}/${str(obj(ref)['name'])}`;
    return [name(service), target, apiServiceAvailable(service), age(service, now)];
  },
};

/** `admissionregistration.k8s.io` printers by resource. */
export const ADMISSION_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  mutatingwebhookconfigurations: WEBHOOK_CONFIGURATION,
  validatingwebhookconfigurations: WEBHOOK_CONFIGURATION,
  validatingadmissionpolicies: policyPrinter('Validations', 'validations'),
  validatingadmissionpolicybindings: POLICY_BINDING,
  mutatingadmissionpolicies: policyPrinter('Mutations', 'mutations'),
  mutatingadmissionpolicybindings: POLICY_BINDING,
});

/** `apiregistration.k8s.io` printers by resource. */
export const API_REGISTRATION_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  apiservices: API_SERVICE,
});
