/**
 * The server test harness: a whole `capstan server` in this process, on 127.0.0.1 with a random
 * port and temporary data and cert directories, over the store a test asks for. Tests talk to
 * it like users do: raw HTTPS with the admin certificate ({@link adminFetch}),
 * @kubernetes/client-node ({@link TestServer.kubeConfig}), or stock kubectl ({@link runKubectl}).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import type { Store } from '../../storage/interface.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { startEtcd, type LocalEtcd } from '../../tools/etcd-local.js';
import { ServerLog } from '../../src/server/log.js';
import { parseServerArgs, type ServerOptions } from '../../src/server/options.js';
import { startServer, type RunningServer } from '../../src/server/server.js';

export {
  runKubectl,
  kubectlOutput,
  kubectlPath,
  KUBECTL_VERSIONS,
  type KubectlResult,
  type KubectlVersion,
} from './kubectl.js';
export {
  adminFetch,
  adminJson,
  adminTls,
  type AdminTls,
  type FetchResult,
  type JsonResult,
} from './https.js';
import { KUBEADM_ADDRESS_TYPES } from '../../src/server/flag-table.js';

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  /** Backend: in-memory (default), embedded LevelDB in the data dir, or a local etcd. */
  readonly store?: 'memory' | 'leveldb' | 'etcd';
  /** Reuse a data dir (restarts); the harness then leaves it in place on close. */
  readonly dataDir?: string;
  /** Cert dir; default `<dataDir>/pki`. */
  readonly certDir?: string;
  /** More `capstan server` flags. */
  readonly args?: readonly string[];
  /**
   * Run the server's own start-up work and controllers (system namespaces, service IP repair),
   * and {@link ESSENTIAL_CONTROLLERS}; default true.
   */
  readonly startControllers?: boolean;
  /**
   * The in-process controller manager's `--controllers` (kube names or aliases, `*`, `-foo`),
   * besides {@link ESSENTIAL_CONTROLLERS}. Default: none, so suites that do not ask see no
   * workload controllers.
   */
  readonly controllers?: readonly string[];
  /** A local etcd to use with `store: 'etcd'` (else one is started and stopped with the server). */
  readonly etcd?: LocalEtcd;
  /** The endpoint reconciler's lease TTL (s) and interval (ms) instead of kube's 15 s and 10 s. */
  readonly endpointLease?: { readonly ttlSeconds?: number; readonly intervalMs?: number };
}

/**
 * Controllers every harness server runs unless `startControllers: false` or a `--controllers`
 * flag in `args` leaves them out (`--controllers=` gives a bare API server): without them no
 * namespace gets its `default` ServiceAccount (pods are refused) or `kube-root-ca.crt`, and
 * deleted namespaces stay Terminating. They run in the in-process controller manager, as in
 * `capstan server`.
 */
export const ESSENTIAL_CONTROLLERS: readonly string[] = [
  'namespace-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'serviceaccount-token-controller',
  'clusterrole-aggregation-controller',
];

/** A running test server. */
export interface TestServer {
  readonly url: string;
  readonly kubeconfigPath: string;
  /** Loaded from the admin kubeconfig. */
  readonly kubeConfig: KubeConfig;
  /** The store under `--etcd-prefix`. */
  readonly store: Store;
  readonly dataDir: string;
  readonly certDir: string;
  readonly options: ServerOptions;
  readonly server: RunningServer;
  /** Warning and error lines the server logged. */
  readonly logs: readonly string[];
  /** Graceful shutdown, then removal of what the harness created. Idempotent. */
  close(): Promise<void>;
}

/** Starts a server; always `close()` it (afterEach/afterAll). */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'capstan-server-')));
  const certDir = opts.certDir ?? join(dataDir, 'pki');
  const kind = opts.store ?? 'memory';
  let etcd: LocalEtcd | undefined;
  let memory: Store | undefined;
  const logs: string[] = [];
  try {
    const args = [
      '--secure-port=0',
      '--bind-address=127.0.0.1',
      `--data-dir=${dataDir}`,
      `--cert-dir=${certDir}`,
      // The shutdown grace follows --request-timeout: keep a stuck stop well inside vitest's
      // 60 s hook timeout, so the server's own bounds are what a test sees.
      '--request-timeout=20s',
    ];
    if (kind === 'etcd') {
      etcd = opts.etcd ?? (await startEtcd());
      args.push(`--etcd-servers=${etcd.endpoints.join(',')}`);
    }
    // Test nodes register under names that do not resolve: reach agents at their InternalIP (as
    // kubeadm configures kube-apiserver), unless a test chooses.
    if (!(opts.args ?? []).some((a) => a.startsWith('--kubelet-preferred-address-types'))) {
      args.push(`--kubelet-preferred-address-types=${KUBEADM_ADDRESS_TYPES}`);
    }
    const parsed = parseServerArgs([...args, ...(opts.args ?? [])]);
    if (parsed.help) throw new Error('startTestServer: --help is not a server');
    if (kind === 'memory') memory = await openMemoryStore();
    const server = await startServer(parsed.options, {
      log: new ServerLog((line) => logs.push(line)),
      ...(memory === undefined ? {} : { store: memory }),
      ...(opts.startControllers === undefined ? {} : { startControllers: opts.startControllers }),
      controllers: [
        ...(opts.controllers ?? []),
        ...(opts.startControllers === false
          ? []
          : ESSENTIAL_CONTROLLERS.filter((c) => parsed.options.controllers.enabled(c))),
      ],
      ...(opts.endpointLease === undefined ? {} : { endpointLease: opts.endpointLease }),
    });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(server.kubeconfigPath);
    let closing: Promise<void> | undefined;
    const ownEtcd = etcd !== undefined && opts.etcd === undefined ? etcd : undefined;
    return {
      url: server.url,
      kubeconfigPath: server.kubeconfigPath,
      kubeConfig,
      store: server.store,
      dataDir,
      certDir,
      options: parsed.options,
      server,
      logs,
      close: () =>
        (closing ??= (async () => {
          await server.shutdown();
          await ownEtcd?.stop();
          if (ownDir) await rm(dataDir, { recursive: true, force: true });
        })()),
    };
  } catch (err) {
    await memory?.close();
    if (opts.etcd === undefined) await etcd?.stop();
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** The HTTP status and Status body of a client-node call that must fail (`Body`: the caller's view). */
export async function clientFailure<Body = Record<string, unknown>>(
  p: Promise<unknown>,
): Promise<{ code: number; body: Body }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as Body;
      return { code: err.code, body };
    }
    throw err;
  }
  throw new Error('expected the call to fail');
}
