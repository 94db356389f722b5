/**
 * The bridge between the write handlers and the field-ownership library (src/apply): one per
 * server, holding apply's compiled schema (built lazily on the first write: the schema file is
 * read then) and the reset-field table.
 *
 * - {@link FieldManager.trackUpdate}: every non-apply write (POST, PUT, non-apply PATCH, status,
 *   scale, finalize) records an `Update` entry for its manager, after defaulting and before
 *   mutating admission, as kube-apiserver's handlers do.
 * - {@link FieldManager.apply}: server-side apply's merge, ownership and conflicts; its errors
 *   become the API errors kube answers with (409 `Conflict` with one cause per field, 400s).
 */
import {
  APPLY_ERROR_STATUS,
  ApplyConflictError,
  ApplyError,
  ObjectTypes,
  applyOperation,
  updateOperation,
  type StructType,
} from '../apply/index.js';
import type { JsonMap } from '../apply/value.js';
import { ApiError } from '../api/errors.js';
import { ProtobufCodec } from '../codec/protobuf.js';
import type { SchemaSet } from '../registry/schema.js';
import type { ResourceType } from '../registry/types.js';
import { deepFreeze, type KubeObject } from '../api/object.js';
import type { KindStrategies } from '../kinds/index.js';
import type { WriteOptions } from './write-options.js';

/** ObjectMeta's message: the `metadata` type of custom resources. */
const OBJECT_META = 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** What {@link FieldManager.apply} needs besides the objects. */
export interface ApplyRequest {
  readonly type: ResourceType;
  /** `status`, `scale`; undefined for the main resource. */
  readonly subresource: string | undefined;
  /** The stored object (a private copy), or undefined when the apply creates it. */
  readonly live: KubeObject | undefined;
  readonly config: JsonMap;
  readonly write: WriteOptions;
  readonly now: Date;
}

/** managedFields maintenance for one server (see the module comment). */
export class FieldManager {
  readonly #load: () => SchemaSet;
  #types: ObjectTypes | undefined;
  readonly #strategies: KindStrategies;
  /** Go's zero value of each built-in kind made so far, by message type (frozen). */
  readonly #zeros = new Map<string, JsonMap>();

  /**
   * @param load returns the schema set (called once, on the first write).
   * @param strategies the kinds' strategies (their reset fields).
   */
  constructor(load: () => SchemaSet, strategies: KindStrategies) {
    this.#load = load;
    this.#strategies = strategies;
  }

  #typeOf(type: ResourceType, values: readonly unknown[]): StructType {
    this.#types ??= new ObjectTypes(this.#load());
    const strategy = this.#strategies.find(type);
    if (strategy?.applyType !== undefined) {
      return strategy.applyType(this.#types.forMessage(OBJECT_META), values);
    }
    return this.#types.forKind(type.messageType);
  }

  /** The type of `metadata` (ObjectMeta), which custom resources share with the built-in kinds. */
  objectMetaType(): StructType {
    this.#types ??= new ObjectTypes(this.#load());
    return this.#types.forMessage(OBJECT_META);
  }

  /** True when the schema set describes message `messageType` (built-in kinds). */
  describes(messageType: string): boolean {
    return this.#load().message(messageType) !== undefined;
  }

  /** The kind's apply type, or undefined when the schema set does not describe it. */
  typeOf(type: ResourceType): StructType | undefined {
    if (type.messageType === '' || !this.describes(type.messageType)) return undefined;
    return this.#typeOf(type, []);
  }

  /**
   * What a create is compared with: for a built-in kind, the Go zero value of its type as
   * kube's converter renders it (`{"metadata":{"creationTimestamp":null},"spec":{"containers":null},
   * "status":{}}` for a Pod), since kube-apiserver's create handler tracks fields against a new,
   * empty typed object. So a struct that Go always has (`spec`, `spec.template`) is not recorded
   * as added (no `"."` entry), while a pointer, map or omitempty field is. Custom resources start
   * from nothing, as kube's empty unstructured object does.
   */
  #createBase(type: ResourceType): JsonMap | undefined {
    if (type.messageType === '' || this.#strategies.find(type)?.applyType !== undefined) return undefined;
    if (!this.describes(type.messageType)) return undefined;
    let zero = this.#zeros.get(type.messageType);
    if (zero === undefined) {
      const codec = new ProtobufCodec(this.#load());
      zero = deepFreeze(codec.decodeMessage(type.messageType, new Uint8Array(0)) as JsonMap);
      this.#zeros.set(type.messageType, zero);
    }
    return zero;
  }

  /**
   * Sets `next.metadata.managedFields` after a non-apply write of `old` → `next` (old undefined
   * for a create, compared then with the kind's empty object). Kube's handlers call it on the
   * decoded, defaulted object before mutating admission and the kind's preparation, so what
   * those add is owned by no manager. Never throws for bad client entries (they are reset, as
   * kube does).
   */
  trackUpdate(
    type: ResourceType,
    subresource: string | undefined,
    old: KubeObject | undefined,
    next: KubeObject,
    write: WriteOptions,
    now: Date,
  ): void {
    const ignored = this.#strategies.of(type).resetFields(subresource);
    const base = old === undefined ? this.#createBase(type) : undefined;
    const result = updateOperation({
      type: this.#typeOf(type, [old, next]),
      manager: write.manager,
      apiVersion: type.apiVersion,
      ...(subresource === undefined ? {} : { subresource }),
      now,
      ...(ignored === undefined ? {} : { ignoredFields: ignored }),
      oldObject: old as JsonMap | undefined,
      newObject: next as JsonMap,
      ...(base === undefined ? {} : { createBase: base }),
    });
    if (result.managedFields.length === 0) delete next.metadata.managedFields;
    else next.metadata.managedFields = result.managedFields;
  }

  /**
   * Server-side apply of `config` onto `live`: the merged object with its managedFields (not yet
   * defaulted or validated), or undefined when nothing would change.
   * @throws ApiError 409 `Conflict` (causes name each field and manager), 400 for a config that
   *   is not an object of the endpoint's kind or does not fit its schema.
   */
  apply(r: ApplyRequest): { object: KubeObject; changed: boolean } {
    const ignored = this.#strategies.of(r.type).resetFields(r.subresource);
    try {
      const result = applyOperation({
        type: this.#typeOf(r.type, [r.live, r.config]),
        manager: r.write.manager,
        apiVersion: r.type.apiVersion,
        ...(r.subresource === undefined ? {} : { subresource: r.subresource }),
        now: r.now,
        ...(ignored === undefined ? {} : { ignoredFields: ignored }),
        live: r.live as JsonMap | undefined,
        config: r.config,
        kind: r.type.kind,
        force: r.write.force,
      });
      return { object: result.object as KubeObject, changed: result.changed };
    } catch (err) {
      throw toApiError(err);
    }
  }
}

/** An apply library error as the API error kube answers with; other errors pass through. */
export function toApiError(err: unknown): unknown {
  if (err instanceof ApplyConflictError) {
    return new ApiError('Conflict', err.message, { causes: err.causes }, { cause: err });
  }
  if (err instanceof ApplyError) {
    const status = APPLY_ERROR_STATUS[err.code];
    return new ApiError(status.reason, err.message, undefined, { cause: err, code: status.code });
  }
  return err;
}
