/**
 * The pod side of the simulated agent, kubelet's pod workers in miniature: one shared pod
 * informer (every bound pod; those of other nodes are ignored), handlers that only enqueue
 * `namespace/name`, and workers that read the pod's current state and take the one step a
 * kubelet would take next (level-triggered, safe to repeat):
 *
 * - bound to an active simulated node, not started → Running (IPs, ready containers);
 * - running, with an ephemeral container (kubectl debug) not yet reported → it runs;
 * - running, with a container resized in place (pods/resize) → its status reports the new
 *   resources;
 * - running with `complete-after` due → the containers exit: restarted, or Succeeded/Failed;
 * - deletion requested → the containers stop (`stop-after`, at most the grace period; killed
 *   with 137 past it) and the pod turns terminal; a terminal or never-started pod being deleted
 *   is deleted with grace period 0 and its UID as precondition, as kubelet's status manager does.
 *
 * Status goes out as a strategic merge patch of `pods/status` carrying the pod's UID (kubelet's
 * PatchPodStatus). The work queue dedups a pod while it waits, and every write waits for the
 * client's QPS; deadlines (completion, stop) go into the agent's one timer queue.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { Client, ResourceClient, SharedInformer } from '../../client/index.js';
import { isConflict, isNotFound, objectKey, PODS, runWorkers, WorkQueue } from '../../client/index.js';
import { podBehaviour, type PodBehaviour } from './annotations.js';
import { NodeEventRecorders } from './events.js';
import type { NodeFleet } from './fleet.js';
import {
  containersStartedAt,
  ephemeralStartedStatus,
  isTerminal,
  resizedStatus,
  restartedStatus,
  restarts,
  startedStatus,
  stoppedStatus,
} from './pod-status.js';
import type { SimNode } from './sim-node.js';
import type { TimerQueue } from './timer-queue.js';

/** Timer keys of the pod side: `P/<namespace>/<name>`. */
export const POD_TIMER = 'P/';

const NODE_INDEX = 'spec.nodeName';
const NO_IP_RETRY_MS = 10_000;

/** The pods of every simulated node of one agent. */
export class PodWorkers {
  readonly #informer: SharedInformer<Pod>;
  readonly #api: ResourceClient<Pod>;
  readonly #fleet: NodeFleet;
  readonly #timers: TimerQueue<string>;
  readonly #queue = new WorkQueue<string>({ name: 'simulated-pods' });
  readonly #events: NodeEventRecorders;
  /** The pod as our last write returned it, until the informer catches up (by UID). */
  readonly #written = new Map<string, Pod>();
  /** When we started each pod's containers, to the millisecond (status has seconds), by UID. */
  readonly #startedMs = new Map<string, number>();
  /** Pods we deleted with grace period 0 (by UID), until they are gone. */
  readonly #finalized = new Set<string>();
  /** Pods already warned about bad annotations (by UID). */
  readonly #warned = new Set<string>();
  readonly #log: (line: string) => void;

  constructor(
    client: Client,
    informer: SharedInformer<Pod>,
    fleet: NodeFleet,
    timers: TimerQueue<string>,
    log: (line: string) => void,
  ) {
    this.#events = new NodeEventRecorders(client, log);
    this.#informer = informer;
    this.#api = client.resource<Pod>(PODS);
    this.#fleet = fleet;
    this.#timers = timers;
    this.#log = log;
    informer.store.addIndex(NODE_INDEX, (pod) => [pod.spec?.nodeName ?? '']);
    informer.addHandler({
      add: (pod) => this.#enqueue(pod),
      update: (_old, pod) => this.#enqueue(pod),
      delete: (pod) => this.#forget(pod),
    });
  }

  /** Runs `workers` workers until {@link stop}. */
  run(workers: number): Promise<void> {
    return runWorkers(this.#queue, workers, (key) => this.#sync(key));
  }

  /** Stops taking work (in-flight syncs finish) and flushes events. */
  async stop(): Promise<void> {
    this.#queue.shutDown();
    await this.#events.close();
  }

  /**
   * Queues every pod of `node` (it just became active). The addresses its running pods already
   * report are claimed first, so that a restarted agent never hands one out again.
   */
  enqueueNode(node: SimNode): void {
    const pods = this.#informer.store.byIndex(NODE_INDEX, node.name);
    for (const pod of pods) if (!isTerminal(pod) && pod.spec?.hostNetwork !== true) node.claimIps(pod);
    for (const pod of pods) this.#queue.add(objectKey(pod));
  }

  /** A pod deadline fired. */
  fire(key: string): void {
    this.#queue.add(key.slice(POD_TIMER.length));
  }

  /** Pods of simulated nodes the informer holds, by phase (for progress lines and tests). */
  countByPhase(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const node of this.#fleet.all()) {
      for (const pod of this.#informer.store.byIndex(NODE_INDEX, node.name)) {
        const phase = pod.status?.phase ?? 'Pending';
        out[phase] = (out[phase] ?? 0) + 1;
      }
    }
    return out;
  }

  #enqueue(pod: Pod): void {
    if (this.#fleet.get(pod.spec?.nodeName ?? '') === undefined) return;
    this.#queue.add(objectKey(pod));
  }

