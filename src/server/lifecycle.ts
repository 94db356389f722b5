/**
 * The server's lifecycle as the health checks and long-running requests see it:
 *
 * ```
 * starting --markStarted--> running --beginShutdown--> shuttingDown --markStopped--> stopped
 * ```
 * - post-start hooks complete one by one; their health checks fail until they do;
 * - `beginShutdown` makes `/readyz` fail at once (the `shutdown` check) and aborts
 *   {@link ServerLifecycle.shutdownSignal}, which watches and other long-running requests follow
 *   to end their responses cleanly, so the listener can drain.
 */

/** The post-start hooks kube-apiserver reports in its health output (spec "Health endpoints"). */
import { startupTrace } from './startup-trace.js';
export const POST_START_HOOKS = [
  'start-kube-apiserver-admission-initializer',
  'generic-apiserver-start-informers',
  'start-apiextensions-informers',
  'start-apiextensions-controllers',
  'crd-informer-synced',
  'bootstrap-controller',
  'rbac/bootstrap-roles',
  'scheduling/bootstrap-system-priority-classes',
  'start-cluster-authentication-info-controller',
  'start-kube-aggregator-informers',
  'apiservice-registration-controller',
  'apiservice-status-available-controller',
  'kube-apiserver-autoregistration',
  'apiservice-openapi-controller',
] as const;

/** The post-start hook of the RBAC bootstrap policy. */
export const RBAC_BOOTSTRAP_HOOK = 'rbac/bootstrap-roles';

/** Where a server is in its life; see the module comment for the transitions. */
export type LifecyclePhase = 'starting' | 'running' | 'shuttingDown' | 'stopped';

/** One server's lifecycle; see the module comment. */
export class ServerLifecycle {
  #phase: LifecyclePhase = 'starting';
  #rejectingRequests = false;
  /** When this server began starting (`--livez-grace-period` counts from here). */
  readonly startedAtMs = Date.now();
  readonly #completedHooks = new Set<string>();
  readonly #claimedHooks = new Set<string>();
  readonly #pendingHooks: ReadonlySet<string>;
  readonly #abort = new AbortController();
  readonly #listeningTasks: ((port: number) => Promise<void>)[] = [];

  /** @param hooks names of the post-start hooks this server runs. */
  constructor(hooks: readonly string[] = POST_START_HOOKS) {
    this.#pendingHooks = new Set(hooks);
  }

  get phase(): LifecyclePhase {
    return this.#phase;
  }

  /** Aborted when shutdown begins: long-running requests end their responses. */
  get shutdownSignal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Registers work that needs the bound port (the kubernetes Service's endpoints). */
  onListening(task: (port: number) => Promise<void>): void {
    this.#listeningTasks.push(task);
  }

  /** Runs the {@link onListening} tasks in order, once the listener is bound to `port`. */
  async listening(port: number): Promise<void> {
    for (const task of this.#listeningTasks) await task(port);
  }

  /** Names of every post-start hook, in registration order. */
  postStartHooks(): readonly string[] {
    return [...this.#pendingHooks];
  }

  /**
   * Marks a hook as completed by its owner (e.g. the RBAC bootstrap), not by the server's
   * blanket completion after listening ({@link ServerLifecycle.isHookClaimed}).
   */
  claimHook(name: string): void {
    if (this.#pendingHooks.has(name)) this.#claimedHooks.add(name);
  }

  isHookClaimed(name: string): boolean {
    return this.#claimedHooks.has(name);
  }

  /** Records a finished post-start hook (idempotent; unknown names are ignored). */
  completeHook(name: string): void {
    if (this.#pendingHooks.has(name) && !this.#completedHooks.has(name)) {
      this.#completedHooks.add(name);
      startupTrace(`hook:${name}`);
    }
  }

  isHookComplete(name: string): boolean {
    return this.#completedHooks.has(name);
  }

  /** The listener is up; from `starting` only. */
  markStarted(): void {
    if (this.#phase === 'starting') this.#phase = 'running';
  }

  /** Readiness fails from now on and long-running requests are told to end. Idempotent. */
  beginShutdown(): void {
    if (this.#phase === 'stopped' || this.#phase === 'shuttingDown') return;
    this.#phase = 'shuttingDown';
    this.#abort.abort();
  }

  /**
   * `--shutdown-send-retry-after`: from now on new requests are answered 429 with Retry-After
   * (kube does so once `--shutdown-delay-duration` has elapsed). Idempotent.
   */
  stopAcceptingRequests(): void {
    this.#rejectingRequests = true;
  }

  /** True once {@link ServerLifecycle.stopAcceptingRequests} was called. */
  get rejectingRequests(): boolean {
    return this.#rejectingRequests;
  }

  markStopped(): void {
    this.beginShutdown();
    this.#phase = 'stopped';
  }
}
