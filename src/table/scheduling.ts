/** Printers of `scheduling.k8s.io` (priority classes) and `node.k8s.io` (runtime classes). */
import { AGE, column, columns, NAME } from './columns.js';
import { since } from './duration.js';
import { int, optStr, str } from './fields.js';
import type { TablePrinter } from './index.js';

const PRIORITY_CLASS: TablePrinter = {
  columns: columns(
    NAME,
    column('Value', 'integer', 'Priority of pods using the class.'),
    column('Global-Default', 'boolean', 'Whether the class applies to pods without a class.'),
    AGE,
    // kube declares this column at priority 0 although it fills the cell only for wide output.
    column('PreemptionPolicy', 'string', 'Whether pods of the class may preempt others.'),
  ),
  cells: (pc, now) => [
    pc.metadata.name ?? '',
    int(pc['value']),
    pc['globalDefault'] === true,
    since(pc.metadata.creationTimestamp, now),
    optStr(pc['preemptionPolicy']) ?? '',
  ],
};

const RUNTIME_CLASS: TablePrinter = {
  columns: columns(NAME, column('Handler', 'string', 'Container runtime handler of the class.'), AGE),
  cells: (rc, now) => [rc.metadata.name ?? '', str(rc['handler']), since(rc.metadata.creationTimestamp, now)],
};

/** `scheduling.k8s.io` printers by resource. */
export const SCHEDULING_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  priorityclasses: PRIORITY_CLASS,
});

/** `node.k8s.io` printers by resource. */
export const NODE_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  runtimeclasses: RUNTIME_CLASS,
});
