/**
 * Table columns per kind: what `kubectl get` prints. Capstan answers
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` with a `meta.k8s.io/v1` Table whose
 * columns and cells come from here; the negotiation and the Table envelope (rows' `object` per
 * `includeObject`, list metadata) live in the representation layer.
 *
 * This module is only the seam: every kind gets kube-apiserver's default two columns (`Name`,
 * `Created At`) until its own printer is registered in {@link printerFor}.
 */
import type { KubeObject } from '../resource/object.js';

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
 */
export function printerFor(group: string, resource: string): TablePrinter {
  void group;
  void resource;
  return DEFAULT_PRINTER;
}
