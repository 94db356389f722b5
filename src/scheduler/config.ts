/**
 * KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`): read from YAML or JSON, defaulted
 * and validated as kube-scheduler does. Only the fields Capstan acts on are typed; others are
 * accepted and ignored (kube's decoder is lenient about unknown fields in this version too).
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';

/** A plugin named in a profile. */
export interface PluginRef {
  readonly name: string;
  readonly weight?: number;
}

/** The enabled and disabled plugins of one extension point. */
export interface PluginList {
  readonly enabled?: readonly PluginRef[];
  readonly disabled?: readonly PluginRef[];
}

/** Extension points a profile can configure. */
export const EXTENSION_POINTS = [
  'multiPoint',
  'preEnqueue',
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
] as const;
/** One extension point's name. */
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

/** One profile. */
export interface ProfileConfig {
  readonly schedulerName: string;
  readonly percentageOfNodesToScore?: number;
  readonly plugins: Partial<Record<ExtensionPoint, PluginList>>;
  readonly pluginConfig: readonly { readonly name: string; readonly args: Record<string, unknown> }[];
}

/** The defaulted configuration. */
export interface SchedulerConfig {
  readonly profiles: readonly ProfileConfig[];
  readonly percentageOfNodesToScore: number;
  readonly podInitialBackoffSeconds: number;
  readonly podMaxBackoffSeconds: number;
  readonly leaderElection: LeaderElectionConfig;
  readonly clientConnection: { readonly kubeconfig: string; readonly qps: number; readonly burst: number };
}

/** Leader election settings (durations in ms). */
export interface LeaderElectionConfig {
  readonly leaderElect: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly resourceLock: string;
  readonly resourceName: string;
  readonly resourceNamespace: string;
}

/** A configuration that cannot be used; the message says why. */
export class SchedulerConfigError extends Error {
  readonly code = 'SCHEDULER_CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'SchedulerConfigError';
  }
}

/** The scheduler name pods get when they name none. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** kube's leader election defaults for kube-scheduler. */
export const DEFAULT_LEADER_ELECTION: LeaderElectionConfig = {
  leaderElect: true,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  resourceLock: 'leases',
  resourceName: 'kube-scheduler',
  resourceNamespace: 'kube-system',
};

function durationMs(v: unknown, def: number, field: string): number {
  if (v === undefined || v === null) return def;
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v) : null;
  if (m === null) throw new SchedulerConfigError(`${field}: invalid duration ${JSON.stringify(v) ?? ''}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function num(v: unknown, def: number, field: string): number {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new SchedulerConfigError(`${field}: must be a number`);
  return v;
}

/** Defaults and validates a parsed configuration object (undefined: all defaults). */
export function schedulerConfigFrom(raw: unknown): SchedulerConfig {
  const r = obj(raw);
  if (raw !== undefined) {
    if (r['apiVersion'] !== 'kubescheduler.config.k8s.io/v1') {
      throw new SchedulerConfigError(
        `no kind "${String(r['kind'])}" is registered for version "${String(r['apiVersion'])}" in scheme`,
      );
    }
    if (r['kind'] !== 'KubeSchedulerConfiguration') {
      throw new SchedulerConfigError(
        `no kind "${String(r['kind'])}" is registered for version "${String(r['apiVersion'])}"`,
      );
    }
  }
  const initial = num(r['podInitialBackoffSeconds'], 1, 'podInitialBackoffSeconds');
  const max = num(r['podMaxBackoffSeconds'], 10, 'podMaxBackoffSeconds');
  if (initial <= 0)
    throw new SchedulerConfigError('podInitialBackoffSeconds: Invalid value: must be greater than 0');
  if (max < initial) {
    throw new SchedulerConfigError(
      'podMaxBackoffSeconds: Invalid value: must be greater than or equal to PodInitialBackoffSeconds',
    );
  }
  const pct = num(r['percentageOfNodesToScore'], 0, 'percentageOfNodesToScore');
  if (pct < 0 || pct > 100)
    throw new SchedulerConfigError('percentageOfNodesToScore: Invalid value: not in valid range [0-100]');
  const rawProfiles = Array.isArray(r['profiles']) ? (r['profiles'] as unknown[]) : [{}];
  const seen = new Set<string>();
  const profiles = rawProfiles.map((p, i): ProfileConfig => {
    const po = obj(p);
    const name =
      typeof po['schedulerName'] === 'string' && po['schedulerName'] !== ''
        ? po['schedulerName']
        : DEFAULT_SCHEDULER_NAME;
    if (seen.has(name))
      throw new SchedulerConfigError(`profiles[${i}].schedulerName: Duplicate value: "${name}"`);
    seen.add(name);
    const plugins: Partial<Record<ExtensionPoint, PluginList>> = {};
    const rp = obj(po['plugins']);
    for (const ep of EXTENSION_POINTS) {
      const l = obj(rp[ep]);
      const refs = (v: unknown): PluginRef[] =>
        (Array.isArray(v) ? v : []).map((x) => {
          const o = obj(x);
          return {
            name: typeof o['name'] === 'string' ? o['name'] : '',
            ...(typeof o['weight'] === 'number' ? { weight: o['weight'] } : {}),
          };
        });
      if (rp[ep] !== undefined) plugins[ep] = { enabled: refs(l['enabled']), disabled: refs(l['disabled']) };
    }
    const pluginConfig = (Array.isArray(po['pluginConfig']) ? po['pluginConfig'] : []).map((c) => {
      const co = obj(c);
      return { name: typeof co['name'] === 'string' ? co['name'] : '', args: obj(co['args']) };
    });
    const ppct = po['percentageOfNodesToScore'];
    return {
      schedulerName: name,
      plugins,
      pluginConfig,
      ...(typeof ppct === 'number' ? { percentageOfNodesToScore: ppct } : {}),
    };
  });
  const le = obj(r['leaderElection']);
  const cc = obj(r['clientConnection']);
  return {
    profiles,
    percentageOfNodesToScore: pct,
    podInitialBackoffSeconds: initial,
    podMaxBackoffSeconds: max,
    leaderElection: {
      leaderElect: typeof le['leaderElect'] === 'boolean' ? le['leaderElect'] : true,
      leaseDurationMs: durationMs(le['leaseDuration'], 15_000, 'leaderElection.leaseDuration'),
      renewDeadlineMs: durationMs(le['renewDeadline'], 10_000, 'leaderElection.renewDeadline'),
      retryPeriodMs: durationMs(le['retryPeriod'], 2_000, 'leaderElection.retryPeriod'),
      resourceLock: typeof le['resourceLock'] === 'string' ? le['resourceLock'] : 'leases',
      resourceName: typeof le['resourceName'] === 'string' ? le['resourceName'] : 'kube-scheduler',
      resourceNamespace:
        typeof le['resourceNamespace'] === 'string' ? le['resourceNamespace'] : 'kube-system',
    },
    clientConnection: {
      kubeconfig: typeof cc['kubeconfig'] === 'string' ? cc['kubeconfig'] : '',
      qps: num(cc['qps'], 50, 'clientConnection.qps'),
      burst: num(cc['burst'], 100, 'clientConnection.burst'),
    },
  };
}

/** Reads a configuration file (YAML or JSON). */
export async function loadSchedulerConfig(path: string): Promise<SchedulerConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SchedulerConfigError(`failed to read config file "${path}": ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new SchedulerConfigError(`failed to decode config file "${path}": ${(err as Error).message}`);
  }
  return schedulerConfigFrom(raw);
}
