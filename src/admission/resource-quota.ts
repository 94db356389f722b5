/**
 * The ResourceQuota admission plugin (validating, last in the chain as in kube): a create or an
 * update that adds usage in a namespace with quotas is checked against each matching quota's
 * hard limits and charged to its `status.used` before the object is stored; beyond a limit the
 * request gets kube's 403 (`exceeded quota: <name>, requested: ..., used: ..., limited: ...`).
 *
 * No over-admission under concurrency: the checks of one namespace run one at a time, read the
 * quotas from storage, and write each quota's status with compare-and-swap (a conflict re-reads
 * and checks again), as kube's quota evaluator does. A quota without `status.used` yet is
 * counted from storage on the spot. {@link QuotaController} keeps the status right afterwards
 * (new or changed quotas, deletes).
 */
import { admissionForbidden } from './forbidden.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import { compareQuantities, quantitySign } from '../validation/quantity.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import {
  addQuantities,
  prettyPrint,
  resourcesJson,
  resourcesOf,
  subQuantities,
  ZERO,
  type Resources,
} from './quantities.js';
import { hardOf, kindOfResource, recalculate } from './quota/recalculate.js';
import { podConstraints, quotaSelects, usageOf, type UsageKind } from './quota/usage.js';

/** How long a storage lookup that found no quota in a namespace is trusted (kube: 30 s). */
const LIVE_LOOKUP_TTL_MS = 30_000;
/** At most this many namespaces' live lookups are remembered (kube's LRU holds 100). */
const LIVE_LOOKUP_CAPACITY = 100;

/** How often a check retries after losing a compare-and-swap on a quota. */
const MAX_ATTEMPTS = 10;

/** `usage` without zero entries. */
function nonZero(usage: Resources): Resources {
  return new Map([...usage].filter(([, q]) => quantitySign(q) !== 0));
}

/** Serializes async work per key (one namespace's quota checks). */
class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(work, work);
    const tail = next.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }
}

/** The plugin and the per-namespace serialization its controller shares. */
export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  readonly #objects: AdmissionObjects;
  readonly queue = new KeyedQueue();
  readonly #liveLookups = new Map<string, { expiry: number; any: boolean }>();

  constructor(objects: AdmissionObjects) {
    this.#objects = objects;
  }

  handles(a: AdmissionAttributes): boolean {
    // A pod's in-place resize changes its usage too (kube's pod evaluator handles it).
    const resize = a.subresource === 'resize' && a.type.group === '' && a.type.kind === 'Pod';
    return a.namespace !== '' && (a.subresource === undefined || resize);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    // Deletes free usage: the resourcequota controller recounts on the object's watch event.
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || a.object === undefined) return;
    const kind: UsageKind = a.type;
    // Fast path: most namespaces have no quota.
    if (!(await this.#hasQuotas(a.namespace))) return;
    const usage = usageOf(kind, a.object);
    let delta = usage;
    if (a.operation === 'UPDATE' && a.oldObject !== undefined) {
      const before = usageOf(kind, a.oldObject);
      delta = new Map();
      for (const [r, q] of usage) {
        const d = subQuantities(q, before.get(r) ?? ZERO);
        if (quantitySign(d) > 0) delta.set(r, d);
      }
    }
    delta = nonZero(delta);
    const negative = [...usage].filter(([, q]) => quantitySign(q) < 0).map(([r]) => r);
    if (negative.length > 0) {
      throw admissionForbidden(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
    }
    await this.queue.run(a.namespace, () => this.#charge(a, kind, delta));
  }

  /**
   * True when the namespace has quotas: from the cache, or (the cache shows none) from storage
   * at most every {@link LIVE_LOOKUP_TTL_MS}, as kube's quota accessor does with its live lookups.
   */
  async #hasQuotas(namespace: string): Promise<boolean> {
    if ((await this.#objects.list(KINDS.resourceQuota, namespace)).length > 0) return true;
    const now = Date.now();
    const known = this.#liveLookups.get(namespace);
    if (known !== undefined && known.expiry > now) return known.any;
    const any = (await this.#objects.listLive(KINDS.resourceQuota, namespace)).length > 0;
    if (this.#liveLookups.size >= LIVE_LOOKUP_CAPACITY) this.#liveLookups.clear();
    this.#liveLookups.set(namespace, { expiry: now + LIVE_LOOKUP_TTL_MS, any });
    return any;
  }

  async #charge(a: AdmissionAttributes, kind: UsageKind, delta: Resources): Promise<void> {
    const obj = a.object as KubeObject;
    // Quotas already charged by an earlier attempt (a later quota lost its compare-and-swap).
    const charged = new Set<string>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const quotas = (await this.#objects.listLive(KINDS.resourceQuota, a.namespace)).sort((x, y) =>
        (x.metadata.name ?? '').localeCompare(y.metadata.name ?? ''),
      );
      const updates: KubeObject[] = [];
      for (const quota of quotas) {
        if (charged.has(quota.metadata.name ?? '') || !quotaSelects(quota, kind, obj)) continue;
        const hard = hardOf(quota);
        // kube's `MatchingResources`: the hard resources this kind's evaluator counts.
        const restricted = [...hard.keys()].filter((r) => {
          const k = kindOfResource(this.#objects, r);
          return k !== undefined && k.group === kind.group && k.kind === kind.kind;
        });
        if (restricted.length === 0) continue;
        if (kind.group === '' && kind.kind === 'Pod') {
          const missing = podConstraints(obj, restricted);
          if (missing !== undefined)
            throw admissionForbidden(a, `failed quota: ${quota.metadata.name ?? ''}: ${missing}`);
        }
        const requested: Resources = new Map([...delta].filter(([r]) => hard.has(r)));
        if (requested.size === 0) continue;
        const status = isJsonObject(quota['status']) ? quota['status'] : {};
        const known =
          isJsonObject(status['used']) &&
          restricted.every((r) => (status['used'] as JsonObject)[r] !== undefined);
        const used = known ? resourcesOf(status['used']) : await recalculate(this.#objects, quota);
        const next: Resources = new Map(used);
        const exceeded: string[] = [];
        for (const [r, q] of requested) {
          const total = addQuantities(used.get(r) ?? ZERO, q);
          next.set(r, total);
          if (compareQuantities(total, hard.get(r) ?? ZERO) > 0) exceeded.push(r);
        }
        if (exceeded.length > 0) {
          // An earlier attempt may have charged other quotas for this refused object: the
          // resourcequota controller recounts them on their update events.
          const mask = (res: Resources): Resources => new Map([...res].filter(([r]) => exceeded.includes(r)));
          const usedShown: Resources = new Map(exceeded.map((r) => [r, used.get(r) ?? ZERO]));
          throw admissionForbidden(
            a,
            `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${prettyPrint(mask(requested))}, used: ${prettyPrint(usedShown)}, limited: ${prettyPrint(mask(hard))}`,
          );
        }
        updates.push({
          ...quota,
          status: { ...status, hard: resourcesJson(hard), used: resourcesJson(next) },
        });
      }
      if (a.dryRun || updates.length === 0) return;
      let lost = false;
      for (const u of updates) {
        if ((await this.#objects.replace(KINDS.resourceQuota, u)) === undefined) {
          lost = true;
          break;
        }
        charged.add(u.metadata.name ?? '');
      }
      if (!lost) return;
    }
    throw admissionForbidden(a, 'status unknown for quota: too many concurrent updates, please retry');
  }
}

/** The ResourceQuota plugin. */
export function resourceQuota(objects: AdmissionObjects): ResourceQuotaAdmission {
  return new ResourceQuotaAdmission(objects);
}