  #forget(pod: Pod): void {
    const node = this.#fleet.get(pod.spec?.nodeName ?? '');
    if (node === undefined) return;
    const uid = pod.metadata.uid ?? '';
    node.releaseIps(uid);
    this.#written.delete(uid);
    this.#startedMs.delete(uid);
    this.#finalized.delete(uid);
    this.#warned.delete(uid);
    this.#timers.cancel(POD_TIMER + objectKey(pod));
  }

  /** The newer of the informer's pod and the one our last write returned. */
  #freshest(pod: Pod): Pod {
    const uid = pod.metadata.uid ?? '';
    const written = this.#written.get(uid);
    if (written === undefined) return pod;
    const a = revision(pod);
    const b = revision(written);
    if (a === undefined || b === undefined || a >= b) {
      this.#written.delete(uid);
      return pod;
    }
    return written;
  }

  async #sync(key: string): Promise<void> {
    const seen = this.#informer.store.get(key);
    if (seen === undefined) return;
    const node = this.#fleet.get(seen.spec?.nodeName ?? '');
    if (node === undefined || !node.active) return;
    const pod = this.#freshest(seen);
    const uid = pod.metadata.uid ?? '';
    const behaviour = podBehaviour(pod.metadata.annotations);
    const now = Date.now();
    if (pod.metadata.deletionTimestamp !== undefined)
      return this.#syncDeleting(key, pod, node, behaviour, now);
    if (isTerminal(pod)) {
      node.releaseIps(uid);
      this.#startedMs.delete(uid);
      return;
    }
    const startedAt = this.#startedMs.get(uid) ?? containersStartedAt(pod);
    if (pod.status?.phase !== 'Running' || startedAt === undefined) {
      if (behaviour.problems.length > 0 && !this.#warned.has(uid)) {
        this.#warned.add(uid);
        this.#event(node, pod, 'Warning', 'FailedSimulation', `ignored: ${behaviour.problems.join('; ')}`);
      }
      const ips = pod.spec?.hostNetwork === true ? [node.hostIP] : node.allocateIps(uid);
      if (ips === undefined) {
        this.#event(
          node,
          pod,
          'Warning',
          'FailedCreatePodSandBox',
          `Failed to create pod sandbox: no IP addresses available in range set: ${node.podCidrs.join(',')}`,
        );
        this.#timers.after(POD_TIMER + key, NO_IP_RETRY_MS);
        return;
      }
      await this.#writeStatus(pod, startedStatus(pod, { hostIP: node.hostIP, podIPs: ips }, now));
      this.#startedMs.set(uid, now);
      if (behaviour.completeAfterMs !== undefined)
        this.#timers.after(POD_TIMER + key, behaviour.completeAfterMs);
      return;
    }
    node.claimIps(pod);
    // A debugging container added to the running pod starts at once; the write's watch event
    // brings the pod back here for its deadlines.
    const debugged = ephemeralStartedStatus(pod, now);
    if (debugged !== undefined) return this.#writeStatus(pod, debugged);
    // An in-place resize (pods/resize) is applied at once.
    const resized = resizedStatus(pod);
    if (resized !== undefined) return this.#writeStatus(pod, resized);
    if (behaviour.completeAfterMs === undefined) return;
    const due = startedAt + behaviour.completeAfterMs;
    if (now < due) {
      this.#timers.at(POD_TIMER + key, due);
      return;
    }
    if (restarts(pod, behaviour.exitCode)) {
      await this.#writeStatus(pod, restartedStatus(pod, behaviour.exitCode, now));
      this.#startedMs.set(uid, now);
      this.#timers.after(POD_TIMER + key, behaviour.completeAfterMs);
    } else {
      await this.#writeStatus(pod, stoppedStatus(pod, behaviour.exitCode, now));
      node.releaseIps(uid);
      this.#startedMs.delete(uid);
    }
  }

  async #syncDeleting(
    key: string,
    pod: Pod,
    node: SimNode,
    behaviour: PodBehaviour,
    now: number,
  ): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const running = (pod.status?.containerStatuses ?? []).some((s) => s.state?.running !== undefined);
    if (isTerminal(pod) || !running) {
      node.releaseIps(uid);
      // Held by finalizers after our delete: asking again would change nothing.
      if (this.#finalized.has(uid) && pod.metadata.deletionGracePeriodSeconds === 0) return;
      this.#finalized.add(uid);
      try {
        await this.#api.delete(pod.metadata.name ?? '', {
          namespace: pod.metadata.namespace ?? '',
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
      } catch (err) {
        // Gone already, or a new pod of the same name: nothing of ours is left to delete.
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      return;
    }
    const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000;
    const requestedAt = Date.parse(pod.metadata.deletionTimestamp ?? '') - graceMs;
    const stopAt = requestedAt + Math.min(behaviour.stopAfterMs, graceMs);
    if (now < stopAt) {
      this.#timers.at(POD_TIMER + key, stopAt);
      return;
    }
    // Stopped on SIGTERM within the grace period (exit 0), or killed at its end (137).
    const exitCode = behaviour.stopAfterMs < graceMs || graceMs === 0 ? 0 : 137;
    await this.#writeStatus(pod, stoppedStatus(pod, exitCode, now));
  }

  async #writeStatus(pod: Pod, status: Pod['status']): Promise<void> {
    try {
      const written = await this.#api.patch(
        pod.metadata.name ?? '',
        { metadata: { uid: pod.metadata.uid }, status },
        { type: 'strategic', subresource: 'status', namespace: pod.metadata.namespace ?? '' },
      );
      this.#written.set(written.metadata.uid ?? '', written);
    } catch (err) {
      // The pod is gone (or was replaced): its delete event cleans up.
      if (isNotFound(err)) return;
      throw err;
    }
  }

  #event(node: SimNode, pod: Pod, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#log(`simulated node ${node.name}: pod ${objectKey(pod)}: ${reason}: ${note}`);
    this.#events.emit(node.name, pod, type, reason, note);
  }
}

function revision(pod: Pod): bigint | undefined {
  const rv = pod.metadata.resourceVersion;
  return rv !== undefined && /^\d+$/.test(rv) ? BigInt(rv) : undefined;
}
