/**
 * One measured step of a cluster bench on one stack: the stack's CPU and peak RSS over the step
 * (`/proc`), the API server's request latency p99 over the step (its own histogram), the time
 * the step took, and the pod start-up latencies the step reports, as one row.
 */
import type { Row } from '../report.js';
import { fmt, summarize } from '../stats.js';
import { histogramDelta, histogramQuantile, readRequestHistogram } from './metrics.js';
import { GroupSampler } from './sampler.js';
import { stackPids, type Stack } from './stack.js';

/** Kube's scalability SLO on pod start-up latency (p99), milliseconds. */
export const POD_STARTUP_SLO_MS = 5000;

/** What a step's body hands back. */
export interface StepResult {
  /** Pod start-up latencies (first seen → Running), milliseconds, when the step starts pods. */
  readonly startups?: readonly number[];
  /** Said in the row's note (the pod watch resumed or incomplete). */
  readonly note?: string;
}

/** A step that ends before this rejects (a deadline, a process of the stack exiting). */
export function deadline(stack: Stack, ms: number, what: string): Promise<never> {
  const timer = new Promise<never>((_, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: not done after ${fmt(ms / 1000)} s`)), ms);
    t.unref();
  });
  const both = Promise.race([timer, stack.lost]);
  both.catch(() => undefined);
  return both;
}

/**
 * Runs `body` as the step `scenario`/`title` on `stack` and measures it.
 * @throws whatever `body` throws (the caller turns it into a failed row).
 */
export async function measureStep(
  stack: Stack,
  scenario: string,
  title: string,
  body: () => Promise<StepResult>,
): Promise<Row> {
  const before = await readRequestHistogram(stack.client);
  const sampler = new GroupSampler(() => stackPids(stack));
  const started = process.hrtime.bigint();
  let result: StepResult;
  try {
    result = await body();
  } finally {
    sampler.stop();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const proc = sampler.stop();
  const after = await readRequestHistogram(stack.client);
  const apiP99 = histogramQuantile(histogramDelta(before, after), 0.99) * 1000;
  const figures: Record<string, number> = { 'time s': seconds };
  if (result.startups !== undefined) {
    const s = summarize(result.startups);
    figures['start p50 ms'] = s.p50;
    figures['start p99 ms'] = s.p99;
  }
  figures['API p99 ms'] = apiP99;
  figures['stack RSS MiB'] = proc.peakRssMiB;
  figures['stack CPU s'] = proc.cpuSeconds;
  const startP99 = figures['start p99 ms'];
  const slo =
    startP99 === undefined || !Number.isFinite(startP99)
      ? undefined
      : `start-up p99 ${startP99 <= POD_STARTUP_SLO_MS ? 'within' : 'over'} the 5 s SLO`;
  const notes = [slo, result.note].filter((x) => x !== undefined);
  const note = notes.length === 0 ? undefined : notes.join('; ');
  return { scenario, case: title, subject: stack.label, figures, ...(note === undefined ? {} : { note }) };
}
