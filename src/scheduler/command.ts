/**
 * `capstan scheduler`: kube-scheduler's flags and file. Parse, load the configuration, serve
 * health and metrics on `--secure-port`, run until SIGINT/SIGTERM. Exit status: 0 after a signal,
 * 1 for a configuration error (an unknown plugin names itself), 2 for bad flags.
 */
import { FlagError, FlagSet, flagsOfSection, type ParsedFlags } from '../flags/flags.js';
import { loadKubeconfig } from '../client/index.js';
import {
  loadSchedulerConfig,
  schedulerConfigFrom,
  SchedulerConfigError,
  type SchedulerConfig,
} from './config.js';
import { startHealthServer } from './health.js';
import { startScheduler } from './run.js';

const misc = flagsOfSection('Misc flags');
const secure = flagsOfSection('Secure serving flags');
const le = flagsOfSection('Leader election flags');

/** kube-scheduler's flags Capstan acts on. */
export const SCHEDULER_FLAGS = new FlagSet('scheduler', [
  misc(
    'config',
    'string',
    '',
    'The path to the configuration file (KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1).',
  ),
  misc(
    'kubeconfig',
    'string',
    '',
    'Path to kubeconfig file with authorization and master location information.',
  ),
  misc(
    'master',
    'string',
    '',
    'The address of the Kubernetes API server (overrides any value in kubeconfig).',
  ),
  misc('kube-api-qps', 'float', 50, 'QPS to use while talking with kubernetes apiserver.'),
  misc('kube-api-burst', 'int', 100, 'Burst to use while talking with kubernetes apiserver.'),
  misc('v', 'int', 0, 'number for the log level verbosity'),
  secure(
    'secure-port',
    'int',
    10259,
    "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
  ),
  secure(
    'bind-address',
    'string',
    '0.0.0.0',
    'The IP address on which to listen for the --secure-port port.',
  ),
  le(
    'leader-elect',
    'bool',
    true,
    'Start a leader election client and gain leadership before executing the main loop.',
  ),
  le(
    'leader-elect-lease-duration',
    'duration',
    15_000,
    'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership.',
  ),
  le(
    'leader-elect-renew-deadline',
    'duration',
    10_000,
    'The interval between attempts by the acting master to renew a leadership slot before it stops leading.',
  ),
  le(
    'leader-elect-retry-period',
    'duration',
    2_000,
    'The duration the clients should wait between attempting acquisition and renewal of a leadership.',
  ),
  le(
    'leader-elect-resource-lock',
    'string',
    'leases',
    "The type of resource object that is used for locking during leader election. Supported options are 'leases'.",
  ),
  le(
    'leader-elect-resource-name',
    'string',
    'kube-scheduler',
    'The name of resource object that is used for locking during leader election.',
  ),
  le(
    'leader-elect-resource-namespace',
    'string',
    'kube-system',
    'The namespace of resource object that is used for locking during leader election.',
  ),
]);

/** The configuration: the file (or defaults), with leader election flags given on the command line applied over it. */
export async function schedulerConfigOf(flags: ParsedFlags): Promise<SchedulerConfig> {
  const file = flags.values.get('config') as string;
  const base = file === '' ? schedulerConfigFrom(undefined) : await loadSchedulerConfig(file);
  const changed = (n: string): boolean => flags.changed.has(n);
  const v = <T>(n: string): T => flags.values.get(n) as T;
  const l = base.leaderElection;
  return {
    ...base,
    leaderElection: {
      leaderElect: changed('leader-elect') ? v<boolean>('leader-elect') : l.leaderElect,
      leaseDurationMs: changed('leader-elect-lease-duration')
        ? v<number>('leader-elect-lease-duration')
        : l.leaseDurationMs,
      renewDeadlineMs: changed('leader-elect-renew-deadline')
        ? v<number>('leader-elect-renew-deadline')
        : l.renewDeadlineMs,
      retryPeriodMs: changed('leader-elect-retry-period')
        ? v<number>('leader-elect-retry-period')
        : l.retryPeriodMs,
      resourceLock: changed('leader-elect-resource-lock')
        ? v<string>('leader-elect-resource-lock')
        : l.resourceLock,
      resourceName: changed('leader-elect-resource-name')
        ? v<string>('leader-elect-resource-name')
        : l.resourceName,
      resourceNamespace: changed('leader-elect-resource-namespace')
        ? v<string>('leader-elect-resource-namespace')
        : l.resourceNamespace,
    },
    clientConnection: {
      kubeconfig:
        file === '' || changed('kubeconfig') ? v<string>('kubeconfig') : base.clientConnection.kubeconfig,
      qps: file === '' || changed('kube-api-qps') ? v<number>('kube-api-qps') : base.clientConnection.qps,
      burst:
        file === '' || changed('kube-api-burst') ? v<number>('kube-api-burst') : base.clientConnection.burst,
    },
  };
}

/** Runs `capstan scheduler <argv>`; resolves with the exit status. */
export async function runSchedulerCommand(argv: readonly string[]): Promise<number> {
  let flags: ParsedFlags;
  try {
    flags = SCHEDULER_FLAGS.parse(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    console.error(`Error: ${err.message}\nRun 'capstan scheduler --help' for usage.`);
    return 2;
  }
  if (flags.help) {
    console.log(`usage: capstan scheduler [flags]\n\n${SCHEDULER_FLAGS.usage()}`);
    return 0;
  }
  const abort = new AbortController();
  try {
    const config = await schedulerConfigOf(flags);
    if (config.leaderElection.resourceLock !== 'leases') {
      throw new SchedulerConfigError(
        `leaderElection.resourceLock: Unsupported value: "${config.leaderElection.resourceLock}": supported values: "leases"`,
      );
    }
    const kubeconfig = config.clientConnection.kubeconfig;
    if (kubeconfig === '')
      throw new SchedulerConfigError(
        'no --kubeconfig (or clientConnection.kubeconfig) given; in-cluster configuration is not supported here',
      );
    const master = flags.values.get('master') as string;
    const client = { ...loadKubeconfig(kubeconfig), ...(master === '' ? {} : { server: master }) };
    const running = startScheduler(client, { config }, abort.signal);
    const port = flags.values.get('secure-port') as number;
    const health =
      port === 0
        ? undefined
        : await startHealthServer(
            () => running.scheduler.metrics.render(),
            flags.values.get('bind-address') as string,
            port,
          );
    const stop = (): void => abort.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await running.done;
    await health?.close();
    return 0;
  } catch (err) {
    abort.abort();
    console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
