/**
 * `scheduler`: schedulers measured side by side on one Capstan server (issue 30's benchmark).
 * Unlike the other scenarios it measures no server: it starts its own (`cluster.ts`: a
 * `capstan server` without an in-process scheduler, N simulated nodes in zones), then, round by
 * round and case by case, runs each scheduler under test as its own process with the same client
 * QPS and burst (A: `capstan scheduler`, or with `--scheduler-ceiling` the ceiling binder; B, with
 * `--scheduler-binary`: an external binary such as kube-scheduler v1.33), the order reversed
 * every other round so that a slow moment of the machine hits both. Each run is one fresh
 * namespace of P pods (`measure.ts`). The rows are the medians over the rounds; with two
 * schedulers each figure gets B ÷ A (`rounds.ts`).
 */
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import type { SchedulerBenchOptions } from '../options.js';
import type { Comparison, Row, SubjectInfo } from '../report.js';
import { compareRounds, mergeRounds } from '../rounds.js';
import { startBenchCluster, zoneOf } from '../scheduler/cluster.js';
import { measureScheduler } from '../scheduler/measure.js';
import { schedulerLabel, type SchedulerKind } from '../scheduler/process.js';
import { fmt } from '../stats.js';
import { Teardown } from '../teardown.js';

/** What the scheduler bench hands back to the run. */
export interface SchedulerBenchResult {
  readonly rows: Row[];
  readonly comparisons: Comparison[];
  readonly failures: string[];
  readonly subjects: SubjectInfo[];
  readonly target: string;
}

/** Zones the nodes are spread over (fewer when there are fewer nodes). */
const ZONES = 10;

/** A row's figures on one progress line (a long run shows them as it goes). */
function figureLine(row: Row): string {
  return Object.entries(row.figures)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(', ');
}

/** The schedulers under test, labelled `A: ...`, `B: ...` when there are two. */
function schedulersOf(options: SchedulerBenchOptions): { kind: SchedulerKind; label: string }[] {
  const kinds: SchedulerKind[] = [options.ceiling ? { kind: 'ceiling' } : { kind: 'capstan' }];
  if (options.binary !== undefined) kinds.push({ kind: 'binary', binary: options.binary });
  return kinds.map((kind, i) => ({
    kind,
    label: kinds.length === 1 ? schedulerLabel(kind) : `${i === 0 ? 'A' : 'B'}: ${schedulerLabel(kind)}`,
  }));
}

/** What the report says a subject ran: the target, and the product. */
function describeSubject(kind: SchedulerKind): { target: string; product: string } {
  switch (kind.kind) {
    case 'binary':
      return { target: kind.binary, product: 'external scheduler' };
    case 'ceiling':
      return {
        target: 'capstan bench binder (this build): binds only, no scheduling work',
        product: 'ceiling binder',
      };
    case 'capstan':
      return { target: 'capstan scheduler (this build)', product: 'capstan scheduler' };
  }
}

/** Runs the scheduler bench; every process it started is stopped before it resolves. */
export async function runSchedulerBench(
  options: SchedulerBenchOptions,
  progress: (line: string) => void,
): Promise<SchedulerBenchResult> {
  const teardown = new Teardown();
  try {
    const { pods, nodes } = options;
    const zones = Math.max(1, Math.min(ZONES, nodes));
    const schedulers = schedulersOf(options);
    const cluster = await startBenchCluster(
      { nodes, zones, serverArgs: options.serverArgs },
      teardown,
      progress,
    );
    const client = new BenchClient(readKubeconfigCredentials(cluster.kubeconfig), 2);
    teardown.add(() => client.close());
    const zoneMap = new Map(cluster.nodes.map((n) => [n, zoneOf(Number(/(\d+)$/.exec(n)?.[1] ?? 0), zones)]));
    const settings = {
      kubeconfig: cluster.kubeconfig,
      qps: options.qps,
      burst: options.burst,
      dir: cluster.dir,
    };
    const perSubject = schedulers.map(() => [] as Row[][]);
    const failures: string[] = [];
    for (let round = 0; round < options.rounds; round++) {
      for (const c of options.cases) {
        const order = schedulers.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const s = schedulers[i] as (typeof schedulers)[number];
          progress(`scheduler ${c}, round ${round + 1}/${options.rounds}: ${s.label}`);
          const rows = ((perSubject[i] as Row[][])[round] ??= []);
          try {
            const row = await measureScheduler({
              client,
              scheduler: s.kind,
              subject: s.label,
              settings,
              case: c,
              backlog: options.backlog,
              ...(options.createRate === undefined ? {} : { createRate: options.createRate }),
              pods,
              nodes,
              zones,
              zoneOf: zoneMap,
              progress,
            });
            rows.push(row);
            progress(`  ${s.label}: ${figureLine(row)}`);
          } catch (err) {
            const message = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
            failures.push(`scheduler ${c} on ${s.label}: ${message}`);
            rows.push({
              scenario: 'scheduler',
              case: `${c}: failed`,
              subject: s.label,
              figures: {},
              note: message,
            });
          }
        }
      }
    }
    const rounded = schedulers.map((s, i) => ({ subject: s.label, rounds: perSubject[i] as Row[][] }));
    const rows = rounded.flatMap((r) => mergeRounds(r));
    const comparisons = rounded.length === 2 ? compareRounds(rounded[0]!, rounded[1]!) : [];
    return {
      rows,
      comparisons,
      failures,
      subjects: schedulers.map((s) => ({
        label: s.label,
        ...describeSubject(s.kind),
        version: s.label,
        backend: '',
      })),
      target: `capstan server started by the bench (${nodes} simulated nodes in ${zones} zones; schedulers at --kube-api-qps=${options.qps} --kube-api-burst=${options.burst}${options.backlog ? '; every pod created before the scheduler starts' : ''}${options.createRate === undefined ? '' : `; pods created at ${options.createRate}/s`})`,
    };
  } finally {
    await teardown.run();
  }
}
