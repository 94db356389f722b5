/**
 * Flags of `capstan bench cluster` and `capstan bench controllers` (pflag syntax), the size
 * presets, and the parsed options. A preset fixes every size; a flag overrides its one size.
 */
import { FlagError, FlagSet, flagsOfSection, type FlagSpec } from '../../flags/flags.js';
import { CLUSTER_STEPS, type ClusterSizes, type ClusterStep } from './scenarios.js';

/** Sizes by preset: `tiny` for development, `medium` for a shared machine, `full` issue 31's. */
export const CLUSTER_PRESETS: Readonly<Record<string, Omit<ClusterSizes, 'stepTimeoutMs'>>> = {
  tiny: { nodes: 20, replicas: 200, jobs: 20, idleSeconds: 10 },
  medium: { nodes: 200, replicas: 2000, jobs: 200, idleSeconds: 20 },
  full: { nodes: 1000, replicas: 10_000, jobs: 1000, idleSeconds: 60 },
};

const flag = flagsOfSection('Cluster bench');

const FLAGS: readonly FlagSpec[] = [
  flag(
    'preset',
    'string',
    'tiny',
    'Sizes: tiny (20 nodes, 200 replicas, 20 Jobs), medium (200, 2,000, 200) or full (1,000, 10,000, 1,000).',
  ),
  flag('nodes', 'int', 0, 'Simulated nodes (overrides the preset).'),
  flag('replicas', 'int', 0, 'Replicas of the Deployment (overrides the preset).'),
  flag('jobs', 'int', 0, 'One-pod Jobs (overrides the preset).'),
  flag('idle-seconds', 'int', 0, 'Seconds the idle nodes are sampled (overrides the preset).'),
  flag('step-timeout', 'duration', 1_800_000, 'Longest one step may take.'),
  flag(
    'kube-bin-dir',
    'string',
    '',
    'Directory of the reference binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok), built outside the repository. Unset: Capstan alone.',
  ),
  flag(
    'kube-api-qps',
    'float',
    5000,
    "Client QPS of the controller managers and kube-scheduler under test (kwokctl's unlimited setting; Capstan's in-process controllers are unlimited).",
  ),
  flag(
    'kube-api-burst',
    'int',
    10_000,
    'Client burst of the controller managers and kube-scheduler under test.',
  ),
  flag(
    'manager-ceiling',
    'bool',
    false,
    "controllers only: A is no manager but the bench's own creates of the Deployment's pods, 500 in flight (kube's burstReplicas), with nothing in between, so its pods/s bounds what any controller manager reaches on this server and machine.",
  ),
  flag('rounds', 'int', 1, 'Runs of each stack, interleaved (A, B, then B, A, ...); figures are medians.'),
  flag('server-arg', 'stringArray', [], 'Extra capstan server flag (repeatable).'),
  flag('json', 'string', '', 'Write the report as JSON to this file.'),
  flag('markdown', 'string', '', 'Write a markdown report to this file.'),
];

/** Parsed options of `capstan bench cluster` / `controllers`. */
export interface ClusterBenchOptions {
  /** `cluster`: the stack bench; `controllers`: issue 29's controller-manager bench. */
  readonly mode: 'cluster' | 'controllers';
  readonly steps: ReadonlySet<ClusterStep>;
  readonly preset: string;
  readonly sizes: ClusterSizes;
  readonly kubeBinDir: string | undefined;
  readonly qps: number;
  readonly burst: number;
  readonly rounds: number;
  /** `--manager-ceiling` (controllers only): A is the ceiling subject (manager-ceiling.ts). */
  readonly managerCeiling: boolean;
  readonly serverArgs: readonly string[];
  readonly json: string | undefined;
  readonly markdown: string | undefined;
}

