/**
 * Options of simulated nodes, their defaults (kubelet's where kubelet has the same knob), and the
 * flags of `capstan agent --simulate` that set them.
 */
import { FlagError, FlagSet, flagsOfSection, type FlagSpec } from '../../flags/flags.js';
import type { Taint } from '../../api/types/core-v1.js';

/** What {@link startSimulatedNodes} simulates; every field has a default (see {@link DEFAULT_OPTIONS}). */
export interface SimulatedNodesOptions {
  /** How many nodes: named `<nodeNamePrefix><i>` for i in 0..nodes-1. */
  readonly nodes: number;
  readonly nodeNamePrefix: string;
  /** Capacity (and allocatable) of each node, as quantities. */
  readonly cpu: string;
  readonly memory: string;
  readonly ephemeralStorage: string;
  readonly pods: number;
  /** More labels on every node (the well-known ones are always set). */
  readonly labels: Readonly<Record<string, string>>;
  /** Taints the nodes register with (kubelet's --register-with-taints). */
  readonly taints: readonly Taint[];
  /** Lease duration (kubelet's nodeLeaseDurationSeconds, 40). */
  readonly leaseDurationSeconds: number;
  /** How often each node renews its Lease (kubelet: a quarter of the duration, 10 s). */
  readonly leaseRenewIntervalMs: number;
  /** How often an unchanged node status is posted anyway (kubelet's nodeStatusReportFrequency, 5 m). */
  readonly nodeStatusReportFrequencyMs: number;
  /**
   * Concurrent pod status and deletion writes (they also wait for the client's QPS). Writes are
   * bound by the server's latency: 32 workers at 300 ms a write made 10,000 pods take 100 s.
   */
  readonly podWorkers: number;
  /** kubeletVersion the nodes report. */
  readonly kubeletVersion: string;
}

/** Defaults: kubelet's intervals, a roomy node, 110 pods. */
export const DEFAULT_OPTIONS: SimulatedNodesOptions = Object.freeze({
  nodes: 1,
  nodeNamePrefix: 'sim-node-',
  cpu: '32',
  memory: '256Gi',
  ephemeralStorage: '100Gi',
  pods: 110,
  labels: Object.freeze({}),
  taints: Object.freeze([]),
  leaseDurationSeconds: 40,
  leaseRenewIntervalMs: 10_000,
  nodeStatusReportFrequencyMs: 300_000,
  podWorkers: 100,
  kubeletVersion: 'v1.33.0',
});

const TAINT_EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

/** Parses kubelet's taint syntax `key=value:Effect` or `key:Effect`. @throws FlagError */
export function parseTaint(text: string): Taint {
  const colon = text.lastIndexOf(':');
  if (colon === -1) throw new FlagError(`invalid taint ${JSON.stringify(text)}: want key=value:Effect`);
  const effect = text.slice(colon + 1);
  if (!TAINT_EFFECTS.has(effect)) {
    throw new FlagError(
      `invalid taint effect ${JSON.stringify(effect)}: want NoSchedule, PreferNoSchedule or NoExecute`,
    );
  }
  const kv = text.slice(0, colon);
  const eq = kv.indexOf('=');
  const key = eq === -1 ? kv : kv.slice(0, eq);
  if (key === '') throw new FlagError(`invalid taint ${JSON.stringify(text)}: empty key`);
  return eq === -1 ? { key, effect } : { key, value: kv.slice(eq + 1), effect };
}

const flag = flagsOfSection('Simulated agent');

