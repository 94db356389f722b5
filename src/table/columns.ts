/**
 * Building blocks for column definitions. Names, types, formats and priorities are kube-apiserver's
 * (they are what `kubectl get` prints as headers and how it decides what `-o wide` adds); the
 * descriptions are our own short wording.
 */
import type { KubeObject } from '../api/object.js';
import { objectAge } from './fields.js';
import { containerCells, templateContainers } from './format.js';
import type { TableColumn } from './index.js';

/**
 * One column. `priority` 0 is always shown; 1 only with `-o wide`. `format` is `name` for the
 * object-name column and empty otherwise.
 */
export function column(
  name: string,
  type: string,
  description: string,
  priority = 0,
  format = '',
): TableColumn {
  return Object.freeze({ name, type, format, description, priority });
}

/** A string column shown only with `-o wide`. */
export function wide(name: string, description: string): TableColumn {
  return column(name, 'string', description, 1);
}

/** The `Name` column that starts almost every table. */
export const NAME = column('Name', 'string', 'Name of the object, unique within its namespace.', 0, 'name');

/** The `Age` column: time since creation, sent as a preformatted string. */
export const AGE = column('Age', 'string', 'Time since the object was created.');

/** `-o wide` columns of the workload kinds. */
export const CONTAINERS = wide('Containers', 'Names of the containers in the pod template.');
export const IMAGES = wide('Images', 'Images of the containers in the pod template.');
export const SELECTOR = wide('Selector', 'Label selector of the pods this object manages.');

/**
 * The columns the workload kinds end with (deployments, replica sets, daemon sets, replication
 * controllers, jobs, cron jobs): `Age`, then the `-o wide` containers, images and selector.
 */
export const WORKLOAD_COLUMNS = columns(AGE, CONTAINERS, IMAGES, SELECTOR);

/**
 * The cells of {@link WORKLOAD_COLUMNS}: the object's age, the names and images of its pod
 * template's containers, and its `selector` cell (each kind prints its selector its own way).
 */
export function workloadCells(
  o: KubeObject,
  now: Date,
  template: unknown,
  selector: string,
): [age: string, containers: string, images: string, selector: string] {
  const [names, images] = containerCells(templateContainers(template));
  return [objectAge(o, now), names, images, selector];
}

/** Freezes a column list so a printer's columns cannot be changed by a caller. */
export function columns(...items: TableColumn[]): readonly TableColumn[] {
  return Object.freeze(items);
}
