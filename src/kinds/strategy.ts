/**
 * A kind's behaviour in the generic resource handler, behind one interface: what the handlers
 * ask instead of consulting per-kind tables. Built-in kinds get {@link BuiltInStrategy}
 * (`builtin.ts`); a custom resource's strategy will be built at run time from its
 * CustomResourceDefinition (schema defaulting and validation, printer columns, subresources) and
 * registered in {@link KindStrategies} (`strategies.ts`).
 *
 * Every method is given the decoded object; they mutate only the object they are given (never
 * `old`). Write path order (src/resource/metadata.ts): `default` → the handler's server-owned
 * metadata → `prepareForCreate`/`prepareForUpdate` → `validate`.
 */
import type { FieldSet, StructType, TypeNode } from '../apply/index.js';
import type { KubeObject } from '../api/object.js';
import type { PrepareOptions } from '../defaults/prepare.js';
import type { NameRule } from '../registry/types.js';
import type { TablePrinter } from '../table/index.js';
import type { FieldError } from '../validation/index.js';

/** One kind's behaviour. */
export interface KindStrategy {
  /** `metadata.generation` is 1 on create and +1 on each change outside metadata and status. */
  readonly tracksGeneration: boolean;
  /** A PUT of a missing object creates it. */
  readonly createOnUpdate: boolean;
  /** A client-set `status` survives create (kinds with a status subresource drop it otherwise). */
  readonly keepStatusOnCreate: boolean;
  /** DELETE answers with the object; otherwise with a `Status` of `Success`. */
  readonly returnDeletedObject: boolean;
  /** The name rule of metadata validation. */
  readonly nameRule: NameRule;
  /** Objects are written with the `--event-ttl` storage lease. */
  readonly eventTTL: boolean;
  /** The Table columns and cells (`kubectl get`). */
  readonly table: TablePrinter;

  /**
   * Metadata fields a status write keeps from the stored object instead of the request (kube's
   * status strategies: most take labels, annotations, finalizers and owner references from the
   * request; some keep a few or all of them).
   */
  readonly statusKeepsMetadata: readonly string[];

  /** kube's defaulting (what kube does on decode), in place; idempotent; never throws. */
  default(obj: KubeObject): void;
  /** The strategy's create-time preparation, in place; returns field errors to report as 422. */
  prepareForCreate(obj: KubeObject, options?: PrepareOptions): FieldError[];
  /** The strategy's update-time preparation of `obj` from `old`, in place (not `old`). */
  prepareForUpdate(obj: KubeObject, old: KubeObject, options?: PrepareOptions): FieldError[];
  /** The status strategy's preparation of a status write `obj` from `old`, in place. */
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject): void;
  /**
   * Validation (metadata, then the kind's rules; with `old`, the update rules too, or those of
   * the `subresource` written when it has its own: a pod's `ephemeralcontainers`).
   */
  validate(obj: KubeObject, old: KubeObject | undefined, subresource?: string): FieldError[];
  /**
   * What a valid write of `obj` (`old` on update) should still be warned about, kube's
   * `WarningsOnCreate`/`WarningsOnUpdate`, sent as `Warning` headers.
   */
  warnings(obj: KubeObject, old: KubeObject | undefined): string[];
  /**
   * The fields a write through `subresource` (undefined: the main resource) cannot set (kube's
   * `GetResetFields`), or undefined when it resets none.
   */
  resetFields(subresource: string | undefined): FieldSet | undefined;
  /**
   * The grace period a DELETE gets (seconds; 0: deleted at once). `requested` is the client's
   * `gracePeriodSeconds`.
   */
  gracePeriodSeconds(obj: KubeObject, requested: number | undefined): number;
  /**
   * True for a kind with graceful deletion (kube's `RESTGracefulDeleteStrategy`: pods). A delete
   * of such an object always first writes `deletionTimestamp` and `deletionGracePeriodSeconds`;
   * with a grace period of 0 it then deletes the object written.
   */
  readonly gracefulDelete: boolean;
  /** Extra condition for removing an object whose last finalizer an update removed. */
  canDeleteOnUpdate(obj: KubeObject): boolean;

  // --- Optional: what custom resources (and a few built-ins) do differently. ---

  /**
   * The Table printer of one served version, when versions of the kind print differently
   * (custom resources' per-version `additionalPrinterColumns`); default {@link table}.
   */
  tableOf?(version: string): TablePrinter;
  /**
   * The `scale` subresource's mapping onto the object, when it is not kube's built-in
   * `spec.replicas`/`status.replicas`/`spec.selector` (custom resources' scale paths).
   */
  readonly scale?: ScaleMapping | undefined;
  /**
   * Field selector labels the kind selects on besides `metadata.name` and
   * `metadata.namespace` (custom resources' `selectableFields`, as `spec.color`).
   */
  readonly selectableFields?: readonly string[] | undefined;
  /**
   * Removes fields the kind's schema does not declare, in place, and returns their paths as
   * `fieldValidation` reports them; for kinds the built-in schema set does not describe.
   */
  pruneUnknown?(obj: KubeObject): string[];
  /**
   * The type server-side apply merges objects of this kind with, for kinds the built-in schema
   * set does not describe. `objectMeta` is ObjectMeta's type; `values` are the objects of the
   * operation (types of fields the kind's schema leaves open are deduced from them).
   */
  applyType?(objectMeta: TypeNode, values: readonly unknown[]): StructType;
  /**
   * Called by DELETE on an object that is not being deleted yet, before deciding between
   * removal and two-phase deletion: may add finalizers or conditions (kube's CRD storage adds
   * its cleanup finalizer here). Mutates `obj`.
   */
  readonly prepareForDelete?: ((obj: KubeObject, now: Date) => void) | undefined;
}

/** A Scale's view of an object, and the write of its replicas. */
export interface ScaleMapping {
  /** `spec.replicas`, `status.replicas` and `status.selector` of the object's Scale. */
  read(obj: KubeObject): { specReplicas: number; statusReplicas: number; selector: string | undefined };
  /** Sets the object's desired replicas, in place. */
  setReplicas(obj: KubeObject, replicas: number): void;
}
