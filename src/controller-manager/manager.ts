/**
 * The controller manager: picks the controllers `--controllers` enables, waits for leadership
 * (`--leader-elect`), then gives each enabled controller its context and starts the shared
 * informers. Losing leadership stops every controller; then the manager campaigns again (kube's
 * manager exits then, for its supervisor to restart it). A controller whose `start` throws is logged and skipped; the others run.
 *
 * States: `waiting` (for the lease) → `running` → `stopped`; `running` → `waiting` on a lost lease.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Client, podSharingTransform, SharedInformerFactory, type ClientConfig } from '../client/index.js';
import { runLeaderElection } from './leader.js';
import { EventRecorders } from './events.js';
import type { ControllerContext, ControllerDescriptor, ControllerLog } from '../controllers/context.js';
import { CONTROLLERS } from './registry.js';
import { parseControllerSelection } from '../flags/controllers.js';
import { serviceAccountIdentities, sharedIdentity, type ControllerClients } from './identity.js';
import type { ManagerOptions } from './options.js';

/** Log sink of the manager (one line each). */
export interface ManagerLog {
  info(line: string): void;
  warn(line: string): void;
  error(line: string, err?: unknown): void;
}

/** What {@link startControllerManager} needs. */
export interface ManagerDeps {
  /** The manager's own identity (`system:kube-controller-manager`). */
  readonly clientConfig: ClientConfig;
  readonly options: ManagerOptions;
  readonly log: ManagerLog;
  /** Instead of the registry (tests). */
  readonly controllers?: readonly ControllerDescriptor[];
}

/** The manager's state (see the module comment). */
export type ManagerState = 'waiting' | 'running' | 'stopped';

/** A started manager. */
export interface RunningManager {
  /** Canonical names of the enabled controllers. */
  readonly enabled: readonly string[];
  state(): ManagerState;
  /** Controllers whose `start` returned. */
  started(): readonly string[];
  /** Stops the controllers, the informers and leader election. Idempotent. */
  stop(): Promise<void>;
}

const USER_AGENT = `capstan-controller-manager/v1.33 (${process.platform}/${process.arch})`;

/** How long a stop waits for the informers. */
const STOP_GRACE_MS = 5_000;

/** True when `p` settled within `ms`. */
async function bounded(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function controllerLog(log: ManagerLog, name: string): ControllerLog {
  return {
    info: (m) => log.info(`${name}: ${m}`),
    warn: (m) => log.warn(`${name}: ${m}`),
    error: (m, err) => log.error(`${name}: ${m}`, err),
  };
}

/**
 * Starts the manager. Returns at once (controllers start when leadership is acquired).
 * @throws FlagError when `--controllers` names an unknown controller.
 */
export function startControllerManager(deps: ManagerDeps): RunningManager {
  const { options, log } = deps;
  const known = deps.controllers ?? CONTROLLERS;
  const selection = parseControllerSelection(options.controllers, known);
  const selected = known.filter((c) => selection.enabled(c.name));
  const rootConfig: ClientConfig = {
    userAgent: USER_AGENT,
    ...deps.clientConfig,
    qps: options.qps,
    burst: options.burst,
  };
  const root = new Client(rootConfig);
  const stopAll = new AbortController();
  // Every controller and informer listens for the stop.
  setMaxListeners(0, stopAll.signal);
  let state: ManagerState = 'waiting';
  const started: string[] = [];

  const runControllers = async (signal: AbortSignal): Promise<void> => {
    setMaxListeners(0, signal);
    state = 'running';
    started.length = 0;
    // Without managedFields, as kube-controller-manager's informers (no controller reads them),
    // and pods' repeated parts held once (src/client/pod-sharing.ts).
    const informers = new SharedInformerFactory(root, {
      resyncMs: 0,
      log: (m, e) => log.error(m, e),
      transform: podSharingTransform(),
    });
    let identities: ControllerClients | undefined;
    const recorders = new EventRecorders((m, e) => log.error(m, e));
    try {
      identities = options.useServiceAccountCredentials
        ? await serviceAccountIdentities(root, rootConfig, (m, e) => log.error(m, e))
        : sharedIdentity(root);
      for (const c of selected) {
        if (signal.aborted) break;
        try {
          const client = await identities.clientFor(
            options.useServiceAccountCredentials && c.rootClient !== true ? c.serviceAccount : undefined,
          );
          const ctx: ControllerContext = {
            name: c.name,
            informers,
            client,
            eventRecorder: (component) => recorders.for(client, component),
            config: options.config,
            log: controllerLog(log, c.name),
            signal,
          };
          await c.start(ctx);
          started.push(c.name);
          log.info(`started ${c.name}`);
        } catch (err) {
          log.error(`starting ${c.name} failed; it does not run`, err);
        }
        if (options.controllerStartIntervalMs > 0) {
          await new Promise((r) => setTimeout(r, options.controllerStartIntervalMs));
        }
      }
      informers.start();
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      // A stop never hangs: informers stopped during their first list may not settle at once.
      const stopped = await bounded(
        informers.stop().catch((err: unknown) => log.error('stopping the informers', err)),
        STOP_GRACE_MS,
      );
      if (!stopped) log.warn(`the informers did not stop within ${STOP_GRACE_MS} ms; going on`);
      await recorders.close().catch((err: unknown) => log.error('flushing the events', err));
      await identities?.close().catch((err: unknown) => log.error('closing the controller clients', err));
      state = stopAll.signal.aborted ? 'stopped' : 'waiting';
    }
  };

  // The controllers of the current term (with leader election, a term ends when the lease is lost).
  let term: Promise<void> = Promise.resolve();
  let running: Promise<void>;
  // As kube-controller-manager, leader election has a client of its own: its renewals never
  // queue behind the controllers' requests in the client-side rate limiter (a burst of creates
  // at --kube-api-qps would otherwise hold a renewal past its deadline and end the term).
  let electionClient: Client | undefined;
  if (options.leaderElection.enabled) {
    const le = options.leaderElection;
    const identity = `${hostname()}_${randomUUID()}`;
    const election = new Client({ ...rootConfig, userAgent: `${rootConfig.userAgent}/leader-election` });
    electionClient = election;
    running = (async () => {
      // A lost lease ends the term; once its controllers have stopped, the manager campaigns
      // again. (kube's manager exits there for its supervisor to restart it; nothing restarts a
      // manager inside `capstan server`, and one that only waited would never lead again.)
      while (!stopAll.signal.aborted) {
        await runLeaderElection(
          election,
          le,
          identity,
          (signal) => {
            log.info(`acquired lease ${le.namespace}/${le.name}`);
            term = runControllers(signal).catch((err: unknown) => log.error('running the controllers', err));
          },
          () => {
            if (!stopAll.signal.aborted)
              log.warn(`lost lease ${le.namespace}/${le.name}: controllers stopped`);
          },
          stopAll.signal,
          (m, e) => log.warn(`${m}: ${describe(e)}`),
        );
        await term;
      }
    })();
  } else {
    running = runControllers(stopAll.signal);
  }
  running = running.catch((err: unknown) => log.error(`controller manager failed: ${describe(err)}`, err));

  let stopping: Promise<void> | undefined;
  return {
    enabled: selected.map((c) => c.name),
    state: () => state,
    started: () => [...started],
    stop: () =>
      (stopping ??= (async () => {
        stopAll.abort();
        await running;
        await term;
        state = 'stopped';
        await electionClient?.close();
        await root.close();
      })()),
  };
}
