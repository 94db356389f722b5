/** Printers of the `apps` group: deployments, replica sets, stateful sets, daemon sets, revisions. */
import type { KubeObject } from '../api/object.js';
import {
  AGE,
  column,
  columns,
  CONTAINERS,
  IMAGES,
  NAME,
  WORKLOAD_COLUMNS,
  workloadCells,
} from './columns.js';
import { int, list, obj, optInt, str, objectAge as age, objectName as name } from './fields.js';
import {
  containerCells,
  formatLabels,
  formatLabelSelector,
  selectorString,
  templateContainers,
} from './format.js';
import type { TablePrinter } from './index.js';

/** `spec.replicas`, which apps/v1 (and core/v1, for replication controllers) defaults to 1. */
const desired = (spec: ReturnType<typeof obj>): number => optInt(spec['replicas']) ?? 1;

const DEPLOYMENT: TablePrinter = {
  columns: columns(
    NAME,
    column('Ready', 'string', 'Ready replicas out of desired replicas.'),
    column('Up-to-date', 'string', 'Replicas running the newest pod template.'),
    column('Available', 'string', 'Replicas available to serve.'),
    ...WORKLOAD_COLUMNS,
  ),
  cells(deployment, now) {
    const spec = obj(deployment['spec']);
    const status = obj(deployment['status']);
    return [
      name(deployment),
      `${int(status['readyReplicas'])}/${desired(spec)}`,
      int(status['updatedReplicas']),
      int(status['availableReplicas']),
      // Unlike the other workloads, an empty selector prints as an empty cell, not <none>.
      ...workloadCells(deployment, now, spec['template'], selectorString(spec['selector']) ?? '<invalid>'),
    ];
  },
};

/**
 * The printer of replica sets, and of the core group's replication controllers: the same columns,
 * only the selector differs (a label selector, a plain label map), printed by `selectorCell`.
 */
export function replicaPrinter(selectorCell: (selector: unknown) => string): TablePrinter {
  return {
    columns: columns(
      NAME,
      column('Desired', 'integer', 'Number of replicas requested.'),
      column('Current', 'integer', 'Number of replicas observed.'),
      column('Ready', 'integer', 'Number of ready replicas.'),
      ...WORKLOAD_COLUMNS,
    ),
    cells(rs, now) {
      const spec = obj(rs['spec']);
      const status = obj(rs['status']);
      return [
        name(rs),
        desired(spec),
        int(status['replicas']),
        int(status['readyReplicas']),
        ...workloadCells(rs, now, spec['template'], selectorCell(spec['selector'])),
      ];
    },
  };
}

const STATEFUL_SET: TablePrinter = {
  columns: columns(
    NAME,
    column('Ready', 'string', 'Ready replicas out of desired replicas.'),
    AGE,
    CONTAINERS,
    IMAGES,
  ),
  cells(sts, now) {
    const spec = obj(sts['spec']);
    const [names, images] = containerCells(templateContainers(spec['template']));
    return [
      name(sts),
      `${int(obj(sts['status'])['readyReplicas'])}/${desired(spec)}`,
      age(sts, now),
      names,
      images,
    ];
  },
};

const DAEMON_SET: TablePrinter = {
  columns: columns(
    NAME,
    column('Desired', 'integer', 'Number of nodes that should run the daemon pod.'),
    column('Current', 'integer', 'Number of nodes running the daemon pod.'),
    column('Ready', 'integer', 'Number of nodes with a ready daemon pod.'),
    column('Up-to-date', 'integer', 'Number of nodes running the newest pod template.'),
    column('Available', 'integer', 'Number of nodes with an available daemon pod.'),
    column('Node Selector', 'string', 'Node selector of the pod template.'),
    ...WORKLOAD_COLUMNS,
  ),
  cells(ds, now) {
    const spec = obj(ds['spec']);
    const status = obj(ds['status']);
    return [
      name(ds),
      int(status['desiredNumberScheduled']),
      int(status['currentNumberScheduled']),
      int(status['numberReady']),
      int(status['updatedNumberScheduled']),
      int(status['numberAvailable']),
      formatLabels(obj(obj(spec['template'])['spec'])['nodeSelector']),
      ...workloadCells(ds, now, spec['template'], formatLabelSelector(spec['selector'])),
    ];
  },
};

/** CONTROLLER: `kind.group/name` (lower-cased kind and group) of the controlling owner, or `<none>`. */
function controllerOf(o: KubeObject): string {
  for (const item of list(o.metadata.ownerReferences)) {
    const ref = obj(item);
    if (ref['controller'] !== true) continue;
    const apiVersion = str(ref['apiVersion']);
    const slash = apiVersion.indexOf('/');
    // "v1" has no group; "apps/v1" has group "apps". More than one slash is a parse error in kube.
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const kind = str(ref['kind']);
    const groupKind = group === '' ? kind : `${kind}.${group}`;
    if (kind === '' && group === '') return str(ref['name']);
    return `${groupKind.toLowerCase()}/${str(ref['name'])}`;
  }
  return '<none>';
}

const CONTROLLER_REVISION: TablePrinter = {
  columns: columns(
    NAME,
    column('Controller', 'string', 'Controller that owns the revision.'),
    column('Revision', 'string', 'Revision number.'),
    AGE,
  ),
  cells: (cr, now) => [name(cr), controllerOf(cr), int(cr['revision']), age(cr, now)],
};

/** `apps` printers by resource. */
export const APPS_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  deployments: DEPLOYMENT,
  replicasets: replicaPrinter(formatLabelSelector),
  statefulsets: STATEFUL_SET,
  daemonsets: DAEMON_SET,
  controllerrevisions: CONTROLLER_REVISION,
});
