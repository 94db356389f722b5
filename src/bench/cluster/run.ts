/**
 * One `capstan bench cluster` or `capstan bench controllers` run: the stacks (or managers) under
 * test one after the other, round by round, the order reversed every other round so that a slow
 * moment of the machine hits both; the rows are the medians over the rounds and, with two
 * subjects, each figure gets B ÷ A (`rounds.ts`). Every process is stopped and every temporary
 * directory removed before it resolves, on failure too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import type { Comparison, Row, RunReport, SubjectInfo } from '../report.js';
import { compareRounds, mergeRounds } from '../rounds.js';
import { spawnServer } from '../server-process.js';
import { capstanEntry } from '../scheduler/process.js';
import { startCapstanStack } from './capstan-stack.js';
import { Children } from './children.js';
import { capstanManager, kubeManager, measureManager, type ManagerKind } from './controllers.js';
import { startKubeStack } from './kube-stack.js';
import { CEILING_LABEL, CEILING_SUBJECT, measureCeiling } from './manager-ceiling.js';
import type { ClusterBenchOptions } from './options.js';
import { runClusterSteps } from './scenarios.js';
import type { Stack } from './stack.js';

/** One subject of a run: how to measure it once, in round `round`. */
interface Subject {
  readonly label: string;
  readonly target: string;
  readonly once: (round: number) => Promise<Row[]>;
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}

/** Runs every subject `rounds` times, interleaved; merges and compares. */
async function interleave(
  scenario: string,
  subjects: readonly Subject[],
  rounds: number,
  progress: (line: string) => void,
  failures: string[],
): Promise<{ rows: Row[]; comparisons: Comparison[] }> {
  const perSubject = subjects.map(() => [] as Row[][]);
  for (let round = 0; round < rounds; round++) {
    const order = subjects.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const s = subjects[i] as Subject;
      progress(`round ${round + 1}/${rounds}: ${s.label}`);
      let rows: Row[];
      try {
        rows = await s.once(round);
      } catch (err) {
        failures.push(`${s.label}: ${message(err)}`);
        rows = [{ scenario, case: 'run: failed', subject: s.label, figures: {}, note: message(err) }];
      }
      (perSubject[i] as Row[][])[round] = rows;
    }
  }
  const rounded = subjects.map((s, i) => ({ subject: s.label, rounds: perSubject[i] as Row[][] }));
  const rows = rounded.flatMap((r) => mergeRounds(r));
  const comparisons = rounded.length === 2 ? compareRounds(rounded[0]!, rounded[1]!) : [];
  return { rows, comparisons };
}

/** The stack subjects of `capstan bench cluster`. */
function stackSubjects(
  options: ClusterBenchOptions,
  progress: (line: string) => void,
  failures: string[],
): Subject[] {
  const starters: { label: string; target: string; start: () => Promise<Stack> }[] = [
    {
      label: 'A: capstan',
      target: `capstan server ${options.serverArgs.join(' ')} + capstan agent --simulate`.replace('  ', ' '),
      start: () => startCapstanStack({ serverArgs: options.serverArgs, progress }),
    },
  ];
  const bin = options.kubeBinDir;
  if (bin !== undefined)
    starters.push({
      label: 'B: kube',
      target: `${bin}: etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok`,
      start: () =>
        startKubeStack({ binDir: bin, client: { qps: options.qps, burst: options.burst }, progress }),
    });
  return starters.map((s) => ({
    label: s.label,
    target: s.target,
    once: async () => {
      const stack = await s.start();
      try {
        const rows = await runClusterSteps(stack, options.steps, options.sizes, progress, failures);
        // One subject label per side across rounds (the stack's own label names its version).
        return rows.map((r) => ({ ...r, subject: s.label }));
      } finally {
        await stack.stop();
      }
    },
  }));
}

/** The manager subjects of `capstan bench controllers`, all on one bare capstan server. */
async function managerSubjects(
  options: ClusterBenchOptions,
  progress: (line: string) => void,
  dir: string,
  children: Children,
): Promise<{ subjects: Subject[]; client: BenchClient }> {
  progress('controllers: starting a bare capstan server (--controllers=)');
  const server = await spawnServer({
    dataDir: join(dir, 'data'),
    extraArgs: ['--controllers=', ...options.serverArgs],
    main: capstanEntry(),
  });
  children.adopt('capstan server', server.pid, new Promise(() => undefined), () => server.stop());
  const client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath), 2);
  const settings = { qps: options.qps, burst: options.burst };
  const kinds: { label: string; kind: ManagerKind }[] = [];
  if (!options.managerCeiling) kinds.push({ label: 'A: capstan', kind: capstanManager(settings) });
  if (options.kubeBinDir !== undefined)
    kinds.push({ label: 'B: kube', kind: kubeManager(options.kubeBinDir, settings) });
  const subjects: Subject[] = kinds.map((k) => ({
    label: k.label,
    target: `${k.kind.label} --kube-api-qps=${options.qps} --kube-api-burst=${options.burst}`,
    once: async (round: number) => {
      const row = await measureManager(
        {
          client,
          kubeconfig: server.kubeconfigPath,
          children,
          manager: k.kind,
          replicas: options.sizes.replicas,
          namespace: `bench-cm-${round}-${k.label.charAt(0).toLowerCase()}`,
          timeoutMs: options.sizes.stepTimeoutMs,
        },
        progress,
      );
      return [{ ...row, subject: k.label }];
    },
  }));
  if (options.managerCeiling)
    subjects.unshift({
      label: CEILING_SUBJECT,
      target: CEILING_LABEL,
      once: async (round: number) => [
        await measureCeiling(
          {
            client,
            replicas: options.sizes.replicas,
            namespace: `bench-cm-${round}-ceiling`,
            timeoutMs: options.sizes.stepTimeoutMs,
          },
          progress,
        ),
      ],
    });
  return { subjects, client };
}

/** Runs the bench of `options`; resolves with the whole report. */
export async function runClusterBench(
  options: ClusterBenchOptions,
  progress: (line: string) => void,
  command: string,
): Promise<RunReport> {
  const startedAt = new Date().toISOString();
  const failures: string[] = [];
  let subjects: Subject[];
  let result: { rows: Row[]; comparisons: Comparison[] };
  if (options.mode === 'cluster') {
    subjects = stackSubjects(options, progress, failures);
    result = await interleave(options.mode, subjects, options.rounds, progress, failures);
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-controllers-'));
    const children = new Children();
    children.addCleanup(() => rm(dir, { recursive: true, force: true }));
    let client: BenchClient | undefined;
    try {
      const m = await managerSubjects(options, progress, dir, children);
      client = m.client;
      subjects = m.subjects;
      result = await interleave(options.mode, subjects, options.rounds, progress, failures);
    } finally {
      client?.close();
      await children.stopAll();
    }
  }
  const infos: SubjectInfo[] = subjects.map((s) => ({
    label: s.label,
    target: s.target,
    product: s.label === CEILING_SUBJECT ? 'ceiling' : s.label.includes('kube') ? 'kube' : 'capstan',
    version: '',
    backend: s.label.includes('kube') ? 'etcd' : 'embedded',
  }));
  return {
    startedAt,
    command,
    node: process.version,
    target: infos.map((i) => `${i.label} = ${i.target}`).join('; '),
    subjects: infos,
    rounds: options.rounds,
    rows: result.rows,
    ...(infos.length > 1 ? { comparisons: result.comparisons } : {}),
    ...(failures.length === 0 ? {} : { failures }),
  };
}
