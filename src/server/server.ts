/**
 * Starting and stopping one API server in this process: storage, PKI, the app, the listener, the
 * compactor and the admin kubeconfig. `run.ts` (the CLI) and the test harness both use it.
 *
 * Start: the store opens and the PKI loads or generates (I/O and key generation on libuv's
 * thread pool) while the main thread loads the HTTP modules (fastify and the resource layer,
 * the bulk of the start time, imported here lazily for that reason); then the app is built and
 * listens, the post-start hooks complete, and the kubeconfig is written.
 *
 * Shutdown (SIGTERM in the CLI): `/readyz` fails at once; after `--shutdown-delay-duration` the
 * listener closes (with `--shutdown-send-retry-after`, only once the requests in flight are
 * answered, new ones getting 429 meanwhile), HTTP/2 clients get GOAWAY, watches end cleanly
 * (paced over `--shutdown-watch-termination-grace-period` when set), in-flight requests finish
 * (up to `--request-timeout`, then connections are cut); finally compaction stops and the store
 * closes.
 */
import { startupTrace, traceFirstRequests } from './startup-trace.js';
import { mkdir } from 'node:fs/promises';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/interface.js';
import { packageVersion } from './package-version.js';
import { versionInfo } from '../http/version.js';
import { localServerUrl, writeKubeconfig } from '../pki/kubeconfig.js';
import { servedUrls } from '../pki/served-addresses.js';
import { ensureServerPki, type ServerPki, type ServerPkiOptions } from '../pki/server-pki.js';
import { loadEncryptionConfig, type EncryptionConfig } from '../encryption/config.js';
import { loadServiceAccountKeys } from '../serviceaccount/keys.js';
import type { Deprecations } from '../registry/deprecations.js';
import { loadRegistry } from '../registry/registry.js';
import type { ClientConfig } from '../client/config.js';
import { startCompactor, type Compactor } from './compactor.js';
import { loopbackConfig, type LoopbackIdentity } from './loopback.js';
import { ConnectionTracker } from './connections.js';
import { POST_START_HOOKS, RBAC_BOOTSTRAP_HOOK, ServerLifecycle } from './lifecycle.js';
import { ServerLog } from './log.js';
import type { ServerOptions } from './options.js';
import { openStore, storeViews, type OpenedStore } from './storage.js';
import type { RunningManager } from '../controller-manager/manager.js';
import { startInProcessControllerManager } from './controller-manager.js';
import { SCHEDULER_CONTROLLER, startInProcessScheduler, type InProcessScheduler } from './scheduler.js';
import type { InProcessComponents } from './component-statuses.js';
import { CONTROLLERS } from '../controller-manager/registry.js';

/** How long a stop still waits for the app once its connections were destroyed (ms). */
const CLOSE_AFTER_DESTROY_MS = 5_000;

/** Replacements for tests and tools. */
export interface StartOverrides {
  /** A root store to use instead of opening one; the server closes it on shutdown. */
  readonly store?: Store;
  readonly log?: ServerLog;
  /** Run the resource controllers (default true). */
  readonly startControllers?: boolean;
  /** Deprecated API versions instead of kube 1.33's (tests). */
  readonly deprecations?: Deprecations;
  /**
   * The in-process controller manager's `--controllers` selection (its syntax: names, aliases,
   * `*`, `-name`) instead of its share of the server's flag; empty: no controller manager.
   */
  readonly controllers?: readonly string[];
  /** The endpoint reconciler's lease TTL (s) and interval (ms) instead of kube's 15 s and 10 s (tests). */
  readonly endpointLease?: { readonly ttlSeconds?: number; readonly intervalMs?: number };
  /**
   * Called once the server serves, before the in-process controller manager and scheduler start,
   * with what a component beside the server needs to reach it; the controllers do not wait for
   * what it starts (`capstan cluster` starts its node here, so that the node's first Lease renewal
   * does not wait for the controllers to sync).
   */
  readonly serving?: (server: ServingServer) => void;
}

/** What {@link StartOverrides.serving} gets: the server's loopback clients and extra listeners. */
export type ServingServer = Pick<RunningServer, 'loopbackConfig' | 'serveAlsoOn'>;

