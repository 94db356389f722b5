/**
 * Printers of `rbac.authorization.k8s.io`. Only the bindings have columns in kube-apiserver; roles
 * and cluster roles print the default Name / Created At table.
 */
import { AGE, column, columns, NAME, wide } from './columns.js';
import { since } from './duration.js';
import { list, obj, str } from './fields.js';
import type { TablePrinter } from './index.js';

/** Users, groups and `namespace/name` service accounts among a binding's subjects. */
function subjects(value: unknown): [users: string, groups: string, serviceAccounts: string] {
  const users: string[] = [];
  const groups: string[] = [];
  const serviceAccounts: string[] = [];
  for (const item of list(value)) {
    const subject = obj(item);
    const subjectName = str(subject['name']);
    switch (str(subject['kind'])) {
      case 'ServiceAccount':
        serviceAccounts.push(`${str(subject['namespace'])}/${subjectName}`);
        break;
      case 'User':
        users.push(subjectName);
        break;
      case 'Group':
        groups.push(subjectName);
        break;
      default:
        // Other kinds are not shown.
        break;
    }
  }
  return [users.join(', '), groups.join(', '), serviceAccounts.join(', ')];
}

function bindingPrinter(what: string): TablePrinter {
  return {
    columns: columns(
      NAME,
      column('Role', 'string', 'Role the binding grants, as kind/name.'),
      AGE,
      wide('Users', `Users in the ${what}.`),
      wide('Groups', `Groups in the ${what}.`),
      wide('ServiceAccounts', `Service accounts in the ${what}.`),
    ),
    cells(binding, now) {
      const roleRef = obj(binding['roleRef']);
      return [
        binding.metadata.name ?? '',
        `${str(roleRef['kind'])}/${str(roleRef['name'])}`,
        since(binding.metadata.creationTimestamp, now),
        ...subjects(binding['subjects']),
      ];
    },
  };
}

/** `rbac.authorization.k8s.io` printers by resource. */
export const RBAC_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  rolebindings: bindingPrinter('role binding'),
  clusterrolebindings: bindingPrinter('cluster role binding'),
});
