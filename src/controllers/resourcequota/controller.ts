/**
 * The resource quota controller (kube's `resourcequota-controller`): keeps every ResourceQuota's
 * `status.hard` equal to its `spec.hard` and `status.used` equal to what its namespace's objects
 * count (kube's evaluators, shared with the server's ResourceQuota admission plugin through
 * `src/api/quota`). A quota is recounted when it is created or its `spec.hard` edited, when an
 * object it may count goes or comes to count less (replenishment: the core kinds it watches;
 * other `count/` resources at the full resync), and every `--resource-quota-sync-period`
 * (5 minutes).
 *
 * The admission plugin charges a quota as objects are created; this controller gives back what
 * deleted or finished objects held and corrects any drift. As kube's, it does not recount on the
 * events that admission's charge brings (a quota whose status alone changed, a created object, an
 * update that does not lower the object's usage): between the charge and the object's arrival in
 * the cache, a count is low, and writing it would let admission go past the limit.
 */
import { isJsonObject, jsonEqual, type JsonObject } from '../../api/object.js';
import { compareQuantities } from '../../api/quantity.js';
import {
  ZERO,
  addQuantities,
  resourcesJson,
  resourcesOf,
  type Resources,
} from '../../api/quota/quantities.js';
import { quotaSelects, usageOf, type UsageKind } from '../../api/quota/usage.js';
import type { ResourceQuota } from '../../api/types/core-v1.js';
import {
  RESOURCE_QUOTAS,
  WorkQueue,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  type ResourceClient,
  type ResourceRef,
  type SharedInformer,
  type TypedObject,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext } from '../context.js';
import { discoverNamespaced, type NamespacedResource } from '../namespace/discovery.js';
import { keyOf, splitKey } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';
import { WATCHED, targetOf } from './kinds.js';

const DISCOVERY_TTL_MS = 30_000;

function usageKind(ref: ResourceRef): UsageKind {
  return { group: ref.group, kind: ref.kind, plural: ref.resource };
}

/**
 * kube's replenishment on update: whether the object now counts less than before for some
 * resource (a pod that finished, a Service that is no longer a NodePort or LoadBalancer, a claim
 * that asks for less storage).
 */
export function usageDropped(kind: UsageKind, before: TypedObject, after: TypedObject): boolean {
  const now = usageOf(kind, after as unknown as JsonObject);
  for (const [r, q] of usageOf(kind, before as unknown as JsonObject)) {
    const n = now.get(r) ?? ZERO;
    if (compareQuantities(n, q) < 0) return true;
  }
  return false;
}

