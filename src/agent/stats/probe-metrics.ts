/**
 * kubelet's `/metrics/probes`: `prober_probe_total`, the count of probe runs by container, pod,
 * namespace, pod UID, probe type (`Liveness`, `Readiness`, `Startup`) and result (`successful`,
 * `failed`, `unknown` when the probe could not run). The series of a pod go with the pod.
 */
import { renderFamilies, type Sample } from './prometheus.js';

/** A probe's identity and its run's result. */
export interface ProbeRun {
  readonly type: 'liveness' | 'readiness' | 'startup';
  readonly namespace: string;
  readonly pod: string;
  readonly podUID: string;
  readonly container: string;
  /** true success, false failure, undefined could not run. */
  readonly ok: boolean | undefined;
}

const TYPE_NAME = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' } as const;

/** The probe counters of one agent. */
export class ProbeMetrics {
  /** pod UID → series key → sample labels and count. */
  readonly #byPod = new Map<string, Map<string, { labels: Record<string, string>; count: number }>>();

  /** Counts one probe run. */
  observe(run: ProbeRun): void {
    const labels = {
      container: run.container,
      namespace: run.namespace,
      pod: run.pod,
      pod_uid: run.podUID,
      probe_type: TYPE_NAME[run.type],
      result: run.ok === true ? 'successful' : run.ok === false ? 'failed' : 'unknown',
    };
    const key = `${labels.container}\0${labels.probe_type}\0${labels.result}`;
    let series = this.#byPod.get(run.podUID);
    if (!series)
      this.#byPod.set(
        run.podUID,
        (series = new Map<string, { labels: Record<string, string>; count: number }>()),
      );
    const entry = series.get(key);
    if (entry) entry.count++;
    else series.set(key, { labels, count: 1 });
  }

  /** Drops the series of pods not in `uids` (pods that went away). */
  retain(uids: ReadonlySet<string>): void {
    for (const uid of this.#byPod.keys()) if (!uids.has(uid)) this.#byPod.delete(uid);
  }

  /** The text of `/metrics/probes`. */
  text(): string {
    const samples: Sample[] = [];
    for (const series of this.#byPod.values())
      for (const { labels, count } of series.values()) samples.push({ labels, value: count });
    return renderFamilies([
      {
        name: 'prober_probe_total',
        help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
        type: 'counter',
        stability: 'ALPHA',
        samples,
      },
    ]);
  }
}
