/**
 * `capstan proxy`: kube-proxy's flags where they apply, the nftables proxier of proxier.ts,
 * `/healthz` on `--healthz-bind-address` and `/metrics` on `--metrics-bind-address`. Only the
 * nftables mode exists: `--proxy-mode=iptables` or `ipvs` is refused with a clear message.
 * `--cleanup` removes the proxy's table and exits. Exit status: 0 after a clean stop (or
 * `--help`), 2 for bad flags, 1 when it cannot start.
 */
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { FlagError, FlagSet, flagsOfSection, type FlagSpec } from '../flags/flags.js';
import { inClusterConfig, loadKubeconfig } from '../client/index.js';
import { DEFAULT_TABLE } from './nftables.js';
import { deleteNftTable, startProxy, type Proxy, type SyncFigures } from './proxier.js';

const f = flagsOfSection('Misc flags');
const FLAGS: readonly FlagSpec[] = [
  f(
    'kubeconfig',
    'string',
    '',
    'Path to kubeconfig file with authorization information; empty: in-cluster configuration.',
  ),
  f('master', 'string', '', 'The address of the Kubernetes API server (overrides any value in kubeconfig).'),
  f(
    'hostname-override',
    'string',
    '',
    'If non-empty, will be used as the name of the Node that kube-proxy is running on.',
  ),
  f(
    'proxy-mode',
    'string',
    '',
    "Which proxy mode to use: only 'nftables' (the default here) is implemented.",
  ),
  f(
    'cluster-cidr',
    'string',
    '',
    'The CIDR range of the pods in the cluster; traffic to a ClusterIP from outside it is masqueraded.',
  ),
  f('masquerade-all', 'bool', false, 'SNAT all traffic sent via Service cluster IPs.'),
  f('sync-period', 'duration', 30_000, 'How often the rules are re-synchronized.'),
  f(
    'min-sync-period',
    'duration',
    1_000,
    'The minimum period between rule resyncs; 0: every change syncs at once.',
  ),
  f(
    'healthz-bind-address',
    'string',
    '0.0.0.0:10256',
    'ip:port for the health check server; empty disables it.',
  ),
  f(
    'metrics-bind-address',
    'string',
    '127.0.0.1:10249',
    'ip:port for the metrics server; empty disables it.',
  ),
  f('cleanup', 'bool', false, "If true, remove the proxy's nftables table and exit."),
  {
    ...f('config', 'string', '', 'The path to the configuration file (KubeProxyConfiguration).'),
    notImplemented: true,
  },
];

/** Parsed options. */
export interface ProxyCommandOptions {
  readonly kubeconfig: string;
  readonly master: string;
  readonly nodeName: string;
  readonly clusterCidr: string;
  readonly masqueradeAll: boolean;
  readonly syncPeriodMs: number;
  readonly minSyncPeriodMs: number;
  readonly healthz: string;
  readonly metrics: string;
  readonly cleanup: boolean;
}

/** Parses `argv`; undefined for `--help`. @throws FlagError */
export function parseProxyArgs(argv: readonly string[]): ProxyCommandOptions | undefined {
  const p = new FlagSet('capstan proxy', FLAGS).parse(argv);
  if (p.help) return undefined;
  const v = (name: string): unknown => p.values.get(name);
  const mode = String(v('proxy-mode'));
  if (mode !== '' && mode !== 'nftables') {
    throw new FlagError(`--proxy-mode=${mode} is not supported: Capstan's proxy programs nftables only`);
  }
  const cidr = String(v('cluster-cidr'));
  if (cidr !== '' && !/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(cidr))
    throw new FlagError(`invalid --cluster-cidr ${cidr}`);
  if (String(v('config')) !== '')
    throw new FlagError('--config is not implemented yet: give the settings as flags');
  return {
    kubeconfig: String(v('kubeconfig')),
    master: String(v('master')),
    nodeName: String(v('hostname-override')) || hostname().toLowerCase(),
    clusterCidr: cidr,
    masqueradeAll: v('masquerade-all') === true,
    syncPeriodMs: Number(v('sync-period')),
    minSyncPeriodMs: Number(v('min-sync-period')),
    healthz: String(v('healthz-bind-address')),
    metrics: String(v('metrics-bind-address')),
    cleanup: v('cleanup') === true,
  };
}

function listen(address: string, handler: (path: string) => [number, string]): Promise<Server | undefined> {
  if (address === '') return Promise.resolve(undefined);
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  const server = createServer((req, res) => {
    const [status, body] = handler(req.url ?? '/');
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** Runs `capstan proxy <argv>` until a signal; resolves with the exit status. */
export async function runProxyCommand(argv: readonly string[]): Promise<number> {
  let opts: ProxyCommandOptions | undefined;
  try {
    opts = parseProxyArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`Error: ${err.message}\nRun 'capstan proxy --help' for usage.\n`);
    return 2;
  }
  if (opts === undefined) {
    process.stdout.write(
      `The Capstan Service proxy (nftables).\n\nUsage:\n  capstan proxy [flags]\n\n${new FlagSet('capstan proxy', FLAGS).usage()}\n`,
    );
    return 0;
  }
  const log = (line: string): void => void process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  if (opts.cleanup) {
    await deleteNftTable(DEFAULT_TABLE);
    return 0;
  }
  let proxy: Proxy;
  try {
    let config = opts.kubeconfig === '' ? inClusterConfig() : loadKubeconfig(opts.kubeconfig);
    if (opts.master !== '') config = { ...config, server: opts.master };
    proxy = await startProxy(config, {
      nodeName: opts.nodeName,
      ...(opts.clusterCidr === '' ? {} : { clusterCidr: opts.clusterCidr }),
      masqueradeAll: opts.masqueradeAll,
      syncPeriodMs: opts.syncPeriodMs,
      minSyncPeriodMs: opts.minSyncPeriodMs,
      log,
    });
  } catch (err) {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const running = proxy;
  const servers = await Promise.all([
    listen(opts.healthz, (path) => (path.startsWith('/healthz') ? [200, 'ok'] : [404, 'not found'])),
    listen(opts.metrics, (path) => {
      if (!path.startsWith('/metrics')) return [404, 'not found'];
      const at = running.lastSync?.at ?? 0;
      const { full, partial, ...all } = running.syncs;
      const summary = (name: string, help: string, f: SyncFigures): string =>
        `# HELP kubeproxy_${name} ${help}\n# TYPE kubeproxy_${name} summary\n` +
        `kubeproxy_${name}_sum ${f.totalMs / 1000}\nkubeproxy_${name}_count ${f.count}\n`;
      return [
        200,
        '# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds The last time proxy rules were successfully synced\n' +
          '# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\n' +
          `kubeproxy_sync_proxy_rules_last_timestamp_seconds ${at / 1000}\n` +
          summary('sync_proxy_rules_duration_seconds', 'SyncProxyRules latency in seconds', all) +
          summary(
            'sync_full_proxy_rules_duration_seconds',
            'SyncProxyRules latency in seconds for full resyncs',
            full,
          ) +
          summary(
            'sync_partial_proxy_rules_duration_seconds',
            'SyncProxyRules latency in seconds for partial resyncs',
            partial,
          ),
      ];
    }),
  ]);
  log(`proxy: syncing nftables table ${DEFAULT_TABLE} for node ${opts.nodeName}`);
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      for (const s of servers) s?.close();
      running.close().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
