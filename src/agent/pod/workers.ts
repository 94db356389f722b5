/**
 * kubelet's pod workers: one serialized worker per pod, fed by every source. A pod's syncs never
 * overlap; updates arriving during a sync coalesce into one more sync after it. Each sync reads
 * the pod's current runtime state, acts ({@link syncPod}), reads it again and hands the generated
 * status to `onStatus`. A requeue (back-off end) is one timer per pod.
 *
 * Pods the runtime holds that no source wants (orphans: deleted while the agent was down) are
 * killed by {@link PodWorkers.cleanupOrphans}, which the agent calls only once every source has
 * synced, so a restarted agent adopts its pods instead of killing them.
 *
 * With probes (`deps.probes`), each sync's status carries their results and then feeds the
 * probe workers the pod's containers; a probe result changing wakes the pod ({@link wake}).
 */
import type { Pod, PodStatus } from '../../api/types/core-v1.js';
import type { PodRuntimeState } from '../runtime/runtime.js';
import { kubeTime, generatePodStatus } from './status.js';
import { killPod, syncPod, type PodRecord, type SyncDeps } from './sync.js';

/** Callbacks of the workers. */
export interface WorkerHooks {
  /** A pod's freshly generated status. */
  onStatus(record: PodRecord, status: PodStatus): void;
  /** A terminating pod has nothing left in the runtime. */
  onTerminated(record: PodRecord): void;
  /** The node's IPs (for hostIP and env). */
  hostIPs(): readonly string[];
}

interface Worker {
  readonly record: PodRecord;
  running: boolean;
  again: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** The pod workers of one agent. */
export class PodWorkers {
  readonly #deps: SyncDeps;
  readonly #hooks: WorkerHooks;
  readonly #workers = new Map<string, Worker>();
  readonly #inflight = new Set<Promise<void>>();
  #stopped = false;

  constructor(deps: SyncDeps, hooks: WorkerHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
  }

  /** The records of every pod the workers hold. */
  records(): PodRecord[] {
    return [...this.#workers.values()].map((w) => w.record);
  }

  record(uid: string): PodRecord | undefined {
    return this.#workers.get(uid)?.record;
  }

  /** A source's current version of a pod. A deletionTimestamp starts its termination. */
  update(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    if (!uid) return;
    let w = this.#workers.get(uid);
    if (!w) {
      w = {
        record: {
          pod,
          waiting: new Map(),
          terminating: false,
          terminated: false,
          startTime: pod.status?.startTime ?? kubeTime(Date.now()),
        },
        running: false,
        again: false,
        timer: undefined,
      };
      // A pod the agent had allocated before a restart takes up its allocation where it was.
      const saved = this.#deps.allocations?.get(uid);
      if (saved !== undefined) w.record.resize = { allocated: new Map(saved) };
      this.#workers.set(uid, w);
    }
    w.record.pod = pod;
    if (pod.metadata.deletionTimestamp) w.record.terminating = true;
    this.#kick(w);
  }

  /** A pod no source wants any more: terminate it. */
  remove(uid: string): void {
    const w = this.#workers.get(uid);
    if (!w) return;
    w.record.terminating = true;
    this.#kick(w);
  }

  /** The runtime changed something of this pod. */
  wake(uid: string): void {
    const w = this.#workers.get(uid);
    if (w) this.#kick(w);
  }

  /** Kills runtime pods no worker holds (call only when every source has synced). */
  async cleanupOrphans(pods: Map<string, PodRuntimeState>): Promise<void> {
    // Pods removed while the agent was down leave their allocations: those go too.
    this.#deps.allocations?.retain(new Set(this.#workers.keys()));
    for (const [uid, state] of pods) {
      if (this.#workers.has(uid) || this.#stopped) continue;
      const pod: Pod = { metadata: { uid, name: state.name, namespace: state.namespace } };
      try {
        await killPod(this.#deps, pod, state, 2);
      } catch (err) {
        console.error(
          `agent: removing orphaned pod ${state.namespace}/${state.name} (${uid}): ${(err as Error).message}`,
        );
      }
    }
  }

  /** Stops scheduling syncs and waits (up to `waitMs`) for those in flight. */
  async stop(waitMs = 10_000): Promise<void> {
    this.#stopped = true;
    this.#deps.probes?.stop();
    for (const w of this.#workers.values()) if (w.timer) clearTimeout(w.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inflight]),
      new Promise((r) => (timer = setTimeout(r, waitMs))),
    ]);
    clearTimeout(timer);
  }

  #kick(w: Worker): void {
    if (this.#stopped) return;
    if (w.running) {
      w.again = true;
      return;
    }
    if (w.timer) {
      clearTimeout(w.timer);
      w.timer = undefined;
    }
    w.running = true;
    const p = this.#sync(w).finally(() => {
      this.#inflight.delete(p);
      w.running = false;
      if (w.again && !w.record.terminated) {
        w.again = false;
        this.#kick(w);
      }
    });
    this.#inflight.add(p);
  }

  async #sync(w: Worker): Promise<void> {
    const uid = w.record.pod.metadata.uid ?? '';
    let requeue: number | undefined;
    try {
      const before = (await this.#deps.runtime.listPods(uid)).get(uid);
      const result = await syncPod(this.#deps, w.record, before);
      requeue = result.requeueAfterMs;
      if (w.record.terminated) {
        this.#deps.probes?.remove(uid);
        this.#workers.delete(uid);
        this.#deps.allocations?.delete(uid);
        // kubelet's final status: every container terminated, the phase terminal.
        const final = generatePodStatus(w.record, w.record.finalState, this.#hooks.hostIPs(), {
          terminal: true,
        });
        this.#hooks.onStatus(w.record, final);
        this.#hooks.onTerminated(w.record);
        return;
      }
      const after = (await this.#deps.runtime.listPods(uid)).get(uid);
      const status = generatePodStatus(w.record, after, this.#hooks.hostIPs(), {
        health: this.#deps.probes,
      });
      this.#deps.probes?.sync(w.record.pod, after, status.podIP ?? '', status.phase);
      this.#hooks.onStatus(w.record, status);
    } catch (err) {
      console.error(
        `agent: sync of pod ${w.record.pod.metadata.namespace ?? ''}/${w.record.pod.metadata.name ?? ''} failed: ${(err as Error).message}`,
      );
      requeue = 2000;
    }
    if (requeue !== undefined && !this.#stopped) {
      w.timer = setTimeout(() => {
        w.timer = undefined;
        this.#kick(w);
      }, requeue);
    }
  }
}
