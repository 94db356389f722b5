/**
 * The garbage collector, as kube's `pkg/controller/garbagecollector`: monitors every deletable
 * resource (re-discovered periodically, custom resources included) into the owner graph, and
 * two work queues act on it:
 * - attemptToDelete: an object whose owners are all gone (dangling: no object with that UID in
 *   the reference's namespace) or waiting in the foreground is deleted (foreground itself when it
 *   has dependents and an owner waits; else with the policy its own finalizers ask); references
 *   to gone or waiting owners are removed from an object that still has a live owner; an owner
 *   deleting in the foreground loses its `foregroundDeletion` finalizer once no dependent blocks;
 *   a virtual owner is looked up and, when absent, its dependents are checked;
 * - attemptToOrphan: an owner deleted with `orphan` has its reference removed from each
 *   dependent, then loses its `orphan` finalizer.
 * Every decision reads the object fresh from the server; writes carry UID or resourceVersion
 * preconditions, so a stale graph can delay but never delete the wrong thing.
 */
import type { ObjectMeta, OwnerReference } from '../../api/types/meta-v1.js';
import {
  WorkQueue,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  type ResourceClient,
  type ResourceRef,
  type TypedObject,
} from '../../client/index.js';
import { CUSTOM_RESOURCE_DEFINITIONS, apiVersionOf, groupResource } from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { concurrency } from '../config.js';
import { discoverDeletable, type Discovered } from './discovery.js';
import {
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  OwnerGraph,
  type GraphNode,
  type NodeIdentity,
} from './graph.js';
import { startWorkers } from '../shared/workers.js';

type Obj = TypedObject & { metadata: ObjectMeta };