/** A started server. */
export interface RunningServer {
  /** `https://host:port` for clients on this machine. */
  readonly url: string;
  readonly port: number;
  /** Absolute path of the admin kubeconfig. */
  readonly kubeconfigPath: string;
  readonly app: FastifyInstance;
  /** The store under `--etcd-prefix` (what the resource handlers use). */
  readonly store: Store;
  /** The whole store. */
  readonly rootStore: Store;
  /** Where the data lives (directory or etcd endpoints). */
  readonly storeLocation: string;
  readonly pki: ServerPki;
  readonly lifecycle: ServerLifecycle;
  /** The in-process controller manager, unless `--controllers` selected none. */
  readonly controllerManager: RunningManager | undefined;
  /** The in-process scheduler, unless `--controllers` turned it off (`-scheduler`). */
  readonly scheduler: InProcessScheduler | undefined;
  /** Runs one compaction tick now (tests). */
  compactNow(): Promise<void>;
  /**
   * A client configuration for an in-process component acting as `user` in `groups` (see
   * `loopback.ts`): a fresh client certificate signed by the cluster CA, for this server's URL.
   */
  loopbackConfig(
    user: string,
    groups?: readonly string[],
    opts?: Omit<LoopbackIdentity, 'user' | 'groups'>,
  ): Promise<ClientConfig>;
  /**
   * Serves on `host` too, at the same port, once that address exists (`capstan cluster` serves
   * its pod bridge's gateway address, which it advertises, so that pods reach the server through
   * the `kubernetes` Service while it listens on the loopback). Closed with the server. Resolves
   * with the URL served there.
   * @throws the listener's error (EADDRNOTAVAIL, EADDRINUSE)
   */
  serveAlsoOn(host: string): Promise<string>;
  /** Graceful shutdown (see the module comment). Idempotent; resolves when everything is closed. */
  shutdown(): Promise<void>;
}

/**
 * Listens on `host`:`port` and hands each connection to `app`'s server, as if it had come to its
 * own listener (TLS, connection tracking and the routes are the same).
 */
async function listenAlso(
  app: FastifyInstance,
  host: string,
  port: number,
  into: NetServer[],
): Promise<void> {
  const listener = createNetServer((socket) => app.server.emit('connection', socket));
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  into.push(listener);
}