/** One running controller. */
export class ResourceQuotaController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue<string>({
    rateLimiter: defaultControllerRateLimiter(),
    name: 'resourcequota',
  });
  readonly #quotas: SharedInformer<ResourceQuota>;
  readonly #informers = new Map<ResourceRef, SharedInformer<TypedObject>>();
  readonly #client: ResourceClient<ResourceQuota>;
  #discovery: { at: number; resources: readonly NamespacedResource[] } | undefined;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#quotas = ctx.informers.informer<ResourceQuota>(RESOURCE_QUOTAS);
    this.#client = ctx.client.resource<ResourceQuota>(RESOURCE_QUOTAS);
    this.#quotas.addHandler({
      add: (q) => this.#queue.add(keyOf(q.metadata)),
      // Only a change of spec.hard: status writes are this controller's and admission's charges.
      update: (old, q) => {
        if (!jsonEqual(old.spec?.hard ?? {}, q.spec?.hard ?? {})) this.#queue.add(keyOf(q.metadata));
      },
    });
    const replenish = (obj: TypedObject): void => this.#enqueueNamespace(obj.metadata?.namespace ?? '');
    for (const ref of WATCHED) {
      const informer = ctx.informers.informer<TypedObject>(ref);
      this.#informers.set(ref, informer);
      if (ref === RESOURCE_QUOTAS) continue;
      const kind = usageKind(ref);
      informer.addHandler({
        update: (old, o) => {
          if (usageDropped(kind, old, o)) replenish(o);
        },
        delete: replenish,
      });
    }
  }

  /** Starts the workers and the full resync. */
  start(): void {
    startWorkers(this.#ctx, 'resourcequota', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'resource-quota', 5),
      sync: (k) => this.sync(k),
    });
    const period = Number(this.#ctx.config.flags.get('resource-quota-sync-period') ?? 300_000);
    const timer = setInterval(() => {
      for (const q of this.#quotas.store.list()) this.#queue.add(keyOf(q.metadata));
    }, period);
    timer.unref();
    this.#ctx.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  #enqueueNamespace(namespace: string): void {
    if (namespace === '' || !this.#quotas.hasSynced()) return;
    for (const q of this.#quotas.store.byIndex('namespace', namespace)) this.#queue.add(keyOf(q.metadata));
  }

  /** Recounts one quota and writes its status when it changed. */
  async sync(key: string): Promise<void> {
    const quota = this.#quotas.store.get(key);
    if (quota === undefined) return;
    const hard = resourcesOf(quota.spec?.hard);
    const used = await this.#count(quota, hard);
    const status = { hard: resourcesJson(hard), used: resourcesJson(used) };
    const current = (quota.status ?? {}) as JsonObject;
    if (jsonEqual(status, { hard: current['hard'] ?? {}, used: current['used'] ?? {} })) return;
    try {
      await this.#client.updateStatus({
        ...quota,
        status: {
          ...quota.status,
          hard: status.hard as Record<string, string>,
          used: status.used as Record<string, string>,
        },
      });
    } catch (err) {
      if (isNotFound(err)) return;
      // The admission plugin charged it meanwhile: count again from the newer copy.
      if (isConflict(err)) {
        this.#queue.addAfter(key, 100);
        return;
      }
      throw err;
    }
  }

  async #count(quota: ResourceQuota, hard: Resources): Promise<Resources> {
    const { namespace } = splitKey(keyOf(quota.metadata));
    const used: Resources = new Map([...hard.keys()].map((r) => [r, ZERO]));
    const refs = new Set<ResourceRef>();
    for (const r of hard.keys()) {
      const target = targetOf(r);
      if (target === undefined) continue;
      if ('ref' in target) refs.add(target.ref);
      else {
        const ref = await this.#resolve(target.group, target.resource);
        if (ref !== undefined) refs.add(ref);
      }
    }
    const quotaJson = quota as unknown as JsonObject;
    for (const ref of refs) {
      const kind = usageKind(ref);
      for (const item of await this.#objects(ref, namespace)) {
        const obj = item as unknown as JsonObject;
        if (!isJsonObject(obj) || !quotaSelects(quotaJson, kind, obj)) continue;
        for (const [r, q] of usageOf(kind, obj)) {
          const cur = used.get(r);
          if (cur !== undefined) used.set(r, addQuantities(cur, q));
        }
      }
    }
    return used;
  }

  /** The namespace's objects: from the informer of a watched kind, else listed live. */
  async #objects(ref: ResourceRef, namespace: string): Promise<readonly TypedObject[]> {
    const informer = this.#informers.get(ref);
    if (informer !== undefined) return informer.store.byIndex('namespace', namespace);
    const list = await this.#ctx.client.resource<TypedObject>(ref).list({ namespace });
    return list.items;
  }

  async #resolve(group: string, resource: string): Promise<ResourceRef | undefined> {
    const now = Date.now();
    if (this.#discovery === undefined || now - this.#discovery.at > DISCOVERY_TTL_MS) {
      const found = await discoverNamespaced(this.#ctx.client, this.#ctx.signal);
      this.#discovery = { at: now, resources: found.resources };
    }
    return this.#discovery.resources.find((r) => r.ref.group === group && r.ref.resource === resource)?.ref;
  }
}
