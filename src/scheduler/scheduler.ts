/**
 * The scheduler: cluster events in (nodes, pods and the kinds plugins read), one pod at a time
 * out of the queue through its profile's framework, binding in the background. Failures are
 * reported as kube does (a FailedScheduling event, the PodScheduled condition) and the pod waits
 * for an event that may help. A thrown error in a cycle is caught, logged and the pod backs off.
 */
import type { Node, Pod } from '../api/types/core-v1.js';
import { Algorithm } from './algorithm.js';
import { isTerminal, podKey, SchedulerCache } from './cache.js';
import { DEFAULT_SCHEDULER_NAME, type SchedulerConfig } from './config.js';
import { fitErrorMessage } from './fit-error.js';
import { buildFramework } from './framework/build.js';
import type { Framework } from './framework/runtime.js';
import { statusMessage, unresolvable } from './framework/status.js';
import {
  CycleState,
  type ClusterEvent,
  type ClusterLister,
  type Handle,
  type Plugin,
  type PluginFactory,
  type SchedulerApi,
} from './framework/types.js';
import { SchedulerMetrics } from './metrics.js';
import { PodInfo } from './pod-info.js';
import { inTreeRegistry } from './plugins/registry.js';
import { SchedulingQueue, type QueuedPodInfo } from './queue.js';

/** The nominated pods of a node with none (shared, never changed). */
const NO_PODS: readonly PodInfo[] = Object.freeze([]);
/**
 * How long the loop schedules pods back to back before it lets the event loop turn. kube's
 * scheduleOne loop never yields (informers run on other goroutines); here they share one thread.
 */
const SLICE_MS = 20;

/** What the scheduler needs from its surroundings. */
export interface SchedulerDeps {
  readonly config: SchedulerConfig;
  readonly api: SchedulerApi;
  /** Listers of the other kinds; `nominatedPods` is provided by the scheduler itself. */
  readonly lister: Omit<ClusterLister, 'nominatedPods'>;
  /** The pod as the informer has it now (undefined: deleted). */
  readonly currentPod: (key: string) => Pod | undefined;
  readonly registry?: ReadonlyMap<string, PluginFactory>;
  readonly log?: (message: string) => void;
  /** Per-pod tracing of events, attempts and bindings (diagnostics; off when absent). */
  readonly trace?: (message: string) => void;
  readonly now?: () => number;
}

function schedulerNameOf(pod: Pod): string {
  const n = pod.spec?.schedulerName;
  return n === undefined || n === '' ? DEFAULT_SCHEDULER_NAME : n;
}

function assigned(pod: Pod): boolean {
  return (pod.spec?.nodeName ?? '') !== '';
}

/** What of a pending pod's update matters for scheduling (kube ignores status-only changes). */
function schedulingRelevant(pod: Pod): string {
  return JSON.stringify([pod.metadata.labels, pod.metadata.annotations, pod.spec]);
}

