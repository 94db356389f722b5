/**
 * Flags of `capstan bench` (pflag syntax, as `capstan server`), the size presets, and the parsed
 * options. A preset fixes every size; a flag given on the command line overrides its one size.
 */
import { FlagError, FlagSet, flagsOfSection, type FlagSpec } from '../flags/flags.js';
import type { BenchSizes } from './context.js';
import { JSON_TYPE, PROTOBUF_TYPE } from './objects.js';
import { SCHEDULER_CASES, type SchedulerCase } from './scheduler/pods.js';

/** Scenario names in run order (`crud` covers create, get, update and delete). */
export const SCENARIOS = [
  'startup',
  'cold',
  'crud',
  'list',
  'watch',
  'informers',
  'mixed',
  'authz',
  'custom',
  'scheduler',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/**
 * What runs when no scenario is named: every one but `scheduler`, which measures schedulers on
 * a cluster of its own rather than the server (and takes minutes).
 */
export const DEFAULT_SCENARIOS: readonly ScenarioName[] = SCENARIOS.filter((s) => s !== 'scheduler');

/** The verbs of `crud`, each also accepted as a scenario name (timing only the verbs named). */
const VERBS: readonly string[] = ['create', 'get', 'update', 'delete'];

/** The sizes of issue 7 (`--preset full`). */
const FULL: BenchSizes = {
  clients: [1, 10, 100],
  durationMs: 5000,
  objectSize: 1024,
  listSizes: [1000, 10_000, 100_000],
  listRepeats: 5,
  watchers: [1, 100, 1000, 10_000],
  writeRate: 100,
  watchDurationMs: 10_000,
  informers: [10, 50],
  informerObjects: 50_000,
  startupObjects: 100_000,
  mixedWorkers: 20,
  coldObjects: 10_000,
  coldHistory: 100_000,
  burstWatchers: 1000,
  burstWrites: 20_000,
  schedulerPods: 5000,
  schedulerNodes: 1000,
};

/** Sizes by preset: `quick` for a look (about a minute), `suite` for `npm run bench`, `full` the sizes. */
export const PRESETS: Readonly<Record<string, BenchSizes>> = {
  quick: {
    clients: [1, 10],
    durationMs: 1000,
    objectSize: 1024,
    listSizes: [1000],
    listRepeats: 3,
    watchers: [1, 100],
    writeRate: 50,
    watchDurationMs: 2000,
    informers: [5],
    informerObjects: 2000,
    startupObjects: 2000,
    mixedWorkers: 10,
    coldObjects: 1000,
    coldHistory: 5000,
    burstWatchers: 100,
    burstWrites: 1000,
    schedulerPods: 500,
    schedulerNodes: 100,
  },
  suite: {
    clients: [1, 10, 100],
    durationMs: 2000,
    objectSize: 1024,
    listSizes: [1000, 10_000],
    listRepeats: 3,
    watchers: [1, 100, 1000],
    writeRate: 100,
    watchDurationMs: 3000,
    informers: [10],
    informerObjects: 10_000,
    startupObjects: 10_000,
    mixedWorkers: 10,
    coldObjects: 10_000,
    coldHistory: 20_000,
    burstWatchers: 1000,
    burstWrites: 5000,
    schedulerPods: 2000,
    schedulerNodes: 400,
  },
  full: FULL,
  /** The rows of issue 16's comparison table (`startup cold crud watch`): full sizes, one list and watch shape. */
  table: { ...FULL, listSizes: [10_000], watchers: [10_000], informers: [10], informerObjects: 10_000 },
};

const flag = flagsOfSection('Bench');

const FLAGS: readonly FlagSpec[] = [
  flag(
    'kubeconfig',
    'string',
    '',
    'Kubeconfig of the server to measure, or a comma-separated list of one per API server of an HA control plane (requests go round-robin over them). Unset: start capstan server (embedded store) on a temporary data dir.',
  ),
  flag('context', 'string', '', 'Kubeconfig context (default: its current-context).'),
  flag(
    'server-pid',
    'int',
    0,
    'Pid of the measured server on this machine, to read its CPU and RSS from /proc.',
  ),
  flag(
    'server-arg',
    'stringArray',
    [],
    'Extra capstan server flag for servers the bench starts (repeatable), e.g. --server-arg=--etcd-servers=http://127.0.0.1:2379.',
  ),
  flag(
    'compare',
    'string',
    '',
    'Kubeconfig of a second server (B), or a comma-separated list of one per API server: every scenario runs on both, interleaved round by round, and the report gives B ÷ A for each figure. Raw-store baselines are not measured in a comparison.',
  ),
  flag(
    'compare-context',
    'string',
    '',
    'Context in the --compare kubeconfig (default: its current-context).',
  ),
  flag(
    'compare-server-pid',
    'int',
    0,
    'Pid of server B on this machine (default: found by its port when local).',
  ),
  flag(
    'compare-server-arg',
    'stringArray',
    [],
    'Without --compare: B is a capstan server the bench starts with these extra flags (repeatable), e.g. --compare-server-arg=--enable-priority-and-fairness=false.',
  ),
  flag(
    'ha-compare',
    'string',
    '',
    "A directory with kube-apiserver (built elsewhere): the bench starts A, --ha-servers capstan servers on a three-member etcd (bare API servers, --controllers=, as kube-apiserver has no controller manager or scheduler; --server-arg flags follow, and one naming --controllers replaces that), and B, as many kube-apiservers from this directory on another three-member etcd (etcd: $CAPSTAN_ETCD_BIN, default /usr/bin/etcd), each server on its own loopback address; requests go round-robin over each side's servers. Instead of --kubeconfig and --compare.",
  ),
  flag('ha-servers', 'int', 3, 'API servers on each side of --ha-compare.'),
  flag(
    'rounds',
    'int',
    0,
    'Times each scenario runs on each server (figures are medians; B ÷ A per round). Default: 3 with a comparison, else 1.',
  ),
  flag(
    'warmup-rounds',
    'int',
    0,
    'Unmeasured runs of each scenario on each server before its measured rounds (same order), so that JIT-compiled servers are measured warm, as a server that has been up for a while is.',
  ),
  flag(
    'preset',
    'string',
    'quick',
    'Sizes: quick, suite (npm run bench), full (the sizes of issue 7) or table (the rows of issue 16: run scenarios startup cold crud watch).',
  ),
  flag('clients', 'stringSlice', [], 'Concurrent clients of create/get/update/delete, e.g. 1,10,100.'),
  flag('duration', 'duration', 0, 'Length of each closed loop.'),
  flag('object-size', 'int', 0, 'ConfigMap payload bytes (default 1024).'),
  flag('list-sizes', 'stringSlice', [], 'Object counts of the list scenario.'),
  flag('watchers', 'stringSlice', [], 'Watcher counts of the watch scenario.'),
  flag('write-rate', 'int', 0, 'Writes per second during the watch scenario.'),
  flag('informers', 'stringSlice', [], 'Informer counts of the informers scenario.'),
  flag('informer-objects', 'int', 0, 'Objects the informers list.'),
  flag('startup-objects', 'int', -1, 'Objects in the populated start-up case (0 skips it).'),
  flag('list-repeats', 'int', 0, 'Timed repetitions of each list shape (the median is reported).'),
  flag('cold-objects', 'int', 0, 'Live ConfigMaps of the cold scenario.'),
  flag(
    'cold-history',
    'int',
    0,
    'Events (creates, then updates) written before the cold scenario lists and watches.',
  ),
  flag('burst-watchers', 'int', 0, 'Watchers of the watch case right after a burst of writes (0 skips it).'),
  flag('burst-writes', 'int', 0, 'Writes (creates and deletes) of that burst.'),
  flag('content-type', 'string', JSON_TYPE, `Body type of writes: ${JSON_TYPE} or ${PROTOBUF_TYPE}.`),
  flag('baselines', 'bool', true, 'Measure the raw stores (classic-level, etcd) in the same run.'),
  flag('etcd-baseline', 'bool', true, 'Include raw etcd (needs /usr/bin/etcd; skipped when absent).'),
  flag(
    'json',
    'string',
    '',
    'Write the rows as JSON to this file (an existing one is kept as <name>.previous.json).',
  ),
  flag(
    'markdown',
    'string',
    '',
    'Write a markdown report to this file, beside the previous JSON figures when --json names an existing file.',
  ),
  flag('sessions', 'int', 2, 'HTTP/2 connections the clients share.'),
  flag(
    'scheduler-binary',
    'string',
    '',
    "scheduler scenario: B, a scheduler binary taking kube-scheduler's flags (e.g. /path/to/kube-scheduler), run with --config (clientConnection qps and burst as A's) --kubeconfig --leader-elect=false --secure-port=0. Unset: capstan scheduler alone.",
  ),
  flag(
    'scheduler-ceiling',
    'bool',
    false,
    'scheduler scenario: A is the ceiling binder (capstan bench binder) instead of capstan scheduler: it binds each unbound pod to the next node and does no scheduling work, so its pods/s bounds what any scheduler reaches on this server and machine. Plain pods only.',
  ),
  flag(
    'scheduler-qps',
    'float',
    5000,
    "scheduler scenario: client QPS of every scheduler under test (kube's scheduler_perf uses 5000).",
  ),
  flag('scheduler-burst', 'int', 5000, 'scheduler scenario: client burst of every scheduler under test.'),
  flag(
    'scheduler-backlog',
    'bool',
    false,
    'scheduler scenario: create every pod before the scheduler starts, and measure pods/s from its first bind to its last (the scheduler alone, not the rate at which the server creates pods); no latencies.',
  ),
  flag(
    'scheduler-create-rate',
    'float',
    0,
    "scheduler scenario: create the pods at this steady rate (pods/s, at most 32 creates in flight) instead of as fast as the server takes them, so both schedulers' latencies are measured under the same load; 0: as fast as possible.",
  ),
  flag(
    'scheduler-cases',
    'stringSlice',
    [...SCHEDULER_CASES],
    `scheduler scenario: cases to run (${SCHEDULER_CASES.join(', ')}).`,
  ),
  flag('pods', 'int', 0, 'scheduler scenario: pods each case creates (quick 500, suite 2000, full 5000).'),
  flag('nodes', 'int', 0, 'scheduler scenario: simulated nodes (quick 100, suite 400, full 1000).'),
];

/** Parsed options of one run. */
export interface BenchOptions {
  readonly scenarios: readonly ScenarioName[];
  /** Kubeconfigs of the measured server: one, or one per API server of an HA control plane. */
  readonly kubeconfig: readonly string[] | undefined;
  readonly context: string | undefined;
  readonly serverPid: number | undefined;
  readonly serverArgs: readonly string[];
  readonly sizes: BenchSizes;
  readonly contentType: string;
  /** Verbs the crud scenario times: those named as scenarios, or all four. */
  readonly verbs: ReadonlySet<string>;
  readonly baselines: boolean;
  readonly etcdBaseline: boolean;
  readonly json: string | undefined;
  readonly markdown: string | undefined;
  readonly sessions: number;
  readonly preset: string;
  /** The second server of a comparison, when there is one. */
  readonly compare: CompareTarget | undefined;
  /** `--ha-compare`: both sides are HA control planes the bench starts. */
  readonly ha: HaCompare | undefined;
  /** Runs of each scenario on each server. */
  readonly rounds: number;
  /** Unmeasured runs of each scenario on each server before its measured rounds. */
  readonly warmupRounds: number;
  /** The scheduler scenario's settings. */
  readonly scheduler: SchedulerBenchOptions;
}

/** Settings of the `scheduler` scenario. */
export interface SchedulerBenchOptions {
  /** B: an external scheduler binary (kube-scheduler's flags); undefined: capstan scheduler alone. */
  readonly binary: string | undefined;
  readonly qps: number;
  readonly burst: number;
  readonly cases: readonly SchedulerCase[];
  /** `--scheduler-backlog`: every pod exists before the scheduler starts. */
  readonly backlog: boolean;
  /** `--scheduler-ceiling`: A is the ceiling binder, not capstan scheduler. */
  readonly ceiling: boolean;
  /** `--scheduler-create-rate`: pods created per second, paced; undefined: as fast as possible. */
  readonly createRate: number | undefined;
  readonly pods: number;
  readonly nodes: number;
  readonly rounds: number;
  /** Extra flags of the capstan server it starts (`--server-arg`). */
  readonly serverArgs: readonly string[];
}

/** `--ha-compare`: Capstan and kube-apiserver control planes of `servers` servers on etcd clusters. */
export interface HaCompare {
  /** Where kube-apiserver is. */
  readonly kubeBinDir: string;
  readonly servers: number;
}

/** Server B of `--compare`: kubeconfig(s), or (none) a capstan server the bench starts. */
export interface CompareTarget {
  readonly kubeconfig: readonly string[] | undefined;
  readonly context: string | undefined;
  readonly serverPid: number | undefined;
  readonly serverArgs: readonly string[];
}

/** `capstan bench --help`. */
export function benchHelp(): string {
  return `usage: capstan bench [scenario...] [flags]

Measures a Kubernetes-compatible API server through a kubeconfig, beside the raw stores
(classic-level, etcd) in the same run, or against a second server (--compare) with B ÷ A for
every figure. Scenarios: ${SCENARIOS.join(', ')} (default: all but scheduler).

The scheduler scenario measures schedulers, not a server: it starts a capstan server without an
in-process scheduler and --nodes simulated nodes, then runs capstan scheduler (A) and, with
--scheduler-binary, another scheduler (B) as processes with the same client QPS and burst,
interleaved round by round, each creating --pods pods per case. Figures: pods bound per second
(first create to last bind), create-to-bound latency p50 and p99, the scheduler's CPU and RSS.
With --scheduler-backlog every pod is created before the scheduler starts, and pods/s counts from
its first bind to its last: the scheduler's own rate, not capped by the server's create rate.
With --scheduler-create-rate the pods are created at that steady rate, so both schedulers'
latencies are measured under the same load (as fast as possible, the side whose scheduler leaves
the server more CPU also makes the server create faster, and queue more).
With --scheduler-ceiling (plain pods only), A is a binder that does no scheduling work (capstan
bench binder): its pods/s is the most any scheduler reaches on this server and machine.
  capstan bench scheduler --preset=full --scheduler-binary=/path/to/kube-scheduler --rounds=1

${new FlagSet('capstan bench', FLAGS).usage()}`;
}

function numbers(values: readonly string[], name: string): number[] {
  return values.map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new FlagError(`invalid argument "${v}" for "--${name}": want positive integers`);
    return n;
  });
}

