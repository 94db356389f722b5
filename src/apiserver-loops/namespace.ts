/**
 * The namespace lifecycle controller: finishes the deletion of namespaces marked Terminating.
 *
 * For each namespace with a `deletionTimestamp` it deletes every object inside, kind by kind (by
 * the rules of a client's DELETE, so the content's finalizers and grace periods hold it back),
 * and once nothing is left it removes the `kubernetes` entry of `spec.finalizers`, which deletes
 * the namespace (unless metadata finalizers still hold it). Content that is not gone yet is
 * retried after a delay.
 *
 * States of the controller: listing → watching → (on a watch failure) waiting → listing …;
 * `stop()` ends it from any state. Several servers over one store may each run it: every write
 * is conditional, and losing a race only means another server did the work.
 */
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { deleteObject } from '../resource/delete.js';
import { collectionSpan } from '../resource/keys.js';
import { NAMESPACE_FINALIZER } from '../kinds/index.js';
import { namespaceType } from '../resource/namespace-lifecycle.js';
import { decodeStored, isJsonObject } from '../api/object.js';
import { applyUpdate } from '../resource/update.js';
import type { Watch } from '../../storage/interface.js';

/** A running controller. */
export interface NamespaceController {
  /** Stops watching and retrying; resolves when the current pass has finished. */
  stop(): Promise<void>;
}

/** Tuning of {@link startNamespaceController}. */
export interface NamespaceControllerOptions {
  /** Delay before retrying a namespace whose content is not gone yet (ms, default 1000). */
  readonly retryMs?: number;
}

/** One stored type per storage location (core and events.k8s.io Events share one). */
function contentTypes(ctx: ResourceContext): ResourceType[] {
  const seen = new Set<string>();
  const out: ResourceType[] = [];
  for (const t of ctx.registry.all()) {
    if (!t.namespaced || t.virtual || t.storageResource === '' || seen.has(t.storageResource)) continue;
    seen.add(t.storageResource);
    out.push(t);
  }
  return out;
}

/**
 * Deletes what is in namespace `ns`.
 * @returns how many objects are still there (held by finalizers, grace periods, or errors).
 */
export async function deleteNamespaceContent(ctx: ResourceContext, ns: string): Promise<number> {
  let remaining = 0;
  for (const type of contentTypes(ctx)) {
    const { items } = await ctx.store.range(collectionSpan(type, ns));
    for (const kv of items) {
      const name = decodeStored(kv.value, kv.modRevision).metadata.name ?? '';
      try {
        const result = await deleteObject(ctx, type, ns, name, {});
        if (!result.removed) remaining++;
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) remaining++;
      }
    }
  }
  return remaining;
}

/** Removes the namespace's `kubernetes` finalizer (and so the namespace, when nothing else holds it). */
async function finalizeNamespace(ctx: ResourceContext, name: string): Promise<void> {
  await applyUpdate(ctx, {
    type: namespaceType(ctx),
    namespace: undefined,
    name,
    part: 'finalize',
    allowCreate: false,
    build: (current) => {
      if (current === undefined) throw new Error('finalize without a namespace');
      const spec = isJsonObject(current['spec']) ? current['spec'] : {};
      const finalizers = Array.isArray(spec['finalizers']) ? spec['finalizers'] : [];
      current['spec'] = { ...spec, finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER) };
      return current;
    },
  });
}

class Controller implements NamespaceController {
  readonly #ctx: ResourceContext;
  readonly #retryMs: number;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #busy = new Set<string>();
  readonly #again = new Set<string>();
  readonly #inflight = new Set<Promise<void>>();
  /** Resolvers of the loop's pause, called by stop() so it never waits for a timer. */
  readonly #wakers = new Set<() => void>();
  #watch: Watch | undefined;
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(ctx: ResourceContext, options: NamespaceControllerOptions) {
    this.#ctx = ctx;
    this.#retryMs = options.retryMs ?? 1000;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watch?.close();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const wake of this.#wakers) wake();
    this.#wakers.clear();
    await this.#loop;
    await Promise.allSettled([...this.#inflight]);
  }

  #later(fn: () => void, ms: number): void {
    if (this.#stopped) return;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  /** Queues a pass over namespace `name` (coalesced while one runs). */
  #enqueue(name: string): void {
    if (this.#stopped) return;
    if (this.#busy.has(name)) {
      this.#again.add(name);
      return;
    }
    this.#busy.add(name);
    const pass = this.#process(name).finally(() => {
      this.#inflight.delete(pass);
      this.#busy.delete(name);
      if (this.#again.delete(name)) this.#enqueue(name);
    });
    this.#inflight.add(pass);
  }

  async #process(name: string): Promise<void> {
    try {
      const remaining = await deleteNamespaceContent(this.#ctx, name);
      if (this.#stopped) return;
      if (remaining > 0) {
        this.#later(() => this.#enqueue(name), this.#retryMs);
        return;
      }
      await finalizeNamespace(this.#ctx, name);
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'NotFound') return;
      this.#later(() => this.#enqueue(name), this.#retryMs);
    }
  }

  async #run(): Promise<void> {
    const type = namespaceType(this.#ctx);
    const span = collectionSpan(type, undefined);
    while (!this.#stopped) {
      try {
        const listed = await this.#ctx.store.range(span);
        for (const kv of listed.items) {
          const ns = decodeStored(kv.value, kv.modRevision);
          if (ns.metadata.deletionTimestamp) this.#enqueue(ns.metadata.name ?? '');
        }
        if (this.#stopped) return;
        const watch = this.#ctx.store.watch(span, { fromRevision: listed.revision + 1n });
        this.#watch = watch;
        if (this.#stopped) watch.close();
        for await (const ev of watch) {
          if (ev.type !== 'put') continue;
          const ns = decodeStored(ev.kv.value, ev.kv.modRevision);
          if (ns.metadata.deletionTimestamp) this.#enqueue(ns.metadata.name ?? '');
        }
      } catch {
        // Compacted or unavailable: list again after a pause.
        if (this.#stopped) return;
        await new Promise<void>((resolve) => {
          this.#wakers.add(resolve);
          this.#later(() => {
            this.#wakers.delete(resolve);
            resolve();
          }, this.#retryMs);
        });
      }
    }
  }
}

/** Starts the namespace controller over `ctx`'s store. */
export function startNamespaceController(
  ctx: ResourceContext,
  options: NamespaceControllerOptions = {},
): NamespaceController {
  return new Controller(ctx, options);
}
