/**
 * `capstan controller-manager` options: the parsed flags of `flag-table.ts`, validated and typed.
 * Durations are milliseconds. {@link defaultManagerOptions} gives kube's defaults, which the
 * in-process manager of `capstan server` starts from.
 */
import { FlagError, FlagSet, type FlagValue } from '../flags/flags.js';
import type { ControllersConfig } from '../controllers/config.js';
import { CONCURRENT_SYNCS, CONTROLLER_MANAGER_FLAGS } from './flag-table.js';

/** Leader election settings (`--leader-elect*`). */
export interface LeaderElectionOptions {
  readonly enabled: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly namespace: string;
  readonly name: string;
}

/** Validated options of the controller manager. */
export interface ManagerOptions {
  readonly kubeconfig: string;
  readonly master: string;
  /** `--controllers` as given (`*`, `foo`, `-foo`). */
  readonly controllers: readonly string[];
  readonly useServiceAccountCredentials: boolean;
  readonly qps: number;
  readonly burst: number;
  readonly leaderElection: LeaderElectionOptions;
  /** 0: no health/metrics listener. */
  readonly securePort: number;
  readonly bindAddress: string;
  readonly controllerStartIntervalMs: number;
  readonly config: ControllersConfig;
}

/** The flag set of `capstan controller-manager`. */
export function controllerManagerFlagSet(): FlagSet {
  return new FlagSet('capstan controller-manager', CONTROLLER_MANAGER_FLAGS);
}

const HELP_HEADER = `The Capstan controller manager: kube-controller-manager's control loops over any Kubernetes API server.

Usage:
  capstan controller-manager [flags]
`;

/** `--help` text. */
export function controllerManagerHelp(): string {
  return `${HELP_HEADER}\n${controllerManagerFlagSet().usage()}`;
}

/** The result of {@link parseControllerManagerArgs}. */
export type ParsedManagerArgs =
  { readonly help: true } | { readonly help: false; readonly options: ManagerOptions };

/**
 * Parses and validates `argv`.
 * @throws FlagError on unknown flags, malformed values and inconsistent settings.
 */
export function parseControllerManagerArgs(argv: readonly string[]): ParsedManagerArgs {
  const parsed = controllerManagerFlagSet().parse(argv);
  if (parsed.help) return { help: true };
  if (parsed.args.length > 0) throw new FlagError(`unexpected arguments: ${parsed.args.join(' ')}`);
  return { help: false, options: optionsFromValues(parsed.values) };
}

/** kube's defaults (what `capstan server` runs in-process), with `overrides`. */
export function defaultManagerOptions(overrides: Partial<ManagerOptions> = {}): ManagerOptions {
  return { ...optionsFromValues(controllerManagerFlagSet().parse([]).values), ...overrides };
}

function optionsFromValues(values: ReadonlyMap<string, FlagValue>): ManagerOptions {
  const str = (n: string): string => values.get(n) as string;
  const num = (n: string): number => values.get(n) as number;
  const bool = (n: string): boolean => values.get(n) as boolean;
  const leaderElection: LeaderElectionOptions = {
    enabled: bool('leader-elect'),
    leaseDurationMs: num('leader-elect-lease-duration'),
    renewDeadlineMs: num('leader-elect-renew-deadline'),
    retryPeriodMs: num('leader-elect-retry-period'),
    namespace: str('leader-elect-resource-namespace'),
    name: str('leader-elect-resource-name'),
  };
  if (leaderElection.enabled) {
    if (leaderElection.leaseDurationMs <= leaderElection.renewDeadlineMs) {
      throw new FlagError('--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline');
    }
    // kube: renewDeadline > JitterFactor (1.2) * retryPeriod.
    if (leaderElection.renewDeadlineMs <= leaderElection.retryPeriodMs * 1.2) {
      throw new FlagError(
        '--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period',
      );
    }
    if (str('leader-elect-resource-lock') !== 'leases') {
      throw new FlagError(`--leader-elect-resource-lock: only "leases" is supported`);
    }
  }
  const securePort = num('secure-port');
  if (securePort < 0 || securePort > 65535)
    throw new FlagError(`--secure-port ${securePort} must be 0..65535`);
  const concurrentSyncs: Record<string, number> = {};
  for (const key of Object.keys(CONCURRENT_SYNCS)) concurrentSyncs[key] = num(`concurrent-${key}-syncs`);
  const signer = (prefix: string): { certFile: string; keyFile: string } => ({
    certFile: str(`cluster-signing-${prefix}-cert-file`),
    keyFile: str(`cluster-signing-${prefix}-key-file`),
  });
  const config: ControllersConfig = {
    concurrentSyncs,
    clusterSigning: {
      certFile: str('cluster-signing-cert-file'),
      keyFile: str('cluster-signing-key-file'),
      durationMs: num('cluster-signing-duration'),
      signers: {
        'kubelet-serving': signer('kubelet-serving'),
        'kubelet-client': signer('kubelet-client'),
        'kube-apiserver-client': signer('kube-apiserver-client'),
        'legacy-unknown': signer('legacy-unknown'),
      },
    },
    rootCaFile: str('root-ca-file'),
    serviceAccountPrivateKeyFile: str('service-account-private-key-file'),
    allocateNodeCidrs: bool('allocate-node-cidrs'),
    clusterCidr: str('cluster-cidr'),
    nodeCidrMaskSize: num('node-cidr-mask-size'),
    nodeCidrMaskSizeIPv4: num('node-cidr-mask-size-ipv4'),
    nodeCidrMaskSizeIPv6: num('node-cidr-mask-size-ipv6'),
    serviceClusterIpRange: str('service-cluster-ip-range'),
    nodeMonitorGracePeriodMs: num('node-monitor-grace-period'),
    nodeMonitorPeriodMs: num('node-monitor-period'),
    nodeStartupGracePeriodMs: num('node-startup-grace-period'),
    terminatedPodGcThreshold: num('terminated-pod-gc-threshold'),
    enableGarbageCollector: bool('enable-garbage-collector'),
    gcDiscoveryPeriodMs: 30_000,
    minResyncPeriodMs: num('min-resync-period'),
    flags: values,
  };
  return {
    kubeconfig: str('kubeconfig'),
    master: str('master'),
    controllers: values.get('controllers') as readonly string[],
    useServiceAccountCredentials: bool('use-service-account-credentials'),
    qps: num('kube-api-qps'),
    burst: num('kube-api-burst'),
    leaderElection,
    securePort,
    bindAddress: str('bind-address'),
    controllerStartIntervalMs: num('controller-start-interval'),
    config,
  };
}

/** One warning per not-implemented flag given on the command line. */
export function notImplementedWarnings(argv: readonly string[]): string[] {
  const parsed = controllerManagerFlagSet().parse(argv);
  return CONTROLLER_MANAGER_FLAGS.filter((f) => f.notImplemented === true && parsed.changed.has(f.name)).map(
    (f) => `--${f.name} is accepted but not implemented yet`,
  );
}
