/**
 * The EndpointSlice writes shared by the endpointslice and endpointslicemirroring controllers
 * (kube's two reconcilers' `finalize`): a sync's plan is written as creates, then updates, then
 * deletes (a slice already gone counts as deleted), and what was written is remembered until the
 * slice cache shows it ({@link WriteTracker}), so the next sync of that key waits rather than act
 * on stale slices and create a second set.
 */
import type { EndpointSlice } from '../../api/types/discovery-v1.js';
import { isNotFound, type ResourceClient } from '../../client/index.js';
import { WriteTracker, type CacheLookup, type Writes } from './write-tracker.js';

/** What one sync writes. */
export interface SlicePlan {
  readonly create: readonly EndpointSlice[];
  readonly update: readonly EndpointSlice[];
  readonly delete: readonly EndpointSlice[];
}

/** How {@link SliceReconciler.apply} writes one plan. */
export interface ApplyOptions {
  /** False while the owner is being deleted: no new slices then (default true). */
  readonly create?: boolean;
  /** What the owner is, for a failed update's error (`Service`, `Endpoints`). */
  readonly owner: string;
}

/** Writes slice plans through one client, one key (`namespace/name` of the owner) at a time. */
export class SliceReconciler {
  readonly #client: ResourceClient<EndpointSlice>;
  readonly #writes: WriteTracker;

  /** `cached` reads the controller's slice cache. */
  constructor(client: ResourceClient<EndpointSlice>, cached: CacheLookup) {
    this.#client = client;
    this.#writes = new WriteTracker(cached);
  }

  /** True while the slice cache does not show every write of the last sync of `key` yet. */
  behind(key: string): boolean {
    return this.#writes.behind(key);
  }

  /**
   * Writes `plan` for `key`. What was written is remembered even when a write fails.
   * @throws the first write's error other than a delete's NotFound (an update's names the slice).
   */
  async apply(key: string, plan: SlicePlan, options: ApplyOptions): Promise<void> {
    const written: Writes = new Map();
    try {
      if (options.create !== false)
        for (const slice of plan.create) {
          const made = await this.#client.create(slice);
          written.set(made.metadata.name ?? '', made.metadata.resourceVersion ?? '0');
        }
      for (const slice of plan.update) {
        try {
          const made = await this.#client.update(slice);
          written.set(made.metadata.name ?? '', made.metadata.resourceVersion ?? '0');
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          throw new Error(
            `failed to update ${slice.metadata.name ?? ''} EndpointSlice for ${options.owner} ${key}: ${why}`,
            { cause: err },
          );
        }
      }
      for (const slice of plan.delete) {
        try {
          await this.#client.delete(slice.metadata.name ?? '', { namespace: slice.metadata.namespace ?? '' });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        written.set(slice.metadata.name ?? '', null);
      }
    } finally {
      this.#writes.record(key, written);
    }
  }
}