function listenHost(bindAddress: string): string {
  return bindAddress === '' ? '0.0.0.0' : bindAddress;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** The PKI the server's flags ask for (`--cert-dir`, the serving names and files, `--client-ca-file`). */
export function serverPkiOptions(options: ServerOptions): ServerPkiOptions {
  return {
    certDir: options.certDir,
    ...(options.advertiseAddress === '' ? {} : { advertiseAddress: options.advertiseAddress }),
    bindAddress: options.bindAddress,
    ...(options.tlsCertFile === ''
      ? {}
      : { tlsCertFile: options.tlsCertFile, tlsPrivateKeyFile: options.tlsPrivateKeyFile }),
    ...(options.clientCaFile === '' ? {} : { clientCaFile: options.clientCaFile }),
  };
}

/**
 * Starts a server with `options`.
 * @throws PkiError for unusable certificate files; storage UnavailableError when the store
 *   cannot be opened; the listener's error (EADDRINUSE, EACCES) when it cannot bind.
 */
export async function startServer(
  options: ServerOptions,
  overrides: StartOverrides = {},
): Promise<RunningServer> {
  const log = overrides.log ?? new ServerLog();
  // kube-apiserver runs the RBAC bootstrap hook only with the RBAC authorizer.
  const lifecycle = new ServerLifecycle(
    POST_START_HOOKS.filter((h) => h !== RBAC_BOOTSTRAP_HOOK || options.authorizationModes.includes('RBAC')),
  );
  const registry = loadRegistry(options.apiEnablement);
  await mkdir(options.dataDir, { recursive: true });

  const pkiPromise = ensureServerPki(serverPkiOptions(options));
  const keysPromise = pkiPromise.then(() =>
    loadServiceAccountKeys({
      keyFiles: options.serviceAccount.keyFiles,
      signingKeyFile: options.serviceAccount.signingKeyFile,
      certDir: options.certDir,
    }),
  );
  const encryptionPromise: Promise<EncryptionConfig | undefined> =
    options.encryptionProviderConfig === ''
      ? Promise.resolve(undefined)
      : loadEncryptionConfig(options.encryptionProviderConfig);
  const storePromise: Promise<OpenedStore> =
    overrides.store === undefined
      ? openStore(options)
      : Promise.resolve(
          storeViews(overrides.store, options.etcdPrefix, overrides.store.capabilities.backend),
        );
  const appModule = import('./app.js');
  const [pkiResult, storeResult, appResult, keysResult, encryptionResult] = await Promise.allSettled([
    pkiPromise,
    storePromise,
    appModule,
    keysPromise,
    encryptionPromise,
  ]);
  if (
    pkiResult.status === 'rejected' ||
    storeResult.status === 'rejected' ||
    appResult.status === 'rejected' ||
    keysResult.status === 'rejected' ||
    encryptionResult.status === 'rejected'
  ) {
    if (storeResult.status === 'fulfilled') await storeResult.value.root.close();
    const failed = [pkiResult, storeResult, appResult, keysResult, encryptionResult].find(
      (r) => r.status === 'rejected',
    );
    throw (failed as PromiseRejectedResult).reason;
  }
  startupTrace('loaded');
  const { buildApp } = appResult.value;
  const pki = pkiResult.value;
  const opened = storeResult.value;

  let port = 0;
  const advertised = options.advertiseAddress !== '' ? options.advertiseAddress : '';
  const connections = new ConnectionTracker();
  // What `componentstatuses` reports as running here; set once each component has started.
  const inProcess: InProcessComponents = { controllerManager: false, scheduler: false };
  let app: FastifyInstance;
  try {
    app = buildApp({
      inProcess,
      options,
      registry,
      store: opened.resources,
      lifecycle,
      tls: {
        certPem: pki.serving.certPem,
        keyPem: pki.serving.keyPem,
        clientCaPems: pki.clientCaPems,
        clusterCaPem: pki.ca.certPem,
        ...(options.tlsCertFile === ''
          ? {}
          : { certFile: options.tlsCertFile, keyFile: options.tlsPrivateKeyFile }),
      },
      version: versionInfo(packageVersion()),
      connections,
      serverAddress: () => {
        const host =
          advertised !== '' ? advertised : new URL(localServerUrl(options.bindAddress, port)).hostname;
        return `${host}:${port}`;
      },
      log,
      // Test hook of the authorization matrix (test/authz): plants a known RBAC evaluation bug.
      ...(process.env['CAPSTAN_AUTHZ_BUG'] === undefined
        ? {}
        : { plantedAuthzBug: process.env['CAPSTAN_AUTHZ_BUG'] }),
      // Test hook of test/authz/authorization-config.test.ts: look at --authorization-config often.
      ...(process.env['CAPSTAN_AUTHZ_CONFIG_RELOAD_MS'] === undefined
        ? {}
        : { authorizationConfigReloadMs: Number(process.env['CAPSTAN_AUTHZ_CONFIG_RELOAD_MS']) }),
      ...(overrides.startControllers === undefined ? {} : { startControllers: overrides.startControllers }),
      ...(overrides.deprecations === undefined ? {} : { deprecations: overrides.deprecations }),
      ...(overrides.endpointLease === undefined ? {} : { endpointLease: overrides.endpointLease }),
      serviceAccounts: { keys: keysResult.value, caPem: pki.servingTrustPem },
      ...(encryptionResult.value === undefined ? {} : { encryption: encryptionResult.value }),
    });
  } catch (err) {
    await opened.root.close();
    throw err;
  }

  traceFirstRequests(app);
  startupTrace('built');
  let compactor: Compactor | undefined;
  const extraListeners: NetServer[] = [];
  try {
    await app.listen({ host: listenHost(options.bindAddress), port: options.securePort });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('the listener has no TCP address');
    port = address.port;
    startupTrace('listening');
    // The work that needs the bound port (the kubernetes Service, this server's endpoints and
    // identity lease) runs beside the post-start hooks, as kube's bootstrap controller does: it
    // does not hold /healthz and /readyz back. startServer still resolves only once it is done.
    const listening = lifecycle
      .listening(port)
      .catch((err: unknown) => log.error('reconciling the kubernetes Service failed', err));
    compactor = startCompactor(opened.root, options.etcdCompactionIntervalMs, (m, e) => log.error(m, e));
    const url = localServerUrl(options.bindAddress, port);
    const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
    const kubeconfigWritten = writeKubeconfig(kubeconfigPath, {
      server: url,
      caPem: pki.servingTrustPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
    });
    for (const hook of lifecycle.postStartHooks()) {
      if (!lifecycle.isHookClaimed(hook)) lifecycle.completeHook(hook);
    }
    lifecycle.markStarted();
    startupTrace('started');
    const loopback: RunningServer['loopbackConfig'] = (user, groups = [], opts = {}) =>
      loopbackConfig({ url, ca: pki.ca, servingTrustPem: pki.servingTrustPem }, { ...opts, user, groups });
    const serveAlsoOn = async (host: string): Promise<string> => {
      await listenAlso(app, host, port, extraListeners);
      return servedUrls(host, port)[0] ?? host;
    };
    overrides.serving?.({ loopbackConfig: loopback, serveAlsoOn });
    await Promise.all([listening, kubeconfigWritten]);
    // The manager's share of `--controllers` (canonical names), unless the caller chose.
    const controllers =
      overrides.controllers?.filter((c) => c !== SCHEDULER_CONTROLLER) ??
      CONTROLLERS.filter((c) => options.controllers.enabled(c.name)).map((c) => c.name);
    const schedulerOn =
      overrides.controllers !== undefined
        ? overrides.controllers.includes(SCHEDULER_CONTROLLER)
        : options.controllers.enabled(SCHEDULER_CONTROLLER);
    const controllerManager =
      controllers.length === 0
        ? undefined
        : await startInProcessControllerManager(pki, url, controllers, log, {
            serviceAccountPrivateKeyFile: signingKeyFile(options),
          });
    const scheduler = schedulerOn ? await startInProcessScheduler(pki, url, log) : undefined;
    inProcess.controllerManager = controllerManager !== undefined;
    inProcess.scheduler = scheduler !== undefined;

    let stopping: Promise<void> | undefined;
    const activeCompactor = compactor;
    const shutdown = async (): Promise<void> => {
      lifecycle.beginShutdown();
      await controllerManager?.stop();
      inProcess.controllerManager = false;
      await scheduler?.stop();
      inProcess.scheduler = false;
      await sleep(options.shutdownDelayMs);
      const watchGrace = options.flags.get('shutdown-watch-termination-grace-period') as number;
      const grace = Math.max(options.requestTimeoutMs, watchGrace, 1_000);
      if (options.flags.get('shutdown-send-retry-after') === true) {
        // New requests get 429 + Retry-After while the listener stays open for those in flight.
        lifecycle.stopAcceptingRequests();
        await connections.requestsDrained(grace);
      }
      for (const listener of extraListeners) listener.close();
      const closing = app.close();
      connections.beginDrain(watchGrace);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        closing.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), grace);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        log.warn(
          `shutdown: not closed after ${grace}ms (${connections.openConnections} connections still open); closing them`,
        );
        connections.destroyAll();
        // A stop never hangs: what still holds the app (an onClose hook) gets a last bound.
        let last: NodeJS.Timeout | undefined;
        const closed = await Promise.race([
          closing.then(() => true),
          new Promise<boolean>((resolve) => {
            last = setTimeout(() => resolve(false), CLOSE_AFTER_DESTROY_MS);
          }),
        ]);
        clearTimeout(last);
        if (!closed) {
          log.error(
            `shutdown: the app did not finish closing ${CLOSE_AFTER_DESTROY_MS}ms after its connections were destroyed; closing the store anyway`,
          );
        }
      }
      await activeCompactor.stop();
      await opened.root.close();
      lifecycle.markStopped();
    };
    return {
      url,
      port,
      kubeconfigPath,
      app,
      store: opened.resources,
      rootStore: opened.root,
      storeLocation: opened.location,
      pki,
      lifecycle,
      controllerManager,
      scheduler,
      compactNow: () => activeCompactor.tick(),
      loopbackConfig: loopback,
      serveAlsoOn,
      shutdown: () => (stopping ??= shutdown()),
    };
  } catch (err) {
    await compactor?.stop();
    for (const listener of extraListeners) listener.close();
    await app.close().catch(() => undefined);
    await opened.root.close();
    throw err;
  }
}

/**
 * The file of the key the server signs service-account tokens with, for the in-process token
 * controller: `--service-account-signing-key-file`, else the default key in the cert dir when no
 * `--service-account-key-file` is given, else the first key file (which then signs when it holds
 * a private key, as envtest passes one file to both flags).
 */
function signingKeyFile(options: ServerOptions): string {
  const sa = options.serviceAccount;
  if (sa.signingKeyFile !== '') return sa.signingKeyFile;
  return sa.keyFiles[0] ?? join(options.certDir, 'sa.key');
}
