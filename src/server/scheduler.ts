/**
 * The scheduler inside `capstan server`: the same scheduler `capstan scheduler` runs, reaching
 * this server over HTTPS on 127.0.0.1 as `system:kube-scheduler` (a client certificate minted
 * from the server's CA; the bootstrap RBAC policy grants it kube's scheduler roles), with kube's
 * defaults: one `default-scheduler` profile and leader election on `kube-system/kube-scheduler`,
 * so several servers over one store run one scheduler. `--controllers` turns it off (`-scheduler`).
 */
import type { ServerPki } from '../pki/server-pki.js';
import { schedulerConfigFrom } from '../scheduler/config.js';
import { startScheduler } from '../scheduler/run.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ServerLog } from './log.js';
import { loopbackConfig } from './loopback.js';

/** The name of the scheduler in `--controllers`. */
export const SCHEDULER_CONTROLLER = 'scheduler';

/** A running in-process scheduler. */
export interface InProcessScheduler {
  readonly scheduler: Scheduler;
  stop(): Promise<void>;
}

/** Starts the scheduler against this server. */
export async function startInProcessScheduler(
  pki: ServerPki,
  url: string,
  log: ServerLog,
): Promise<InProcessScheduler> {
  const clientConfig = await loopbackConfig(
    { url, ca: pki.ca, servingTrustPem: pki.servingTrustPem },
    { user: 'system:kube-scheduler' },
  );
  const abort = new AbortController();
  const running = startScheduler(
    // The loopback is not a shared network: kube's client limits would only slow it down.
    { ...clientConfig, qps: -1, burst: 0, userAgent: 'capstan-scheduler/v1.33 (in-process)' },
    {
      config: schedulerConfigFrom(undefined),
      log: (line) => log.warn(`scheduler: ${line}`),
      campaignAgain: true,
    },
    abort.signal,
  );
  return {
    scheduler: running.scheduler,
    stop: async () => {
      abort.abort();
      await running.done;
    },
  };
}
