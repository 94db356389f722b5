/**
 * One probe of one container (kubelet's probe worker), driven by the container it is shown:
 *
 * - A new container (a new id) resets the result to the probe type's initial value (liveness
 *   success, readiness failure, startup unknown) and schedules the first probe at its start time
 *   plus `initialDelaySeconds`, then one every `periodSeconds` (no tick wasted waiting for it).
 * - A result becomes the container's only after `successThreshold` successes or
 *   `failureThreshold` failures in a row; a probe that errored is thrown away.
 * - Liveness and readiness wait for the container to have started (its startup probe, if any,
 *   succeeded); the startup probe stops once it has.
 * - A liveness or startup failure puts the worker on hold until the next container: the
 *   container is about to be killed.
 * - A container not running holds no probe; `stop()` ends the worker.
 *
 * Every change of the result calls `changed`, which wakes the pod's worker at once.
 */
import type { Container, Pod, Probe } from '../../api/types/core-v1.js';
import type { ProbeType } from './prober.js';

/** A probe result: kube's results.Result. */
export type ProbeResult = 'success' | 'failure' | 'unknown';

/** The container a worker probes, as the last sync saw it. */
export interface ProbedContainer {
  readonly id: string;
  readonly running: boolean;
  /** Epoch ms. */
  readonly startedAt: number;
}

/** What a worker calls out to. */
export interface WorkerContext {
  /** Runs the probe once: true success, false failure, undefined errored. */
  run(w: ProbeWorker): Promise<boolean | undefined>;
  /** The container has started (its startup probe, if any, succeeded). */
  started(w: ProbeWorker): boolean;
  /** The worker's result changed. */
  changed(w: ProbeWorker): void;
}

const INITIAL: Record<ProbeType, ProbeResult> = {
  liveness: 'success',
  readiness: 'failure',
  startup: 'unknown',
};

/** A probe worker. */
export class ProbeWorker {
  readonly type: ProbeType;
  pod: Pod;
  container: Container;
  podIP = '';
  readonly #ctx: WorkerContext;
  #target: ProbedContainer | undefined;
  #result: ProbeResult;
  #last: boolean | undefined;
  #run = 0;
  #onHold = false;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #again = false;
  #stopped = false;

  constructor(type: ProbeType, pod: Pod, container: Container, ctx: WorkerContext) {
    this.type = type;
    this.pod = pod;
    this.container = container;
    this.#ctx = ctx;
    this.#result = INITIAL[type];
  }

  /** The probe's spec in the current container spec. */
  get spec(): Probe {
    const c = this.container;
    return (
      (this.type === 'liveness'
        ? c.livenessProbe
        : this.type === 'readiness'
          ? c.readinessProbe
          : c.startupProbe) ?? {}
    );
  }

  /** The container probed now (undefined before the first). */
  get target(): ProbedContainer | undefined {
    return this.#target;
  }

  /** The result for container `id` (undefined when the worker has none for it). */
  resultFor(id: string): ProbeResult | undefined {
    return this.#target?.id === id ? this.#result : undefined;
  }

  /** Shows the worker the container as the latest sync saw it. */
  observe(target: ProbedContainer | undefined): void {
    if (this.#stopped) return;
    if (!target) return;
    if (target.id !== this.#target?.id) {
      this.#target = target;
      this.#result = INITIAL[this.type];
      this.#last = undefined;
      this.#run = 0;
      this.#onHold = false;
      this.#schedule(target.startedAt + (this.spec.initialDelaySeconds ?? 0) * 1000);
      return;
    }
    const wasRunning = this.#target.running;
    this.#target = target;
    if (!target.running) {
      this.#clearTimer();
      if (this.#result !== 'failure' && this.type !== 'liveness') this.#set('failure');
    } else if (!wasRunning) {
      this.#schedule(target.startedAt + (this.spec.initialDelaySeconds ?? 0) * 1000);
    }
  }

  /** Probes now (when the container is due), e.g. once it has started. */
  trigger(): void {
    const t = this.#target;
    if (!t?.running || this.#onHold || this.#stopped) return;
    this.#schedule(t.startedAt + (this.spec.initialDelaySeconds ?? 0) * 1000);
  }

  /** Sets a result without probing (a terminating pod's liveness: success, quietly). */
  force(result: ProbeResult): void {
    this.#clearTimer();
    this.#onHold = true;
    if (this.#result !== result) this.#set(result);
  }

  stop(): void {
    this.#stopped = true;
    this.#clearTimer();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(at: number): void {
    this.#clearTimer();
    if (this.#stopped) return;
    if (this.#probing) {
      this.#again = true;
      return;
    }
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, at - Date.now()));
  }

  #set(result: ProbeResult): void {
    this.#result = result;
    this.#ctx.changed(this);
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    const t = this.#target;
    if (!t?.running || this.#onHold || this.#stopped) return;
    const started = Date.now();
    const period = (this.spec.periodSeconds ?? 10) * 1000;
    const isStarted = this.#ctx.started(this);
    // The startup probe is done once the container started; the others wait for it.
    const skip = this.type === 'startup' ? isStarted : !isStarted;
    if (!skip) {
      this.#probing = true;
      try {
        const ok = await this.#ctx.run(this);
        if (ok !== undefined && !this.#stopped && this.#target?.id === t.id) this.#record(ok);
      } catch (err) {
        console.error(`agent: ${this.type} probe of ${t.id}: ${(err as Error).message}`);
      } finally {
        this.#probing = false;
      }
    }
    if (this.#stopped || this.#onHold || !this.#target?.running) return;
    if (this.#target.id !== t.id || this.#again) {
      this.#again = false;
      this.#schedule(this.#target.startedAt + (this.spec.initialDelaySeconds ?? 0) * 1000);
      return;
    }
    this.#schedule(started + period);
  }

  #record(ok: boolean): void {
    if (this.#last === ok) this.#run++;
    else {
      this.#last = ok;
      this.#run = 1;
    }
    const threshold = ok ? (this.spec.successThreshold ?? 1) : (this.spec.failureThreshold ?? 3);
    if (this.#run < threshold) return;
    const result: ProbeResult = ok ? 'success' : 'failure';
    if (!ok && (this.type === 'liveness' || this.type === 'startup')) {
      // The container will be killed: probe no more until the next one.
      this.#onHold = true;
      this.#run = 0;
    }
    if (result !== this.#result) this.#set(result);
    else if (!ok && this.#onHold) this.#ctx.changed(this);
  }
}
