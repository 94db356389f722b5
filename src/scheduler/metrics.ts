/**
 * The scheduler's Prometheus metrics under kube-scheduler's names, in the text exposition format:
 * scheduler_pending_pods{queue}, scheduler_schedule_attempts_total{result,profile},
 * scheduler_scheduling_attempt_duration_seconds{result,profile} and
 * scheduler_pod_scheduling_sli_duration_seconds{attempts}.
 */

const ATTEMPT_BUCKETS = [
  0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
];
const SLI_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84, 327.68,
  655.36, 1310.72, 2621.44, 5242.88,
];

class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++)
      if (v <= (this.buckets[i] as number)) (this.counts[i] as number)++;
  }
}

function labelText(labels: Readonly<Record<string, string>>): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`,
  );
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** Results of one scheduling attempt, as kube labels them. */
export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

/** The metrics of one scheduler. */
export class SchedulerMetrics {
  readonly #attempts = new Map<string, number>();
  readonly #durations = new Map<string, Histogram>();
  readonly #sli = new Map<string, Histogram>();

  constructor(
    private readonly pending: () => { active: number; backoff: number; unschedulable: number; gated: number },
  ) {}

  /** One attempt's outcome and duration (seconds). */
  attempt(result: AttemptResult, profile: string, seconds: number): void {
    const k = JSON.stringify([result, profile]);
    this.#attempts.set(k, (this.#attempts.get(k) ?? 0) + 1);
    let h = this.#durations.get(k);
    if (h === undefined) this.#durations.set(k, (h = new Histogram(ATTEMPT_BUCKETS)));
    h.observe(seconds);
  }

  /** A pod scheduled: seconds since it entered the queue, after `attempts` attempts. */
  scheduled(seconds: number, attempts: number): void {
    const k = String(Math.min(attempts, 15));
    let h = this.#sli.get(k);
    if (h === undefined) this.#sli.set(k, (h = new Histogram(SLI_BUCKETS)));
    h.observe(seconds);
  }

  /** The text exposition. */
  render(): string {
    const out: string[] = [];
    const p = this.pending();
    out.push('# HELP scheduler_pending_pods [STABLE] Number of pending pods, by the queue type.');
    out.push('# TYPE scheduler_pending_pods gauge');
    for (const [q, n] of [
      ['active', p.active],
      ['backoff', p.backoff],
      ['gated', p.gated],
      ['unschedulable', p.unschedulable],
    ] as const) {
      out.push(`scheduler_pending_pods{queue="${q}"} ${n}`);
    }
    out.push(
      '# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods, by the result.',
    );
    out.push('# TYPE scheduler_schedule_attempts_total counter');
    for (const [k, n] of this.#attempts) {
      const [result, profile] = JSON.parse(k) as [string, string];
      out.push(`scheduler_schedule_attempts_total${labelText({ profile, result })} ${n}`);
    }
    const hist = (
      name: string,
      help: string,
      m: Map<string, Histogram>,
      labels: (k: string) => Record<string, string>,
    ): void => {
      out.push(`# HELP ${name} ${help}`);
      out.push(`# TYPE ${name} histogram`);
      for (const [k, h] of m) {
        const l = labels(k);
        h.buckets.forEach((b, i) =>
          out.push(`${name}_bucket${labelText({ ...l, le: String(b) })} ${h.counts[i] ?? 0}`),
        );
        out.push(`${name}_bucket${labelText({ ...l, le: '+Inf' })} ${h.count}`);
        out.push(`${name}_sum${labelText(l)} ${h.sum}`);
        out.push(`${name}_count${labelText(l)} ${h.count}`);
      }
    };
    hist(
      'scheduler_scheduling_attempt_duration_seconds',
      '[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)',
      this.#durations,
      (k) => {
        const [result, profile] = JSON.parse(k) as [string, string];
        return { profile, result };
      },
    );
    hist(
      'scheduler_pod_scheduling_sli_duration_seconds',
      '[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.',
      this.#sli,
      (k) => ({ attempts: k }),
    );
    return `${out.join('\n')}\n`;
  }
}