/** `capstan bench cluster --help`. */
export function clusterHelp(mode: 'cluster' | 'controllers'): string {
  const head =
    mode === 'cluster'
      ? `usage: capstan bench cluster [step...] [flags]

Runs Capstan's whole stack (capstan server with its in-process controllers and scheduler, and
capstan agent --simulate --nodes=N) and, with --kube-bin-dir, the reference stack (etcd,
kube-apiserver, kube-controller-manager, kube-scheduler, kwok) one after the other, interleaved
round by round. Steps: ${CLUSTER_STEPS.join(', ')} (default: all). Figures per step: time to done,
pod start-up p50/p99 (first seen → Running), the API server's request p99, the stack's peak RSS
and CPU seconds; idle: the node simulator's CPU as % of one core.
  capstan bench cluster --preset=medium --kube-bin-dir=/path/to/bin`
      : `usage: capstan bench controllers [flags]

Issue 29's benchmark: on one bare capstan server, capstan controller-manager and (with
--kube-bin-dir) kube-controller-manager, one at a time, the other stopped, with the same client
QPS and burst: a Deployment scaled 0 → --replicas: pods created per second, the manager's RSS
holding the pods, a foreground delete until the last pod is gone.
  capstan bench controllers --preset=medium --kube-bin-dir=/path/to/bin`;
  return `${head}\n\n${new FlagSet(`capstan bench ${mode}`, FLAGS).usage()}`;
}

/**
 * Parses the arguments after `capstan bench cluster` (or `controllers`).
 * @returns undefined for `--help`.
 * @throws FlagError for unknown flags or steps, an unknown preset, sizes below one.
 */
export function parseClusterArgs(
  mode: 'cluster' | 'controllers',
  argv: readonly string[],
): ClusterBenchOptions | undefined {
  const parsed = new FlagSet(`capstan bench ${mode}`, FLAGS).parse(argv);
  if (parsed.help) return undefined;
  const v = parsed.values;
  const str = (name: string): string => v.get(name) as string;
  const int = (name: string): number => v.get(name) as number;
  const preset = CLUSTER_PRESETS[str('preset')];
  if (preset === undefined)
    throw new FlagError(`unknown preset ${str('preset')}: want ${Object.keys(CLUSTER_PRESETS).join(', ')}`);
  if (mode === 'controllers' && parsed.args.length > 0)
    throw new FlagError(`capstan bench controllers takes no steps (got ${parsed.args.join(' ')})`);
  for (const a of parsed.args)
    if (!(CLUSTER_STEPS as readonly string[]).includes(a))
      throw new FlagError(`unknown step ${a}: want ${CLUSTER_STEPS.join(', ')}`);
  const size = (name: string, fallback: number): number => {
    const x = parsed.changed.has(name) ? int(name) : fallback;
    if (!(x >= 1)) throw new FlagError(`--${name} must be at least 1`);
    return x;
  };
  const opt = (name: string): string | undefined => (str(name) === '' ? undefined : str(name));
  if (int('rounds') < 1) throw new FlagError('--rounds must be at least 1');
  const managerCeiling = v.get('manager-ceiling') === true;
  if (managerCeiling && mode !== 'controllers')
    throw new FlagError('--manager-ceiling is a flag of capstan bench controllers');
  const timeout = int('step-timeout');
  if (!(timeout > 0)) throw new FlagError('--step-timeout must be positive');
  return {
    mode,
    steps: new Set((parsed.args.length === 0 ? CLUSTER_STEPS : parsed.args) as ClusterStep[]),
    preset: str('preset'),
    sizes: {
      nodes: size('nodes', preset.nodes),
      replicas: size('replicas', preset.replicas),
      jobs: size('jobs', preset.jobs),
      idleSeconds: size('idle-seconds', preset.idleSeconds),
      stepTimeoutMs: timeout,
    },
    kubeBinDir: opt('kube-bin-dir'),
    qps: v.get('kube-api-qps') as number,
    burst: int('kube-api-burst'),
    rounds: int('rounds'),
    managerCeiling,
    serverArgs: v.get('server-arg') as readonly string[],
    json: opt('json'),
    markdown: opt('markdown'),
  };
}