/** The collector. */
export class GarbageCollector {
  readonly #ctx: ControllerContext;
  readonly #deleteQueue: WorkQueue<string>;
  readonly #orphanQueue: WorkQueue<string>;
  readonly #graph: OwnerGraph;
  readonly #recorder: EventSink;
  readonly #monitored = new Set<string>();
  #discovered: Discovered | undefined;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#deleteQueue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter(),
      name: 'garbage_collector_attempt_to_delete',
    });
    this.#orphanQueue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter(),
      name: 'garbage_collector_attempt_to_orphan',
    });
    this.#graph = new OwnerGraph(
      {
        attemptToDelete: (uid) => this.#deleteQueue.add(uid),
        attemptToOrphan: (uid) => this.#orphanQueue.add(uid),
      },
      (apiVersion, kind) => this.#discovered?.resolve(apiVersion, kind)?.namespaced,
    );
    this.#recorder = ctx.eventRecorder('garbage-collector-controller');
  }

  /** Discovers and monitors, then starts the workers; re-discovers every `gcDiscoveryPeriodMs`. */
  async start(): Promise<void> {
    const { signal } = this.#ctx;
    const workers = concurrency(this.#ctx.config, 'gc', 20);
    startWorkers(
      this.#ctx,
      'garbage collector',
      { queue: this.#deleteQueue, workers, sync: (uid) => this.#attemptToDelete(uid) },
      { queue: this.#orphanQueue, workers, sync: (uid) => this.#attemptToOrphan(uid) },
    );
    await this.#resync();
    // New custom resources are monitored soon after their CRD appears, not only at the next poll.
    let soon: NodeJS.Timeout | undefined;
    const resyncSoon = (): void => {
      if (soon !== undefined || signal.aborted) return;
      soon = setTimeout(() => {
        soon = undefined;
        this.#resync().catch((err: unknown) => this.#ctx.log.error('re-reading discovery', err));
      }, 1_000);
      soon.unref();
    };
    this.#ctx.informers
      .informer<Obj>(CUSTOM_RESOURCE_DEFINITIONS)
      .addHandler({ add: resyncSoon, update: resyncSoon, delete: resyncSoon });
    const timer = setInterval(() => {
      this.#resync().catch((err: unknown) => this.#ctx.log.error('re-reading discovery', err));
    }, this.#ctx.config.gcDiscoveryPeriodMs);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /** Reads discovery and adds a monitor for each new deletable resource. */
  async #resync(): Promise<void> {
    const discovered = await discoverDeletable(this.#ctx.client, this.#ctx.signal, (gv, why) =>
      this.#ctx.log.warn(`discovery of ${gv} failed, its resources are not monitored now: ${why}`),
    );
    this.#discovered = discovered;
    for (const ref of discovered.deletable) {
      const id = groupResource(ref);
      if (this.#monitored.has(id)) continue;
      this.#monitored.add(id);
      const apiVersion = apiVersionOf(ref);
      const informer = this.#ctx.informers.informer<Obj>(ref);
      informer.addHandler({
        add: (o) => this.#graph.observe(apiVersion, ref.kind, o.metadata),
        update: (old, cur) => this.#graph.observe(apiVersion, ref.kind, cur.metadata, old.metadata),
        delete: (o) => this.#graph.remove(o.metadata.uid ?? ''),
      });
    }
  }

  #client(apiVersion: string, kind: string): { ref: ResourceRef; client: ResourceClient<Obj> } {
    const ref = this.#discovered?.resolve(apiVersion, kind);
    if (ref === undefined) throw new Error(`no resource serves ${apiVersion} ${kind}`);
    return { ref, client: this.#ctx.client.resource<Obj>(ref) };
  }

  /** The object now, or undefined when absent or replaced (another UID). */
  async #fetch(identity: NodeIdentity, uid: string): Promise<Obj | undefined> {
    const { ref, client } = this.#client(identity.apiVersion, identity.kind);
    try {
      const obj = await client.get(identity.name, ref.namespaced ? { namespace: identity.namespace } : {});
      return obj.metadata.uid === uid ? obj : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async #attemptToDelete(uid: string): Promise<void> {
    const node = this.#graph.get(uid);
    if (node === undefined) return;
    if (node.virtual) {
      if ((await this.#fetch(node.identity, uid)) === undefined) this.#graph.remove(uid);
      return;
    }
    if (node.deletingDependents) {
      await this.#deletingDependents(node);
      return;
    }
    if (node.beingDeleted) return;
    const latest = await this.#fetch(node.identity, uid);
    if (latest === undefined) {
      this.#graph.remove(uid);
      return;
    }
    if (latest.metadata.deletionTimestamp !== undefined) return;
    const refs = latest.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const solid: OwnerReference[] = [];
    const gone: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const state = await this.#ownerState(latest, node, ref);
      (state === 'solid' ? solid : state === 'dangling' ? gone : waiting).push(ref);
    }
    if (solid.length > 0) {
      if (gone.length === 0 && waiting.length === 0) return;
      const drop = new Set([...gone, ...waiting].map((r) => r.uid));
      await this.#patchOwners(
        node.identity,
        latest,
        refs.filter((r) => !drop.has(r.uid)),
      );
      return;
    }
    if (waiting.length > 0 && (node.dependents?.size ?? 0) > 0) {
      // Deleting this in the foreground too; a dependent already waiting on it would deadlock.
      if ([...(node.dependents ?? [])].some((d) => d.deletingDependents)) {
        const waitingUids = new Set(waiting.map((r) => r.uid));
        await this.#patchOwners(
          node.identity,
          latest,
          refs.map((r) => (waitingUids.has(r.uid) ? { ...r, blockOwnerDeletion: false } : r)),
        );
      }
      await this.#delete(node, 'Foreground');
      return;
    }
    const finalizers = latest.metadata.finalizers ?? [];
    const policy = finalizers.includes(ORPHAN_FINALIZER)
      ? 'Orphan'
      : finalizers.includes(FOREGROUND_FINALIZER)
        ? 'Foreground'
        : 'Background';
    await this.#delete(node, policy);
  }

  /** Whether the owner of `ref` exists (solid), is gone (dangling), or deletes in the foreground. */
  async #ownerState(
    item: Obj,
    node: GraphNode,
    ref: OwnerReference,
  ): Promise<'solid' | 'dangling' | 'waiting'> {
    const apiVersion = ref.apiVersion ?? '';
    const kind = ref.kind ?? '';
    const { ref: resource } = this.#client(apiVersion, kind);
    const namespace = resource.namespaced ? node.identity.namespace : '';
    const owner =
      resource.namespaced && namespace === ''
        ? undefined // a cluster-scoped object cannot have a namespaced owner
        : await this.#fetch({ apiVersion, kind, name: ref.name ?? '', namespace }, ref.uid ?? '');
    if (owner === undefined) {
      const known = this.#graph.get(ref.uid ?? '');
      if (
        resource.namespaced &&
        known !== undefined &&
        !known.virtual &&
        known.identity.namespace !== namespace
      ) {
        this.#recorder.event(
          item,
          'Warning',
          'OwnerRefInvalidNamespace',
          'GarbageCollect',
          `ownerRef [${apiVersion}/${kind}, namespace: ${namespace}, name: ${ref.name ?? ''}, uid: ${ref.uid ?? ''}] does not exist in namespace "${namespace}"`,
        );
      }
      return 'dangling';
    }
    const m = owner.metadata;
    return m.deletionTimestamp !== undefined && m.finalizers?.includes(FOREGROUND_FINALIZER) === true
      ? 'waiting'
      : 'solid';
  }

  /** A foreground owner: done when no dependent blocks; else push its blocking dependents. */
  async #deletingDependents(node: GraphNode): Promise<void> {
    const blocking = [...(node.dependents ?? [])].filter((d) =>
      d.owners.some((r) => r.uid === node.uid && r.blockOwnerDeletion === true),
    );
    if (blocking.length === 0) {
      await this.#removeFinalizer(node, FOREGROUND_FINALIZER);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.#deleteQueue.add(dep.uid);
  }

  async #attemptToOrphan(uid: string): Promise<void> {
    const node = this.#graph.get(uid);
    if (node === undefined) return;
    for (const dep of [...(node.dependents ?? [])]) {
      const latest = await this.#fetch(dep.identity, dep.uid);
      if (latest === undefined) continue;
      const refs = latest.metadata.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === uid)) continue;
      await this.#patchOwners(
        dep.identity,
        latest,
        refs.filter((r) => r.uid !== uid),
      );
    }
    await this.#removeFinalizer(node, ORPHAN_FINALIZER);
  }

  async #delete(node: GraphNode, policy: 'Background' | 'Foreground' | 'Orphan'): Promise<void> {
    const { ref, client } = this.#client(node.identity.apiVersion, node.identity.kind);
    try {
      await client.delete(node.identity.name, {
        ...(ref.namespaced ? { namespace: node.identity.namespace } : {}),
        propagationPolicy: policy,
        preconditions: { uid: node.uid },
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return; // gone, or replaced by another UID
      throw err;
    }
  }

  /** Replaces the owner references of `obj` (merge patch guarded by its resourceVersion). */
  async #patchOwners(identity: NodeIdentity, obj: Obj, owners: OwnerReference[]): Promise<void> {
    const { ref, client } = this.#client(identity.apiVersion, identity.kind);
    try {
      await client.patch(
        identity.name,
        {
          metadata: {
            ownerReferences: owners.length === 0 ? null : owners,
            resourceVersion: obj.metadata.resourceVersion,
          },
        },
        { type: 'merge', ...(ref.namespaced ? { namespace: identity.namespace } : {}) },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err; // a conflict retries with a fresh read
    }
  }

  async #removeFinalizer(node: GraphNode, finalizer: string): Promise<void> {
    const latest = await this.#fetch(node.identity, node.uid);
    if (latest === undefined) return;
    const finalizers = latest.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    const { ref, client } = this.#client(node.identity.apiVersion, node.identity.kind);
    const rest = finalizers.filter((f) => f !== finalizer);
    try {
      await client.patch(
        node.identity.name,
        {
          metadata: {
            finalizers: rest.length === 0 ? null : rest,
            resourceVersion: latest.metadata.resourceVersion,
          },
        },
        { type: 'merge', ...(ref.namespaced ? { namespace: node.identity.namespace } : {}) },
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
