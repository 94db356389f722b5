/**
 * Runs a scheduler against an API server: `startScheduler(clientConfig, options, signal)` is what
 * `capstan scheduler` and `capstan server` (in-process, over loopback) both call. With leader
 * election (kube's default) only the holder of the `kube-system/kube-scheduler` Lease schedules;
 * the informers run either way so a new leader starts warm.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClientConfig } from '../client/index.js';
import { Client, LeaderElector, SharedInformerFactory } from '../client/index.js';
import { ClientSchedulerApi } from './api.js';
import { schedulerConfigFrom, type SchedulerConfig } from './config.js';
import { SchedulerInformers } from './informers.js';
import { Scheduler } from './scheduler.js';
import { createSchedulerTransform } from './trim.js';

/** Options of {@link startScheduler}. */
export interface SchedulerRunOptions {
  /** The configuration (default: kube's defaults, one `default-scheduler` profile). */
  readonly config?: SchedulerConfig;
  /** Where errors go (default console.error). */
  readonly log?: (message: string) => void;
  /**
   * After losing the Lease, campaign again (default false: stop, as kube-scheduler exits for its
   * supervisor to restart it). A scheduler inside `capstan server` has no supervisor.
   */
  readonly campaignAgain?: boolean;
  /** Called once the scheduler is built (before sync), e.g. to serve its metrics. */
  readonly onReady?: (scheduler: Scheduler) => void;
}

/** A scheduler started by {@link startScheduler}. */
export interface RunningScheduler {
  readonly scheduler: Scheduler;
  /** Resolves when the scheduler has stopped (after `signal` aborted). */
  readonly done: Promise<void>;
}

/**
 * Builds the scheduler (throwing SchedulerConfigError for an unknown plugin or a bad profile
 * before anything connects), starts its informers and runs it until `signal` aborts.
 */
export function startScheduler(
  clientConfig: ClientConfig,
  options: SchedulerRunOptions,
  signal: AbortSignal,
): RunningScheduler {
  const config = options.config ?? schedulerConfigFrom(undefined);
  const log = options.log ?? ((m: string) => console.error(m));
  const logErr = (m: string, err: unknown): void => {
    const why = err instanceof Error ? err.message : String(err);
    log(err === undefined ? m : `${m}: ${why}`);
  };
  const qps = clientConfig.qps ?? config.clientConnection.qps;
  const burst = clientConfig.burst ?? config.clientConnection.burst;
  const userAgent = clientConfig.userAgent ?? 'capstan-scheduler/v1.33';
  const client = new Client({ ...clientConfig, qps, burst, userAgent });
  // As kube-scheduler's event clientset: the same settings, a rate limit of its own (the
  // recorders apply it), so events and bindings never wait for each other's tokens.
  const eventClient = new Client({ ...clientConfig, qps: -1, userAgent: `${userAgent}/events` });
  // As kube-scheduler, leader election has a client of its own: its renewals never queue behind
  // the scheduler's bindings and events (client-side rate limit and HTTP/2 streams).
  const electionClient = new Client({
    ...clientConfig,
    userAgent: `${clientConfig.userAgent ?? 'capstan-scheduler/v1.33'}/leader-election`,
  });
  // Pods and nodes keep only what the scheduler reads (src/scheduler/trim.ts), other kinds all
  // but managedFields (as kube-scheduler's informers).
  const factory = new SharedInformerFactory(client, { log: logErr, transform: createSchedulerTransform() });
  const informers = new SchedulerInformers(factory);
  const api = new ClientSchedulerApi(client, { client: eventClient, qps, burst }, logErr);
  let scheduler: Scheduler;
  try {
    scheduler = new Scheduler({
      config,
      api,
      lister: informers.lister(),
      currentPod: (key) => informers.pods.store.get(key),
      log,
      ...(process.env['CAPSTAN_SCHEDULER_TRACE'] === '1'
        ? { trace: (m: string) => log(`${new Date().toISOString()} trace: ${m}`) }
        : {}),
    });
  } catch (err) {
    void client.close();
    void eventClient.close();
    void electionClient.close();
    throw err;
  }
  options.onReady?.(scheduler);
  informers.connect(scheduler);
  const done = (async (): Promise<void> => {
    factory.start();
    try {
      await factory.waitForSync(signal);
      const le = config.leaderElection;
      if (!le.leaderElect) {
        await scheduler.run(signal);
        return;
      }
      const identity = `${hostname()}_${randomUUID()}`;
      do {
        let running: Promise<void> | undefined;
        const elector = new LeaderElector({
          client: electionClient,
          namespace: le.resourceNamespace,
          name: le.resourceName,
          identity,
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
          releaseOnCancel: true,
          onStartedLeading: (leading) => {
            // As kube-scheduler's "successfully acquired lease": operators (and the HA fault
            // test) see from the logs which scheduler led when.
            log(`acquired lease ${le.resourceNamespace}/${le.resourceName}`);
            running = scheduler.run(leading).catch((err: unknown) => logErr('scheduler stopped', err));
          },
          onStoppedLeading: () => {
            if (!signal.aborted) log(`lost lease ${le.resourceNamespace}/${le.resourceName}`);
          },
          log: logErr,
        });
        await elector.run(signal);
        await running;
      } while (options.campaignAgain === true && !signal.aborted);
    } catch (err) {
      if (!signal.aborted) logErr('scheduler', err);
    } finally {
      await factory.stop();
      await api.close();
      await client.close();
      await eventClient.close();
      await electionClient.close();
    }
  })();
  return { scheduler, done };
}
