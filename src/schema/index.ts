/**
 * Structural schemas of CustomResourceDefinitions (`openAPIV3Schema` of one CRD version),
 * compiled once per CRD change and asked by the custom resources' strategy on every write:
 * defaulting, pruning, validation (OpenAPI rules and `x-kubernetes-validations` CEL rules) and
 * the type server-side apply merges with.
 *
 * This file is the seam between CRD serving (src/apiextensions, src/kinds) and the schema
 * library (this folder). The implementations here are placeholders that accept everything;
 * the schema library replaces them, keeping the interface.
 */
import type { JsonObject } from '../api/object.js';
import type { TypeNode } from '../apply/index.js';
import type { FieldError } from '../validation/field-error.js';

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
   */
  prune(obj: JsonObject): string[];
  /**
   * The schema's validation of `obj` (OpenAPI value rules, then CEL rules; with `old`, the
   * transition rules too). Field paths as kube reports them (`spec.replicas`).
   */
  validate(obj: JsonObject, old: JsonObject | undefined): FieldError[];
  /** The type server-side apply merges with (list types, map types, struct types). */
  readonly applyType: TypeNode;
}

/** Options of {@link compileSchema}. */
export interface CompileOptions {
  /** The CRD's `spec.preserveUnknownFields` (v1 requires false; kept for stored v1beta1 CRDs). */
  readonly preserveUnknownFields?: boolean;
}

const ANY: TypeNode = Object.freeze({ kind: 'leaf', scalar: false });

/**
 * Compiles one version's `openAPIV3Schema` (undefined: none, everything preserved).
 * The CRD was validated before it was stored, so this does not report schema errors.
 */
export function compileSchema(
  openAPIV3Schema: JsonObject | undefined,
  options: CompileOptions = {},
): StructuralSchema {
  void openAPIV3Schema;
  void options;
  return {
    applyDefaults: () => undefined,
    prune: () => [],
    validate: () => [],
    applyType: ANY,
  };
}
