/**
 * One stored object and the writes that go through the field manager, as the HTTP handlers
 * will drive it: apply (PATCH apply-patch+yaml) and update (POST/PUT/other PATCH). A clock
 * advances one second per write so entry times are distinguishable.
 */
import {
  applyOperation,
  updateOperation,
  type ApplyResult,
  type FieldSet,
  type ManagedFieldsEntry,
  type StructType,
} from '../../src/apply/index.js';
import type { JsonMap } from '../../src/apply/value.js';

export class Cluster {
  object: JsonMap | undefined;
  #clock = Date.parse('2024-05-01T12:00:00Z');

  constructor(
    readonly type: StructType,
    readonly apiVersion: string,
    readonly kind: string,
    readonly ignoredFields?: FieldSet,
  ) {}

  #now(): Date {
    this.#clock += 1000;
    return new Date(this.#clock);
  }

  get managedFields(): ManagedFieldsEntry[] {
    const meta = this.object?.['metadata'] as { managedFields?: ManagedFieldsEntry[] } | undefined;
    return meta?.managedFields ?? [];
  }

  /** The entry of `manager` (first match on operation when given). */
  entry(manager: string, operation?: 'Apply' | 'Update'): ManagedFieldsEntry | undefined {
    return this.managedFields.find(
      (e) => e.manager === manager && (operation === undefined || e.operation === operation),
    );
  }

  /** Server-side apply; the store keeps the result only when it changed. */
  apply(manager: string, config: Record<string, unknown>, force = false, subresource?: string): ApplyResult {
    const result = applyOperation({
      type: this.type,
      live: this.object,
      config: config as JsonMap,
      manager,
      force,
      apiVersion: this.apiVersion,
      kind: this.kind,
      now: this.#now(),
      ...(subresource === undefined ? {} : { subresource }),
      ...(this.ignoredFields === undefined ? {} : { ignoredFields: this.ignoredFields }),
    });
    if (result.changed) this.object = result.object;
    return result;
  }

  /** A create (no stored object) or a full replace by `manager`. */
  update(manager: string, next: Record<string, unknown>, subresource?: string): JsonMap {
    const { object } = updateOperation({
      type: this.type,
      oldObject: this.object,
      newObject: next as JsonMap,
      manager,
      apiVersion: this.apiVersion,
      now: this.#now(),
      ...(subresource === undefined ? {} : { subresource }),
      ...(this.ignoredFields === undefined ? {} : { ignoredFields: this.ignoredFields }),
    });
    this.object = object;
    return object;
  }
}
