/**
 * The Table printer of a custom resource version, from its CRD's `additionalPrinterColumns`
 * (kube's CRD table convertor): `Name` first, then each declared column, its cell the first
 * value its JSONPath finds as kube types it (none or mistyped: null; `date` as the time since
 * it, `5m`); a version without columns gets `Age`
 * (`.metadata.creationTimestamp`, type date), as kube-apiserver serves it.
 */
import type { KubeObject } from '../api/object.js';
import { DEFAULT_PRINTER, type TableColumn, type TablePrinter } from './index.js';
import { humanDuration, parseTime } from './duration.js';
import { evaluateJsonPath, parseJsonPath } from './jsonpath.js';

/** One `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

const AGE: PrinterColumn = {
  name: 'Age',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  jsonPath: '.metadata.creationTimestamp',
};

function cell(type: string, values: readonly unknown[], now: Date): unknown {
  const v = values[0];
  if (v === undefined || v === null) return null;
  switch (type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? v : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date': {
      // kube prints a date cell as the time since it (`HumanDuration`).
      const ms = typeof v === 'string' ? parseTime(v) : undefined;
      return ms === undefined ? null : humanDuration(now.getTime() - ms);
    }
    case 'string':
      if (typeof v === 'string') return v;
      return typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
    default:
      return null;
  }
}

/** The printer of `columns` (a version's `additionalPrinterColumns`; empty: `Age` only). */
export function printerOfColumns(columns: readonly PrinterColumn[]): TablePrinter {
  const declared = columns.length === 0 ? [AGE] : columns;
  const paths = declared.map((c) => {
    try {
      return parseJsonPath(c.jsonPath);
    } catch {
      return undefined;
    }
  });
  const nameColumn = DEFAULT_PRINTER.columns[0];
  const defs: TableColumn[] = [
    ...(nameColumn === undefined ? [] : [nameColumn]),
    ...declared.map((c): TableColumn => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
  ];
  return {
    columns: defs,
    cells(object: KubeObject, now: Date): unknown[] {
      return [
        object.metadata.name ?? '',
        ...declared.map((c, i) => {
          const steps = paths[i];
          return steps === undefined ? null : cell(c.type, evaluateJsonPath(object, steps), now);
        }),
      ];
    },
  };
}