const FLAGS: readonly FlagSpec[] = [
  flag(
    'simulate',
    'bool',
    false,
    'Run simulated nodes (kwok-like) instead of a node agent on a container runtime.',
  ),
  flag('kubeconfig', 'string', '', 'Kubeconfig of the API server (required).'),
  flag('context', 'string', '', 'Kubeconfig context (default: its current-context).'),
  flag('nodes', 'int', DEFAULT_OPTIONS.nodes, 'Number of simulated nodes.'),
  flag(
    'node-name-prefix',
    'string',
    DEFAULT_OPTIONS.nodeNamePrefix,
    'Node names are this prefix and 0, 1, 2, ...',
  ),
  flag('node-cpu', 'string', DEFAULT_OPTIONS.cpu, 'CPU capacity of each node.'),
  flag('node-memory', 'string', DEFAULT_OPTIONS.memory, 'Memory capacity of each node.'),
  flag(
    'node-ephemeral-storage',
    'string',
    DEFAULT_OPTIONS.ephemeralStorage,
    'Ephemeral storage capacity of each node.',
  ),
  flag('node-pods', 'int', DEFAULT_OPTIONS.pods, 'Pod capacity of each node (kubelet --max-pods).'),
  flag('node-labels', 'mapStringString', {}, 'Labels to add to every node (k1=v1,k2=v2).'),
  flag(
    'register-with-taints',
    'stringSlice',
    [],
    'Taints every node registers with (key=value:Effect, comma-separated).',
  ),
  flag(
    'node-lease-duration-seconds',
    'int',
    DEFAULT_OPTIONS.leaseDurationSeconds,
    'Duration of each node Lease.',
  ),
  flag(
    'node-lease-renew-interval',
    'duration',
    DEFAULT_OPTIONS.leaseRenewIntervalMs,
    'How often each node renews its Lease (each node at its own offset, with 4% jitter).',
  ),
  flag(
    'node-status-report-frequency',
    'duration',
    DEFAULT_OPTIONS.nodeStatusReportFrequencyMs,
    'How often an unchanged node status is posted; a change is posted at once.',
  ),
  flag('pod-workers', 'int', DEFAULT_OPTIONS.podWorkers, 'Concurrent pod status writes and deletions.'),
  flag('kube-api-qps', 'float', 500, 'Client QPS to the API server, shared by all nodes (<0: unlimited).'),
  flag('kube-api-burst', 'int', 1000, 'Client burst to the API server.'),
];

/** The parsed command line of `capstan agent --simulate`. */
export interface SimulatedAgentArgs {
  readonly kubeconfig: string;
  readonly context: string | undefined;
  readonly qps: number;
  readonly burst: number;
  readonly options: SimulatedNodesOptions;
}

/** The flag set (for help output). */
export const SIMULATED_AGENT_FLAGS = new FlagSet('capstan agent --simulate', FLAGS);

/** Parses the flags; undefined when help was asked. @throws FlagError */
export function parseSimulatedAgentArgs(argv: readonly string[]): SimulatedAgentArgs | undefined {
  const parsed = SIMULATED_AGENT_FLAGS.parse(argv);
  if (parsed.help) return undefined;
  if (parsed.args.length > 0) throw new FlagError(`unexpected argument ${JSON.stringify(parsed.args[0])}`);
  const v = parsed.values;
  const str = (name: string): string => v.get(name) as string;
  const num = (name: string): number => v.get(name) as number;
  const kubeconfig = str('kubeconfig');
  if (kubeconfig === '') throw new FlagError('--kubeconfig is required');
  const nodes = num('nodes');
  if (nodes < 0) throw new FlagError('--nodes must not be negative');
  if (num('node-pods') < 0) throw new FlagError('--node-pods must not be negative');
  if (num('node-lease-duration-seconds') <= 0)
    throw new FlagError('--node-lease-duration-seconds must be positive');
  if (num('node-lease-renew-interval') <= 0)
    throw new FlagError('--node-lease-renew-interval must be positive');
  if (num('node-status-report-frequency') <= 0)
    throw new FlagError('--node-status-report-frequency must be positive');
  if (num('pod-workers') <= 0) throw new FlagError('--pod-workers must be positive');
  return {
    kubeconfig,
    context: str('context') === '' ? undefined : str('context'),
    qps: num('kube-api-qps'),
    burst: num('kube-api-burst'),
    options: {
      nodes,
      nodeNamePrefix: str('node-name-prefix'),
      cpu: str('node-cpu'),
      memory: str('node-memory'),
      ephemeralStorage: str('node-ephemeral-storage'),
      pods: num('node-pods'),
      labels: v.get('node-labels') as Readonly<Record<string, string>>,
      taints: (v.get('register-with-taints') as readonly string[]).map(parseTaint),
      leaseDurationSeconds: num('node-lease-duration-seconds'),
      leaseRenewIntervalMs: num('node-lease-renew-interval'),
      nodeStatusReportFrequencyMs: num('node-status-report-frequency'),
      podWorkers: num('pod-workers'),
      kubeletVersion: DEFAULT_OPTIONS.kubeletVersion,
    },
  };
}
