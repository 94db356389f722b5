/**
 * The strategy of a custom resource kind, built from its CustomResourceDefinition (one per group
 * and kind; the served versions share it and differ by schema, printer columns and
 * subresources): kube's custom resource strategy. Generation is tracked; the status subresource,
 * when a version has one, makes main writes keep the stored status and status writes keep
 * everything else (the handler does both, see src/resource/update.ts); the scale subresource
 * maps a Scale onto the version's replicas and selector paths; Table rows come from the
 * version's `additionalPrinterColumns`. Defaulting, pruning and validation are the version's
 * structural schema's (src/schema), asked at kube's points of the write path.
 */
import type { FieldSet, StructType, TypeNode } from '../apply/index.js';
import type { KubeObject } from '../api/object.js';
import type { StructuralSchema } from '../schema/index.js';
import { printerOfColumns, type PrinterColumn } from '../table/printer-columns.js';
import type { TablePrinter } from '../table/index.js';
import { evaluateJsonPath, parseJsonPath } from '../table/jsonpath.js';
import { validateObject, type FieldError } from '../validation/index.js';
import { customApplyType } from './apply-type.js';
import { ResetFields } from './reset-fields.js';
import type { KindStrategy, ScaleMapping } from './strategy.js';

/** A version's `subresources.scale`. */
export interface ScalePaths {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
}

/** What the strategy knows of one served version. */
export interface CustomVersion {
  readonly name: string;
  readonly schema: StructuralSchema;
  readonly hasStatus: boolean;
  readonly scale: ScalePaths | undefined;
  readonly columns: readonly PrinterColumn[];
  /** `selectableFields[].jsonPath` (`.spec.color`). */
  readonly selectableFields: readonly string[];
}

/** A custom kind: its group, kind and versions (the storage version's first is not required). */
export interface CustomKind {
  readonly group: string;
  readonly kind: string;
  readonly versions: readonly CustomVersion[];
}

/** The status strategy of custom resources keeps the whole stored metadata. */
const STATUS_KEEPS = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

function setAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parseJsonPath(path);
  let at: Record<string, unknown> = obj;
  steps.forEach((step, i) => {
    if (step.kind !== 'field') return;
    if (i === steps.length - 1) {
      at[step.name] = value;
      return;
    }
    const next = at[step.name];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[step.name] = {};
    at = at[step.name] as Record<string, unknown>;
  });
}

function firstAt(obj: unknown, path: string): unknown {
  try {
    return evaluateJsonPath(obj, parseJsonPath(path))[0];
  } catch {
    return undefined;
  }
}

function scaleMapping(paths: ScalePaths): ScaleMapping {
  return {
    read(obj) {
      const spec = firstAt(obj, paths.specReplicasPath);
      const status = firstAt(obj, paths.statusReplicasPath);
      const selector =
        paths.labelSelectorPath === undefined ? undefined : firstAt(obj, paths.labelSelectorPath);
      return {
        specReplicas: typeof spec === 'number' ? spec : 0,
        statusReplicas: typeof status === 'number' ? status : 0,
        selector: typeof selector === 'string' && selector !== '' ? selector : undefined,
      };
    },
    setReplicas(obj, replicas) {
      setAt(obj, paths.specReplicasPath, replicas);
    },
  };
}

/** A custom resource kind's {@link KindStrategy}. */
export class CustomStrategy implements KindStrategy {
  readonly tracksGeneration = true;
  readonly createOnUpdate = false;
  readonly keepStatusOnCreate = false;
  readonly returnDeletedObject = false;
  readonly nameRule = 'subdomain' as const;
  readonly eventTTL = false;
  readonly statusKeepsMetadata: readonly string[] = STATUS_KEEPS;
  readonly table: TablePrinter;
  readonly scale: ScaleMapping | undefined;
  readonly selectableFields: readonly string[];
  readonly #group: string;
  readonly #kind: string;
  readonly #versions = new Map<string, CustomVersion>();
  readonly #printers = new Map<string, TablePrinter>();
  readonly #reset: ResetFields;
  readonly #first: CustomVersion | undefined;

  constructor(kind: CustomKind) {
    this.#group = kind.group;
    this.#kind = kind.kind;
    for (const v of kind.versions) {
      this.#versions.set(v.name, v);
      this.#printers.set(v.name, printerOfColumns(v.columns));
    }
    this.#first = kind.versions[0];
    this.table = printerOfColumns(this.#first?.columns ?? []);
    const scaled = kind.versions.find((v) => v.scale !== undefined)?.scale;
    this.scale = scaled === undefined ? undefined : scaleMapping(scaled);
    this.selectableFields = [
      ...new Set(kind.versions.flatMap((v) => v.selectableFields.map((f) => f.replace(/^\./, '')))),
    ];
    this.#reset = new ResetFields(kind.versions.some((v) => v.hasStatus));
  }

  /** The version `obj` is in (by its apiVersion), or the first served one. */
  #versionOf(obj: KubeObject): CustomVersion | undefined {
    const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    return this.#versions.get(version) ?? this.#first;
  }

  /** The schema of `obj`'s version. */
  schemaOf(obj: KubeObject): StructuralSchema | undefined {
    return this.#versionOf(obj)?.schema;
  }

  tableOf(version: string): TablePrinter {
    return this.#printers.get(version) ?? this.table;
  }

  default(obj: KubeObject): void {
    this.#versionOf(obj)?.schema.applyDefaults(obj);
  }

  prepareForCreate(): FieldError[] {
    return [];
  }

  prepareForUpdate(): FieldError[] {
    return [];
  }

  prepareForStatusUpdate(): void {
    // Custom resources' status writes have no preparation besides the generic one.
  }

  warnings(): string[] {
    return [];
  }

  validate(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
    const errs = validateObject(this.#group, this.#kind, obj, old);
    const schema = this.#versionOf(obj)?.schema;
    if (schema !== undefined) errs.push(...schema.validate(obj, old));
    return errs;
  }

  pruneUnknown(obj: KubeObject): string[] {
    return this.#versionOf(obj)?.schema.prune(obj) ?? [];
  }

  applyType(objectMeta: TypeNode, values: readonly unknown[]): StructType {
    const sample = values.find((v): v is KubeObject => v !== null && typeof v === 'object');
    const schema = sample === undefined ? this.#first?.schema : this.#versionOf(sample)?.schema;
    return customApplyType(
      this.#kind,
      objectMeta,
      schema?.applyType ?? { kind: 'leaf', scalar: false },
      values,
    );
  }

  resetFields(subresource: string | undefined): FieldSet | undefined {
    return this.#reset.of(subresource);
  }

  gracePeriodSeconds(): number {
    return 0;
  }

  readonly gracefulDelete = false;

  canDeleteOnUpdate(): boolean {
    return true;
  }
}
