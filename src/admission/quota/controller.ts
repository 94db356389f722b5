/**
 * The small quota controller (kube's resource quota controller, in-process): a quota whose
 * `status.hard` differs from `spec.hard` (new or edited) is counted from storage and its status
 * written; so is every quota of a namespace where something was deleted (replenishment), and
 * every quota each full resync (kube's `--resource-quota-sync-period`, 5 minutes). Counts run
 * in the namespace's admission queue, so they never interleave with a charge.
 */
import { isJsonObject, jsonEqual, type KubeObject } from '../../api/object.js';
import { KINDS, type AdmissionObjects } from '../objects.js';
import { resourcesJson, resourcesOf } from '../quantities.js';
import type { ResourceQuotaAdmission } from '../resource-quota.js';
import { recalculate } from './recalculate.js';

/** A running controller. */
export interface QuotaControllerHandle {
  stop(): Promise<void>;
}

/** Timings (tests shorten them). */
export interface QuotaControllerOptions {
  readonly pollMs?: number;
  readonly resyncMs?: number;
  readonly onError?: (err: unknown) => void;
}

function needsSync(q: KubeObject): boolean {
  const spec = isJsonObject(q['spec']) ? q['spec'] : {};
  const status = isJsonObject(q['status']) ? q['status'] : {};
  if (!isJsonObject(status['used'])) return true;
  return !jsonEqual(resourcesJson(resourcesOf(spec['hard'])), resourcesJson(resourcesOf(status['hard'])));
}

/** Starts the controller over `objects`, sharing `plugin`'s namespace queue. */
export function startQuotaController(
  objects: AdmissionObjects,
  plugin: ResourceQuotaAdmission,
  options: QuotaControllerOptions = {},
): QuotaControllerHandle {
  const pollMs = options.pollMs ?? 1000;
  const resyncMs = options.resyncMs ?? 5 * 60_000;
  let lastResync = Date.now();
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const sync = async (quota: KubeObject): Promise<void> => {
    const ns = quota.metadata.namespace ?? '';
    await plugin.queue.run(ns, async () => {
      const fresh = await objects.get(KINDS.resourceQuota, ns, quota.metadata.name ?? '');
      if (fresh === undefined) return;
      const spec = isJsonObject(fresh['spec']) ? fresh['spec'] : {};
      const used = await recalculate(objects, fresh);
      const status = isJsonObject(fresh['status']) ? fresh['status'] : {};
      const next = { ...status, hard: resourcesJson(resourcesOf(spec['hard'])), used: resourcesJson(used) };
      if (jsonEqual(next, status)) return;
      await objects.replace(KINDS.resourceQuota, { ...fresh, status: next });
    });
  };

  const tick = async (): Promise<void> => {
    const full = Date.now() - lastResync >= resyncMs;
    if (full) lastResync = Date.now();
    const dirty = new Set(plugin.dirty);
    plugin.dirty.clear();
    const quotas = await objects.list(KINDS.resourceQuota, undefined);
    for (const q of quotas) {
      if (stopped) return;
      if (full || dirty.has(q.metadata.namespace ?? '') || needsSync(q)) await sync(q);
    }
  };

  const timer = setInterval(() => {
    running = running
      .then(() => (stopped ? undefined : tick()))
      .catch((err: unknown) => options.onError?.(err));
  }, pollMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
