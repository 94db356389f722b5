/**
 * kubelet's probe manager: one {@link ProbeWorker} per probe per container of each pod, made and
 * fed after every sync of the pod ({@link ProbeManager.sync}), stopped when the container's probe
 * or the pod goes. It answers the pod workers' questions ({@link ContainerHealth}): has a
 * container started, is it ready, must it be killed (liveness or startup failure). A change of
 * any result calls `changed(uid)`, so the pod syncs and its status goes out at once.
 *
 * Probes cover the pod's app containers and its sidecars (regular init containers run to
 * completion and have none).
 */
import type { Container, Pod } from '../../api/types/core-v1.js';
import type { CriClient } from '../cri/client.js';
import type { EventSink } from '../pod/events.js';
import { sidecarsOf } from '../pod/sidecar.js';
import type { PodRuntimeState } from '../runtime/runtime.js';
import type { ProbeRun } from '../stats/probe-metrics.js';
import { runProbe, type ProbeType } from './prober.js';
import { ProbeWorker, type ProbeResult } from './worker.js';

/** Why a running container must be killed, and kube's words for it. */
export interface KillVerdict {
  readonly reason: 'liveness' | 'startup';
  /** `Container c failed liveness probe` (the caller adds ", will be restarted"). */
  readonly message: string;
}

/** The probe results the pod workers read (status and kill decisions). */
export interface ContainerHealth {
  /** A running container has started: it has no startup probe or it succeeded. */
  started(uid: string, name: string, containerId: string): boolean;
  /** A running, started container is ready: no readiness probe, or it succeeded. */
  ready(uid: string, name: string, containerId: string): boolean;
  /** The running container failed its liveness or startup probe. */
  mustKill(uid: string, name: string, containerId: string): KillVerdict | undefined;
}

const TYPES: readonly ProbeType[] = ['startup', 'readiness', 'liveness'];

function probeOf(c: Container, type: ProbeType): boolean {
  return !!(type === 'liveness' ? c.livenessProbe : type === 'readiness' ? c.readinessProbe : c.startupProbe);
}

/** The probe manager of one agent. */
export class ProbeManager implements ContainerHealth {
  readonly #cri: CriClient;
  readonly #events: EventSink;
  readonly #changed: (uid: string) => void;
  /** uid → `${container}/${type}` → worker. */
  readonly #pods = new Map<string, Map<string, ProbeWorker>>();

  readonly #observe: ((run: ProbeRun) => void) | undefined;

  /** `observe` sees every probe run and its result (the agent's `/metrics/probes`). */
  constructor(
    cri: CriClient,
    events: EventSink,
    changed: (uid: string) => void,
    observe?: (run: ProbeRun) => void,
  ) {
    this.#cri = cri;
    this.#events = events;
    this.#changed = changed;
    this.#observe = observe;
  }

  #worker(uid: string, name: string, type: ProbeType): ProbeWorker | undefined {
    return this.#pods.get(uid)?.get(`${name}/${type}`);
  }

  #result(uid: string, name: string, type: ProbeType, id: string): ProbeResult | undefined | 'none' {
    const w = this.#worker(uid, name, type);
    return w ? w.resultFor(id) : 'none';
  }

  started(uid: string, name: string, containerId: string): boolean {
    const r = this.#result(uid, name, 'startup', containerId);
    return r === 'none' || r === 'success';
  }

  ready(uid: string, name: string, containerId: string): boolean {
    if (!this.started(uid, name, containerId)) return false;
    const r = this.#result(uid, name, 'readiness', containerId);
    return r === 'none' || r === 'success';
  }

  /** The container's startup probe succeeded (false without one or before its first result). */
  startupSucceeded(uid: string, name: string, containerId: string): boolean {
    return this.#worker(uid, name, 'startup')?.resultFor(containerId) === 'success';
  }

  mustKill(uid: string, name: string, containerId: string): KillVerdict | undefined {
    if (this.#result(uid, name, 'liveness', containerId) === 'failure')
      return { reason: 'liveness', message: `Container ${name} failed liveness probe` };
    if (this.#result(uid, name, 'startup', containerId) === 'failure')
      return { reason: 'startup', message: `Container ${name} failed startup probe` };
    return undefined;
  }

  /**
   * After a sync: makes, feeds or stops the pod's workers. `podIP` is the pod's (for httpGet,
   * tcpSocket and grpc); `phase` a terminal one stops them all; a pod being deleted keeps only
   * its readiness probes.
   */
  sync(pod: Pod, state: PodRuntimeState | undefined, podIP: string, phase: string | undefined): void {
    const uid = pod.metadata.uid ?? '';
    if (phase === 'Succeeded' || phase === 'Failed') {
      this.remove(uid);
      return;
    }
    let workers = this.#pods.get(uid);
    const wanted = new Set<string>();
    for (const c of [...sidecarsOf(pod), ...(pod.spec?.containers ?? [])]) {
      const name = c.name ?? '';
      for (const type of TYPES) {
        if (!probeOf(c, type)) continue;
        const key = `${name}/${type}`;
        wanted.add(key);
        if (!workers) {
          workers = new Map();
          this.#pods.set(uid, workers);
        }
        let w = workers.get(key);
        if (!w) {
          w = new ProbeWorker(type, pod, c, {
            run: async (x) => {
              const ok = await runProbe(this.#cri, this.#events, x.type, x.spec, {
                pod: x.pod,
                container: x.container,
                containerId: x.target?.id ?? '',
                podIP: x.podIP,
              });
              this.#observe?.({
                type: x.type,
                namespace: x.pod.metadata.namespace ?? '',
                pod: x.pod.metadata.name ?? '',
                podUID: uid,
                container: name,
                ok,
              });
              return ok;
            },
            started: (x) => this.started(uid, name, x.target?.id ?? ''),
            changed: (x) => this.#onChange(uid, name, x),
          });
          workers.set(key, w);
        }
        w.pod = pod;
        w.container = c;
        w.podIP = podIP;
        const latest = state?.containers.find((x) => x.name === name);
        if (pod.metadata.deletionTimestamp && type !== 'readiness') {
          w.force('success');
          continue;
        }
        w.observe(
          latest && {
            id: latest.id,
            running: latest.state === 'CONTAINER_RUNNING',
            startedAt: latest.startedAt || latest.createdAt,
          },
        );
      }
    }
    for (const [key, w] of workers ?? []) {
      if (!wanted.has(key)) {
        w.stop();
        workers?.delete(key);
      }
    }
    if (workers?.size === 0) this.#pods.delete(uid);
  }

  #onChange(uid: string, name: string, w: ProbeWorker): void {
    // A container that just started gets its readiness (and liveness) probed at once.
    if (w.type === 'startup' && w.target && w.resultFor(w.target.id) === 'success') {
      this.#worker(uid, name, 'readiness')?.trigger();
      this.#worker(uid, name, 'liveness')?.trigger();
    }
    this.#changed(uid);
  }

  /** Stops every worker of a pod. */
  remove(uid: string): void {
    for (const w of this.#pods.get(uid)?.values() ?? []) w.stop();
    this.#pods.delete(uid);
  }

  /** Stops every worker. */
  stop(): void {
    for (const uid of [...this.#pods.keys()]) this.remove(uid);
  }
}