/**
 * Parses `capstan bench` arguments.
 * @returns undefined for `--help`.
 * @throws FlagError for unknown flags or scenarios, bad numbers, an unknown preset or content type.
 */
export function parseBenchArgs(argv: readonly string[]): BenchOptions | undefined {
  const parsed = new FlagSet('capstan bench', FLAGS).parse(argv);
  if (parsed.help) return undefined;
  const v = parsed.values;
  const str = (n: string): string => v.get(n) as string;
  const int = (n: string): number => v.get(n) as number;
  const list = (n: string): readonly string[] => v.get(n) as readonly string[];
  const preset = PRESETS[str('preset')];
  if (preset === undefined)
    throw new FlagError(`unknown preset ${str('preset')}: want ${Object.keys(PRESETS).join(', ')}`);
  const contentType = str('content-type');
  if (contentType !== JSON_TYPE && contentType !== PROTOBUF_TYPE)
    throw new FlagError(`unsupported --content-type ${contentType}: want ${JSON_TYPE} or ${PROTOBUF_TYPE}`);
  const scenarios: ScenarioName[] = [];
  const named = new Set<string>();
  for (const a of parsed.args) {
    if (VERBS.includes(a)) named.add(a);
    const name = VERBS.includes(a) ? 'crud' : a;
    if (!(SCENARIOS as readonly string[]).includes(name))
      throw new FlagError(`unknown scenario ${a}: want ${SCENARIOS.join(', ')}`);
    if (!scenarios.includes(name as ScenarioName)) scenarios.push(name as ScenarioName);
  }
  const changed = (n: string): boolean => parsed.changed.has(n);
  const sizes: BenchSizes = {
    clients: changed('clients') ? numbers(list('clients'), 'clients') : preset.clients,
    durationMs: changed('duration') ? int('duration') : preset.durationMs,
    objectSize: changed('object-size') ? int('object-size') : preset.objectSize,
    listSizes: changed('list-sizes') ? numbers(list('list-sizes'), 'list-sizes') : preset.listSizes,
    listRepeats: changed('list-repeats') ? int('list-repeats') : preset.listRepeats,
    watchers: changed('watchers') ? numbers(list('watchers'), 'watchers') : preset.watchers,
    writeRate: changed('write-rate') ? int('write-rate') : preset.writeRate,
    watchDurationMs: preset.watchDurationMs,
    informers: changed('informers') ? numbers(list('informers'), 'informers') : preset.informers,
    informerObjects: changed('informer-objects') ? int('informer-objects') : preset.informerObjects,
    startupObjects: changed('startup-objects') ? int('startup-objects') : preset.startupObjects,
    mixedWorkers: preset.mixedWorkers,
    coldObjects: changed('cold-objects') ? int('cold-objects') : preset.coldObjects,
    coldHistory: changed('cold-history') ? int('cold-history') : preset.coldHistory,
    burstWatchers: changed('burst-watchers') ? int('burst-watchers') : preset.burstWatchers,
    burstWrites: changed('burst-writes') ? int('burst-writes') : preset.burstWrites,
    schedulerPods: changed('pods') ? int('pods') : preset.schedulerPods,
    schedulerNodes: changed('nodes') ? int('nodes') : preset.schedulerNodes,
  };
  if (sizes.schedulerPods < 1 || sizes.schedulerNodes < 1)
    throw new FlagError('--pods and --nodes must be positive');
  if (sizes.listRepeats < 1 || sizes.coldObjects < 1 || sizes.burstWrites < 1)
    throw new FlagError('--list-repeats, --cold-objects and --burst-writes must be positive');
  if (sizes.durationMs <= 0 || sizes.objectSize < 1 || sizes.writeRate < 1)
    throw new FlagError('--duration, --object-size and --write-rate must be positive');
  const opt = (n: string): string | undefined => (str(n) === '' ? undefined : str(n));
  /** A comma-separated list of kubeconfigs (one per API server). */
  const kubeconfigs = (n: string): string[] | undefined => {
    const paths = opt(n)?.split(',');
    if (paths?.some((p) => p === '')) throw new FlagError(`--${n} has an empty kubeconfig path`);
    return paths;
  };
  const compareArgs = list('compare-server-arg');
  if (opt('compare') !== undefined && compareArgs.length > 0)
    throw new FlagError('--compare-server-arg is for a server the bench starts: drop it or --compare');
  const ha: HaCompare | undefined =
    opt('ha-compare') === undefined
      ? undefined
      : { kubeBinDir: str('ha-compare'), servers: int('ha-servers') };
  if (ha !== undefined && (opt('kubeconfig') ?? opt('compare') ?? compareArgs[0]) !== undefined)
    throw new FlagError(
      '--ha-compare starts both sides: drop --kubeconfig, --compare and --compare-server-arg',
    );
  if (ha !== undefined && ha.servers < 1) throw new FlagError('--ha-servers must be positive');
  const compare: CompareTarget | undefined =
    opt('compare') === undefined && compareArgs.length === 0
      ? undefined
      : {
          kubeconfig: kubeconfigs('compare'),
          context: opt('compare-context'),
          serverPid: int('compare-server-pid') > 0 ? int('compare-server-pid') : undefined,
          serverArgs: compareArgs,
        };
  if (int('rounds') < 0) throw new FlagError('--rounds must not be negative');
  if (int('warmup-rounds') < 0) throw new FlagError('--warmup-rounds must not be negative');
  const schedulerBinary = opt('scheduler-binary');
  const rounds =
    int('rounds') > 0
      ? int('rounds')
      : compare === undefined && ha === undefined && schedulerBinary === undefined
        ? 1
        : 3;
  const cases = list('scheduler-cases');
  for (const c of cases)
    if (!(SCHEDULER_CASES as readonly string[]).includes(c))
      throw new FlagError(`unknown scheduler case ${c}: want ${SCHEDULER_CASES.join(', ')}`);
  if (cases.length === 0) throw new FlagError('--scheduler-cases names no case');
  const ceiling = v.get('scheduler-ceiling') === true;
  if (ceiling && cases.some((c) => c !== 'plain'))
    throw new FlagError(
      '--scheduler-ceiling binds without looking at constraints: add --scheduler-cases=plain',
    );
  const createRate = v.get('scheduler-create-rate') as number;
  if (!(createRate >= 0) || !Number.isFinite(createRate))
    throw new FlagError('--scheduler-create-rate must be a number of pods per second, or 0');
  if (createRate > 0 && v.get('scheduler-backlog') === true)
    throw new FlagError('--scheduler-create-rate paces live creates: drop it or --scheduler-backlog');
  return {
    scenarios: scenarios.length === 0 ? DEFAULT_SCENARIOS : scenarios,
    kubeconfig: kubeconfigs('kubeconfig'),
    context: opt('context'),
    serverPid: int('server-pid') > 0 ? int('server-pid') : undefined,
    serverArgs: list('server-arg'),
    sizes,
    contentType,
    verbs: parsed.args.includes('crud') || named.size === 0 ? new Set(VERBS) : named,
    baselines: v.get('baselines') === true,
    etcdBaseline: v.get('etcd-baseline') === true,
    json: opt('json'),
    markdown: opt('markdown'),
    sessions: Math.max(1, int('sessions')),
    preset: str('preset'),
    compare,
    ha,
    rounds,
    warmupRounds: int('warmup-rounds'),
    scheduler: {
      binary: schedulerBinary,
      qps: v.get('scheduler-qps') as number,
      burst: int('scheduler-burst'),
      cases: cases as readonly SchedulerCase[],
      backlog: v.get('scheduler-backlog') === true,
      ceiling,
      createRate: createRate > 0 ? createRate : undefined,
      pods: sizes.schedulerPods,
      nodes: sizes.schedulerNodes,
      rounds,
      serverArgs: list('server-arg'),
    },
  };
}
