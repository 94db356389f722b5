/** Printers of the `policy` group: pod disruption budgets. */
import { AGE, column, columns, NAME } from './columns.js';
import { since } from './duration.js';
import { int, obj } from './fields.js';
import type { TablePrinter } from './index.js';

/** An int-or-string as printed: the number or the string (`50%`); `N/A` when unset. */
function intOrString(value: unknown): string {
  if (typeof value === 'number') return String(Math.trunc(value));
  if (typeof value === 'string') return value;
  return 'N/A';
}

const POD_DISRUPTION_BUDGET: TablePrinter = {
  columns: columns(
    NAME,
    column('Min Available', 'string', 'Pods that must stay available.'),
    column('Max Unavailable', 'string', 'Pods that may be unavailable.'),
    column('Allowed Disruptions', 'integer', 'Pod disruptions currently allowed.'),
    AGE,
  ),
  cells(pdb, now) {
    const spec = obj(pdb['spec']);
    return [
      pdb.metadata.name ?? '',
      intOrString(spec['minAvailable']),
      intOrString(spec['maxUnavailable']),
      int(obj(pdb['status'])['disruptionsAllowed']),
      since(pdb.metadata.creationTimestamp, now),
    ];
  },
};

/** `policy` printers by resource. */
export const POLICY_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  poddisruptionbudgets: POD_DISRUPTION_BUDGET,
});
