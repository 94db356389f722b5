/**
 * The server's health checks, named as kube-apiserver names them (spec "Health endpoints"):
 * `ping`, `log`, `etcd` (the backing store, whichever backend it is), one
 * `poststarthook/<name>` per post-start hook, `autoregister-completion`, and `shutdown` in
 * `/readyz` only.
 */
import type { Store } from '../../storage/interface.js';
import type { HealthCheck, HealthEndpoints } from '../http/health.js';
import type { ServerLifecycle } from './lifecycle.js';

/** A check timed out; the reason is logged, never sent. */
export class HealthCheckTimeoutError extends Error {
  readonly code = 'HEALTH_CHECK_TIMEOUT';
  constructor(name: string, ms: number) {
    super(`${name} check timed out after ${ms}ms`);
    this.name = 'HealthCheckTimeoutError';
  }
}

function withTimeout(name: string, ms: number, work: () => Promise<void>): Promise<void> {
  if (ms <= 0) return work();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new HealthCheckTimeoutError(name, ms)), ms);
    work().then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** What the checks look at. */
export interface HealthCheckDeps {
  readonly store: Store;
  readonly lifecycle: ServerLifecycle;
  /** `--etcd-healthcheck-timeout` (healthz, livez) and `--etcd-readycheck-timeout` (readyz). */
  readonly storeHealthTimeoutMs: number;
  readonly storeReadyTimeoutMs: number;
  /** `--livez-grace-period`: boot-sequence checks pass in `/livez` this long after start. */
  readonly livezGraceMs?: number;
  /** The clock (tests); default `Date.now`. */
  readonly now?: () => number;
}

/** The checks of `/healthz`, `/livez` and `/readyz`. */
export function serverHealthChecks(deps: HealthCheckDeps): HealthEndpoints {
  const ping: HealthCheck = { name: 'ping', check: () => undefined };
  // kube's `log` check verifies its log flusher; Capstan logs synchronously, nothing can stall.
  const log: HealthCheck = { name: 'log', check: () => undefined };
  const storeCheck = (timeoutMs: number): HealthCheck => ({
    name: 'etcd',
    check: () => withTimeout('etcd', timeoutMs, () => deps.store.checkHealth()),
  });
  const hooks: HealthCheck[] = deps.lifecycle.postStartHooks().map((hook) => ({
    name: `poststarthook/${hook}`,
    check: () => {
      if (!deps.lifecycle.isHookComplete(hook)) throw new Error('not finished');
    },
  }));
  const autoregister: HealthCheck = {
    name: 'autoregister-completion',
    check: () => {
      if (deps.lifecycle.phase === 'starting') throw new Error('missing APIService registrations');
    },
  };
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => {
      const phase = deps.lifecycle.phase;
      if (phase === 'shuttingDown' || phase === 'stopped') throw new Error('process is shutting down');
    },
  };
  const common = (timeoutMs: number): HealthCheck[] => [
    ping,
    log,
    storeCheck(timeoutMs),
    ...hooks,
    autoregister,
  ];
  // kube's delayedHealthCheck: within the grace period a boot-sequence check counts as passed.
  const graceMs = deps.livezGraceMs ?? 0;
  const now = deps.now ?? Date.now;
  const delayed = (c: HealthCheck): HealthCheck => ({
    name: c.name,
    check: () => (now() - deps.lifecycle.startedAtMs < graceMs ? undefined : c.check()),
  });
  const bootSequence = new Set<HealthCheck>([...hooks, autoregister]);
  const livez = common(deps.storeHealthTimeoutMs).map((c) =>
    graceMs > 0 && bootSequence.has(c) ? delayed(c) : c,
  );
  return {
    healthz: common(deps.storeHealthTimeoutMs),
    livez,
    readyz: [...common(deps.storeReadyTimeoutMs), shutdown],
  };
}