/** The scheduler. Construct, feed events, `run()`. */
export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly metrics: SchedulerMetrics;
  readonly frameworks = new Map<string, Framework>();
  readonly #algorithm: Algorithm;
  readonly #nominated = new Map<string, Map<string, PodInfo>>();
  readonly #nominatedOf = new Map<string, string>();
  readonly #binding = new Set<Promise<void>>();
  readonly #log: (m: string) => void;
  readonly #trace: ((m: string) => void) | undefined;
  readonly #now: () => number;

  /** @throws SchedulerConfigError for an unknown plugin or an invalid profile. */
  constructor(readonly deps: SchedulerDeps) {
    this.#log = deps.log ?? ((m) => console.error(m));
    this.#trace = deps.trace;
    this.#now = deps.now ?? Date.now;
    const b = deps.lister;
    // Delegates explicitly: `b` may be a class instance, whose methods a spread would drop.
    const lister: ClusterLister = {
      pvc: (ns, n) => b.pvc(ns, n),
      pv: (n) => b.pv(n),
      pvs: () => b.pvs(),
      storageClass: (n) => b.storageClass(n),
      csiNode: (n) => b.csiNode(n),
      namespace: (n) => b.namespace(n),
      namespaceLabels: (n) => b.namespaceLabels(n),
      services: (ns) => b.services(ns),
      replicationControllers: (ns) => b.replicationControllers(ns),
      replicaSets: (ns) => b.replicaSets(ns),
      statefulSets: (ns) => b.statefulSets(ns),
      pdbs: (ns) => b.pdbs(ns),
      nominatedPods: (n) => this.#nominatedPods(n),
    };
    const registry = deps.registry ?? inTreeRegistry();
    const plugins = new Map<string, Plugin>();
    for (const profile of deps.config.profiles) {
      const built: { fw?: Framework } = {};
      const handle: Handle = {
        lister,
        api: deps.api,
        schedulerName: profile.schedulerName,
        snapshot: () => this.cache,
        dryRun: (pod, node, snap) => {
          const fw = built.fw;
          if (fw === undefined) return unresolvable('framework not ready');
          const state = new CycleState();
          const pf = fw.runPreFilters(state, pod, snap);
          if (pf.status !== undefined) return pf.status;
          if (pf.nodeNames !== undefined && !pf.nodeNames.has(node.name))
            return unresolvable('node not in PreFilter result');
          return fw.runFilters(state, pod, node);
        },
      };
      const fw = buildFramework(profile, registry, handle, deps.config.percentageOfNodesToScore);
      built.fw = fw;
      this.frameworks.set(profile.schedulerName, fw);
      for (const p of fw.plugins.all) if (!plugins.has(p.name)) plugins.set(p.name, p);
    }
    const first = [...this.frameworks.values()][0] as Framework;
    this.queue = new SchedulingQueue({
      less: (a, b) => first.less(a, b),
      preEnqueue: (info) => this.frameworks.get(schedulerNameOf(info.pod))?.runPreEnqueue(info),
      plugins,
      initialBackoffMs: deps.config.podInitialBackoffSeconds * 1000,
      maxBackoffMs: deps.config.podMaxBackoffSeconds * 1000,
      ...(deps.now === undefined ? {} : { now: deps.now }),
    });
    this.metrics = new SchedulerMetrics(() => this.queue.counts());
    this.#algorithm = new Algorithm((n) => this.#nominatedPods(n));
  }

  /** Asked for every node a pod is filtered on: with none nominated, the one shared empty list. */
  #nominatedPods(node: string): readonly PodInfo[] {
    if (this.#nominated.size === 0) return NO_PODS;
    const m = this.#nominated.get(node);
    return m === undefined ? NO_PODS : [...m.values()];
  }

  #setNominated(pod: Pod, node: string | undefined): void {
    const k = podKey(pod);
    const prev = this.#nominatedOf.get(k);
    if (prev !== undefined) {
      const there = this.#nominated.get(prev);
      there?.delete(k);
      // Empty lists go, so that a cluster with no nomination is seen as such at once.
      if (there?.size === 0) this.#nominated.delete(prev);
      this.#nominatedOf.delete(k);
    }
    if (node === undefined || node === '') return;
    let m = this.#nominated.get(node);
    if (m === undefined) this.#nominated.set(node, (m = new Map<string, PodInfo>()));
    m.set(k, new PodInfo(pod));
    this.#nominatedOf.set(k, node);
  }

  /** True when one of this scheduler's profiles is responsible for the pod. */
  responsibleFor(pod: Pod): boolean {
    return this.frameworks.has(schedulerNameOf(pod));
  }

  // ---- events ----

  onNodeAdd(node: Node): void {
    this.cache.upsertNode(node);
    this.queue.onEvent({ resource: 'Node', action: 'Add' });
  }

  onNodeUpdate(node: Node): void {
    this.cache.upsertNode(node);
    this.queue.onEvent({ resource: 'Node', action: 'Update' });
  }

  onNodeDelete(node: Node): void {
    this.cache.removeNode(node.metadata.name ?? '');
    this.queue.onEvent({ resource: 'Node', action: 'Delete' });
  }

  onPodAdd(pod: Pod): void {
    this.#trace?.(
      `pod add ${podKey(pod)} rv=${pod.metadata.resourceVersion ?? ''} node=${pod.spec?.nodeName ?? ''}`,
    );
    if (assigned(pod)) {
      this.cache.upsertPod(pod);
      this.queue.onEvent({ resource: 'AssignedPod', action: 'Add' });
      return;
    }
    if (!this.responsibleFor(pod) || isTerminal(pod)) return;
    this.#setNominated(pod, pod.status?.nominatedNodeName);
    if (!this.queue.has(podKey(pod))) this.queue.add(pod);
  }

  onPodUpdate(old: Pod, pod: Pod): void {
    const key = podKey(pod);
    this.#trace?.(
      `pod update ${key} rv=${pod.metadata.resourceVersion ?? ''} node=${pod.spec?.nodeName ?? ''} queued=${this.queue.has(key)}`,
    );
    if (assigned(pod)) {
      this.#setNominated(pod, undefined);
      this.queue.delete(key);
      this.cache.upsertPod(pod);
      this.queue.onEvent({ resource: 'AssignedPod', action: 'Update' });
      return;
    }
    if (!this.responsibleFor(pod) || isTerminal(pod)) {
      this.queue.delete(key);
      return;
    }
    this.#setNominated(pod, pod.status?.nominatedNodeName);
    if (schedulingRelevant(old) !== schedulingRelevant(pod) || !this.queue.has(key)) {
      this.queue.update(pod);
      this.queue.onEvent({ resource: 'Pod', action: 'Update' });
    }
  }

  onPodDelete(pod: Pod): void {
    const key = podKey(pod);
    this.#trace?.(`pod delete ${key}`);
    this.#setNominated(pod, undefined);
    this.queue.delete(key);
    if (this.cache.pod(key) !== undefined) {
      this.cache.removePod(key);
      this.queue.onEvent({ resource: 'AssignedPod', action: 'Delete' });
      this.queue.onEvent({ resource: 'Pod', action: 'Delete' });
    }
  }

  /** Any other watched kind changed (PVC, PV, StorageClass, Namespace, Service, ...). */
  onEvent(e: ClusterEvent): void {
    this.queue.onEvent(e);
  }

  // ---- the loop ----

  /** Schedules until `signal` aborts; then waits for bindings in flight. */
  async run(signal: AbortSignal): Promise<void> {
    this.queue.reopen();
    const flusher = setInterval(() => this.queue.flush(), 1000);
    const stop = (): void => this.queue.close();
    signal.addEventListener('abort', stop, { once: true });
    try {
      let sliceStart = performance.now();
      for (;;) {
        const q = await this.queue.pop();
        if (q === undefined) break;
        if (signal.aborted) {
          this.queue.putBack(q);
          break;
        }
        try {
          await this.scheduleOne(q);
        } catch (err) {
          this.#log(
            `scheduler: scheduling ${q.info.key} failed: ${err instanceof Error ? err.message : String(err)}`,
          );
          this.queue.addUnschedulable(q, this.queue.cycle, true);
        }
        // Let informer events and the rest of the process in between cycles, once per time
        // slice: yielding after every pod would schedule one pod per turn of a busy event loop
        // (the server's, in-process), however long the queue.
        if (performance.now() - sliceStart >= SLICE_MS || this.queue.activeSize === 0) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
      }
    } finally {
      clearInterval(flusher);
      signal.removeEventListener('abort', stop);
      await Promise.allSettled([...this.#binding]);
    }
  }

  /** Resolves once every binding in flight has finished. */
  async settle(): Promise<void> {
    while (this.#binding.size > 0) await Promise.allSettled([...this.#binding]);
  }

  /** Pops and schedules every pod now active, waiting for their bindings (tests, benchmarks). */
  async drain(): Promise<number> {
    let n = 0;
    while (this.queue.activeSize > 0) {
      const q = await this.queue.pop();
      if (q === undefined) break;
      await this.scheduleOne(q);
      n++;
    }
    await this.settle();
    return n;
  }

  /** One scheduling cycle for one pod. */
  async scheduleOne(q: QueuedPodInfo): Promise<void> {
    const started = this.#now();
    const cycle = this.queue.cycle;
    const key = q.info.key;
    const current = this.deps.currentPod(key);
    this.#trace?.(
      `attempt ${key} cycle=${cycle} attempts=${q.attempts} current=${current === undefined ? 'none' : (current.spec?.nodeName ?? '') || 'pending'}`,
    );
    const fw = current === undefined ? undefined : this.frameworks.get(schedulerNameOf(current));
    if (
      current === undefined ||
      fw === undefined ||
      assigned(current) ||
      current.metadata.deletionTimestamp
    ) {
      this.#trace?.(`skip ${key}: gone, bound or deleting`);
      this.queue.done(key);
      return;
    }
    if (current !== q.info.pod) q.info = new PodInfo(current);
    const pod = q.info;
    const state = new CycleState();
    const decision = this.#algorithm.decide(fw, state, pod, this.cache);
    if (decision.kind === 'error') {
      await this.#failed(fw, q, cycle, started, {
        reason: 'SchedulerError',
        message: decision.message,
        isError: true,
        plugins: new Set(),
      });
      return;
    }
    if (decision.kind === 'unschedulable') {
      const d = decision.diagnosis;
      let nominated: string | undefined;
      for (const p of fw.plugins.postFilter) {
        const r = await p.postFilter?.(state, pod, d.nodeStatuses);
        if (r === undefined) continue;
        if (r.status !== undefined) d.postFilterMessage = statusMessage(r.status);
        if (r.nominatedNode !== undefined) nominated = r.nominatedNode;
        if (r.status === undefined) break;
      }
      if (nominated !== undefined && nominated !== '') this.#setNominated(pod.pod, nominated);
      await this.#failed(fw, q, cycle, started, {
        reason: 'Unschedulable',
        message: fitErrorMessage(d),
        isError: false,
        plugins: decision.plugins,
        nominated,
      });
      return;
    }
    const node = decision.node;
    this.#trace?.(`assume ${key} on ${node}`);
    this.cache.assume(pod, node);
    const rs = fw.runReserve(state, pod, node);
    if (rs !== undefined) {
      this.cache.forget(key);
      await this.#failed(fw, q, cycle, started, {
        reason: 'SchedulerError',
        message: statusMessage(rs),
        isError: true,
        plugins: new Set(rs.plugin === undefined ? [] : [rs.plugin]),
      });
      return;
    }
    const binding = this.#bind(fw, state, q, cycle, node, started).finally(() =>
      this.#binding.delete(binding),
    );
    this.#binding.add(binding);
  }

  async #bind(
    fw: Framework,
    state: CycleState,
    q: QueuedPodInfo,
    cycle: number,
    node: string,
    started: number,
  ): Promise<void> {
    const pod = q.info;
    try {
      const s = (await fw.runPreBind(state, pod, node)) ?? (await fw.runBind(state, pod, node));
      if (s !== undefined) {
        this.#trace?.(`bind ${pod.key} to ${node} failed: ${statusMessage(s)}`);
        fw.runUnreserve(state, pod, node);
        this.cache.forget(pod.key);
        this.queue.onEvent({ resource: 'AssignedPod', action: 'Delete' });
        await this.#failed(fw, q, cycle, started, {
          reason: 'SchedulerError',
          message: statusMessage(s),
          isError: true,
          plugins: new Set(),
        });
        return;
      }
    } catch (err) {
      this.#trace?.(`bind ${pod.key} to ${node} threw`);
      fw.runUnreserve(state, pod, node);
      this.cache.forget(pod.key);
      this.#log(
        `scheduler: binding ${pod.key} to ${node}: ${err instanceof Error ? err.message : String(err)}`,
      );
      this.queue.addUnschedulable(q, cycle, true);
      return;
    }
    this.#trace?.(`bound ${pod.key} to ${node}`);
    const now = this.#now();
    this.metrics.attempt('scheduled', fw.schedulerName, (now - started) / 1000);
    this.metrics.scheduled((now - q.initialAttempt) / 1000, q.attempts);
    this.#setNominated(pod.pod, undefined);
    this.queue.done(pod.key);
    this.deps.api.event(
      pod.pod,
      'Normal',
      'Scheduled',
      'Binding',
      `Successfully assigned ${pod.key} to ${node}`,
    );
  }

  async #failed(
    fw: Framework,
    q: QueuedPodInfo,
    cycle: number,
    started: number,
    f: {
      reason: string;
      message: string;
      isError: boolean;
      plugins: Set<string>;
      nominated?: string | undefined;
    },
  ): Promise<void> {
    this.metrics.attempt(
      f.isError ? 'error' : 'unschedulable',
      fw.schedulerName,
      (this.#now() - started) / 1000,
    );
    const current = this.deps.currentPod(q.info.key);
    if (current === undefined || assigned(current)) {
      this.#trace?.(`failed ${q.info.key}: gone or bound meanwhile`);
      this.queue.done(q.info.key);
      return;
    }
    q.unschedulablePlugins = f.plugins;
    this.queue.addUnschedulable(q, cycle, f.isError);
    this.#trace?.(
      `failed ${q.info.key} cycle=${cycle} ${f.reason} [${[...f.plugins].join(',')}] ${f.message}: ${JSON.stringify(this.queue.where(q.info.key))}`,
    );
    this.deps.api.event(current, 'Warning', 'FailedScheduling', 'Scheduling', f.message);
    const cond = current.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const sameCondition = cond?.status === 'False' && cond.reason === f.reason && cond.message === f.message;
    const nominatedNow = current.status?.nominatedNodeName ?? '';
    const nominatedChange = f.nominated !== undefined && f.nominated !== nominatedNow;
    if (sameCondition && !nominatedChange) return;
    try {
      await this.deps.api.patchPodScheduled(
        current,
        { status: 'False', reason: f.reason, message: f.message },
        nominatedChange ? f.nominated : undefined,
      );
    } catch (err) {
      this.#log(
        `scheduler: updating the PodScheduled condition of ${q.info.key}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
