/**
 * Table responses (`application/json;as=Table;g=meta.k8s.io;v=v1|v1beta1`, JSON or YAML): the
 * columns and cells of the kind's printer (src/table), one row per object, each row's `object`
 * chosen by `includeObject`:
 *
 * - `None`: no object;
 * - `Metadata` (the default, as kube): a `PartialObjectMetadata` of the Table's version;
 * - `Object`: the whole object.
 *
 * A single object is a Table with one row, its `metadata.resourceVersion` the object's; a list's
 * Table carries the list metadata. In a watch every event's object is a one-row Table (with the
 * column definitions, which clients print once); ERROR events carry their Status unchanged.
 */
import { badRequest } from '../api/errors.js';
import type { KubeObject } from '../api/object.js';
import type { TablePrinter } from '../table/index.js';
import { listMetaObject } from './json.js';
import type { Transform } from './negotiate.js';
import { partialObjectMetadata } from './partial.js';
import { ValueSource } from './source.js';
import type { ListMetaValues, ObjectSource, Representation, WatchEventType } from './types.js';

/** The `includeObject` policies of TableOptions. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/**
 * Reads `includeObject` (absent or empty: `Metadata`).
 * @throws ApiError 400 for any other value.
 */
export function parseIncludeObject(value: string | undefined): IncludeObject {
  if (value === undefined || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(
    `Invalid value: ${JSON.stringify(value)}: includeObject: supported values: "None", "Metadata", "Object"`,
  );
}

/** A Table over a JSON or YAML representation (which only serializes the Table value). */
export class TableRepresentation implements Representation {
  readonly contentType: string;
  readonly streamContentType: string;
  readonly #inner: Representation;
  readonly #printer: TablePrinter;
  readonly #apiVersion: string;
  readonly #include: IncludeObject;
  readonly #now: () => Date;
  readonly #columns: readonly Record<string, unknown>[];

  constructor(
    inner: Representation,
    printer: TablePrinter,
    transform: Transform,
    include: IncludeObject,
    now: () => Date,
  ) {
    this.#inner = inner;
    this.#printer = printer;
    this.#apiVersion = `meta.k8s.io/${transform.version}`;
    this.#include = include;
    this.#now = now;
    this.contentType = inner.contentType;
    this.streamContentType = inner.streamContentType;
    this.#columns = printer.columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      description: c.description,
      priority: c.priority,
    }));
  }

  #row(obj: KubeObject, now: Date): Record<string, unknown> {
    const row: Record<string, unknown> = { cells: this.#printer.cells(obj, now) };
    if (this.#include === 'Object') row['object'] = obj;
    else if (this.#include === 'Metadata')
      row['object'] = partialObjectMetadata(obj, this.#apiVersion.slice('meta.k8s.io/'.length));
    return row;
  }

  #table(metadata: Record<string, unknown>, objects: readonly KubeObject[]): ObjectSource {
    const now = this.#now();
    return new ValueSource({
      kind: 'Table',
      apiVersion: this.#apiVersion,
      metadata,
      columnDefinitions: this.#columns,
      rows: objects.map((o) => this.#row(o, now)),
    });
  }

  object(source: ObjectSource): Uint8Array {
    const obj = source.object();
    const rv = obj.metadata.resourceVersion;
    return this.#inner.object(this.#table(rv === undefined ? {} : { resourceVersion: rv }, [obj]));
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    return this.#inner.object(
      this.#table(
        listMetaObject(meta),
        items.map((s) => s.object()),
      ),
    );
  }

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    if (type === 'ERROR') return this.#inner.event(type, source);
    const obj = source.object();
    const rv = obj.metadata.resourceVersion;
    const metadata = rv === undefined ? {} : { resourceVersion: rv };
    return this.#inner.event(type, this.#table(metadata, type === 'BOOKMARK' ? [] : [obj]));
  }
}
