/**
 * Table columns per kind: what `kubectl get` prints. Capstan answers
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` with a `meta.k8s.io/v1` Table whose
 * columns and cells come from here; the negotiation and the Table envelope (rows' `object` per
 * `includeObject`, list metadata) live in the representation layer.
 *
 * Kinds with kube-apiserver printers get the same column sets (one module per API group); every
 * other kind, custom resources and CRDs included, gets the default two columns (`Name`,
 * `Created At`), as kube-apiserver's default table convertor does.
 */
import type { KubeObject } from '../api/object.js';
import { ADMISSION_PRINTERS, API_REGISTRATION_PRINTERS } from './admission.js';
import { APPS_PRINTERS } from './apps.js';
import { AUTOSCALING_PRINTERS } from './autoscaling.js';
import { BATCH_PRINTERS } from './batch.js';
import { CERTIFICATES_PRINTERS } from './certificates.js';
import { COORDINATION_PRINTERS } from './coordination.js';
import { CORE_PRINTERS } from './core.js';
import { EVENT_PRINTER, EVENTS_API_PRINTER } from './events.js';
import { FLOWCONTROL_PRINTERS } from './flowcontrol.js';
import { DISCOVERY_PRINTERS, NETWORKING_PRINTERS } from './networking.js';
import { POD_PRINTER } from './pod.js';
import { POLICY_PRINTERS } from './policy.js';
import { RBAC_PRINTERS } from './rbac.js';
import { NODE_PRINTERS, SCHEDULING_PRINTERS } from './scheduling.js';
import { STORAGE_PRINTERS } from './storage.js';
import { VOLUME_PRINTERS } from './volumes.js';

/** One `columnDefinitions` entry of a Table, as kube-apiserver sends it. */
export interface TableColumn {
  readonly name: string;
  /** OpenAPI type: `string`, `integer`, `number`, `boolean`. */
  readonly type: string;
  /** OpenAPI format: `name`, `date-time`, or empty. */
  readonly format: string;
  readonly description: string;
  /** 0: always shown; 1 and above: shown with `-o wide` only. */
  readonly priority: number;
}

/** The columns and cells of one kind. */
export interface TablePrinter {
  readonly columns: readonly TableColumn[];
  /** The cells of one object's row, one per column, in column order. */
  cells(object: KubeObject, now: Date): unknown[];
}

/** kube-apiserver's default columns for kinds without a printer of their own. */
export const DEFAULT_PRINTER: TablePrinter = {
  columns: [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: 'Name must be unique within a namespace.',
      priority: 0,
    },
    {
      name: 'Created At',
      type: 'date',
      format: '',
      description:
        'CreationTimestamp is a timestamp representing the server time when this object was created.',
      priority: 0,
    },
  ],
  cells(object) {
    return [object.metadata.name ?? '', object.metadata.creationTimestamp ?? null];
  },
};

/**
 * The printer of a resource (`group` is `''` for the core group; `resource` is the plural, e.g.
 * `deployments`). Always answers: kinds without their own columns get {@link DEFAULT_PRINTER}.
 * Printers always yield every column including the `-o wide` (priority 1) ones, as kube-apiserver
 * does; clients hide what they do not want. Versions of one group share a printer (the cells read
 * fields common to the served versions).
 */
export function printerFor(group: string, resource: string): TablePrinter {
  const byResource = PRINTERS.get(group);
  // hasOwn: a resource named like an Object.prototype member must not find the prototype's value.
  return byResource !== undefined && Object.hasOwn(byResource, resource)
    ? (byResource[resource] ?? DEFAULT_PRINTER)
    : DEFAULT_PRINTER;
}

/** Printers by API group, then by resource. Built once from explicit imports; never mutated. */
const PRINTERS: ReadonlyMap<string, Readonly<Record<string, TablePrinter>>> = new Map([
  ['', { ...CORE_PRINTERS, ...VOLUME_PRINTERS, pods: POD_PRINTER, events: EVENT_PRINTER }],
  ['events.k8s.io', { events: EVENTS_API_PRINTER }],
  ['apps', APPS_PRINTERS],
  ['batch', BATCH_PRINTERS],
  ['autoscaling', AUTOSCALING_PRINTERS],
  ['policy', POLICY_PRINTERS],
  ['networking.k8s.io', NETWORKING_PRINTERS],
  ['discovery.k8s.io', DISCOVERY_PRINTERS],
  ['rbac.authorization.k8s.io', RBAC_PRINTERS],
  ['storage.k8s.io', STORAGE_PRINTERS],
  ['coordination.k8s.io', COORDINATION_PRINTERS],
  ['scheduling.k8s.io', SCHEDULING_PRINTERS],
  ['node.k8s.io', NODE_PRINTERS],
  ['admissionregistration.k8s.io', ADMISSION_PRINTERS],
  ['apiregistration.k8s.io', API_REGISTRATION_PRINTERS],
  ['certificates.k8s.io', CERTIFICATES_PRINTERS],
  ['flowcontrol.apiserver.k8s.io', FLOWCONTROL_PRINTERS],
]);
