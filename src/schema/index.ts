/**
 * Structural schemas of CustomResourceDefinitions (`openAPIV3Schema` of one CRD version),
 * compiled once per CRD change and asked by the custom resources' strategy on every write:
 * defaulting, pruning, validation (OpenAPI rules and `x-kubernetes-validations` CEL rules) and
 * the type server-side apply merges with.
 *
 * This file is the seam between CRD serving (src/apiextensions, src/kinds) and the schema
 * library (this folder): node.ts compiles the JSON, defaulting.ts, pruning.ts, values.ts
 * (OpenAPI value rules), formats.ts, list-types.ts (set/map uniqueness and the apply type),
 * embedded.ts, cel-rules.ts (`x-kubernetes-validations`) and crd-checks.ts (the CRD's own
 * structural checks).
 */
import type { JsonObject } from '../api/object.js';
import type { TypeNode } from '../apply/index.js';
import type { FieldError } from '../validation/field-error.js';
import { compileRules, type CompiledRules } from './cel-rules.js';
import { applyDefaults, pruneNonNullableNulls } from './defaulting.js';
import { validateEmbedded } from './embedded.js';
import { applyTypeOf, validateListTypes } from './list-types.js';
import { compileNode, type SchemaNode } from './node.js';
import { pruneValue } from './pruning.js';
import { validateValue } from './values.js';

export { compileNode, type SchemaNode, type ValidationRule } from './node.js';
export { checkCRDSchemas } from './crd-checks.js';
export { SchemaStruct } from './list-types.js';

/** One CRD version's compiled schema. Immutable; shared by every request. */
export interface StructuralSchema {
  /**
   * Applies the schema's `default`s in place (kube defaults on decode of a request and on read
   * from storage). Idempotent; never throws.
   */
  applyDefaults(obj: JsonObject): void;
  /**
   * Removes, in place, every field the schema does not declare (unless
   * `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and `metadata` at the root are
   * kept, `metadata` reduced to ObjectMeta's fields as kube does). Returns the removed fields'
   * paths as kube names them in `fieldValidation` messages (`spec.foo`, `spec.items[0].bar`).
   * Also drops, unreported, null values of non-nullable fields without a default (kube's
   * `PruneNonNullableNullsWithoutDefaults`).
   */
  prune(obj: JsonObject): string[];
  /**
   * The schema's validation of `obj` (OpenAPI value rules, then CEL rules; with `old`, the
   * transition rules too). Field paths as kube reports them (`spec.replicas`).
   */
  validate(obj: JsonObject, old: JsonObject | undefined): FieldError[];
  /** The type server-side apply merges with (list types, map types, struct types). */
  readonly applyType: TypeNode;
  /** The compiled root node (undefined without a schema). */
  readonly root?: SchemaNode | undefined;
}

/** Options of {@link compileSchema}. */
export interface CompileOptions {
  /** The CRD's `spec.preserveUnknownFields` (v1 requires false; kept for stored v1beta1 CRDs). */
  readonly preserveUnknownFields?: boolean;
  /** Runtime CEL cost budget per validate() call (kube's per-request limit); tests lower it. */
  readonly celCostBudget?: number;
}

class CompiledSchema implements StructuralSchema {
  readonly applyType: TypeNode;
  readonly #root: SchemaNode | undefined;
  readonly #preserve: boolean;
  readonly #rules: CompiledRules | undefined;

  constructor(root: SchemaNode | undefined, options: CompileOptions) {
    this.#root = root;
    this.#preserve = options.preserveUnknownFields === true || root === undefined;
    this.applyType = applyTypeOf(root, true, 'root', this.#preserve);
    this.#rules = root === undefined ? undefined : compileRules(root, options.celCostBudget);
  }

  get root(): SchemaNode | undefined {
    return this.#root;
  }

  applyDefaults(obj: JsonObject): void {
    if (this.#root !== undefined) applyDefaults(obj, this.#root);
  }

  prune(obj: JsonObject): string[] {
    if (this.#root === undefined) return [];
    const pruned: string[] = [];
    if (!this.#preserve) pruneValue(obj, this.#root, true, '', pruned);
    pruneNonNullableNulls(obj, this.#root);
    return pruned;
  }

  validate(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
    const root = this.#root;
    if (root === undefined) return [];
    const errs: FieldError[] = [];
    // Root metadata is validated as ObjectMeta by the generic registry, not by the schema.
    const { metadata: _m, ...rest } = obj;
    void _m;
    validateValue(root, rest, '', errs);
    validateListTypes(root, obj, '', errs);
    for (const [k, p] of root.properties) if (k !== 'metadata') validateEmbedded(p, obj[k], k, errs);
    if (this.#rules !== undefined) errs.push(...this.#rules.validate(obj, old));
    // kube validates with a nil root path, which prints as `<nil>`.
    return errs.map((e) => (e.field === '' ? { ...e, field: '<nil>' } : e));
  }
}

/**
 * Compiles one version's `openAPIV3Schema` (undefined: none, everything preserved).
 * The CRD was validated before it was stored, so this does not report schema errors
 * (see {@link checkCRDSchemas} for those).
 */
export function compileSchema(
  openAPIV3Schema: JsonObject | undefined,
  options: CompileOptions = {},
): StructuralSchema {
  return new CompiledSchema(
    openAPIV3Schema === undefined ? undefined : compileNode(openAPIV3Schema),
    options,
  );
}
