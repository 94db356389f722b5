/**
 * What every controller is given when it starts, and how it describes itself to the controller
 * manager. A controller is a folder `src/controllers/<name>/` exporting one
 * {@link ControllerDescriptor}; `src/controller-manager/registry.ts` lists the descriptors.
 *
 * The controller owns its work queues and workers; it registers informer handlers in `start`,
 * returns once its loops are running (never waits for them), and stops every loop when
 * `ctx.signal` aborts. The manager starts the shared informers after every enabled controller's
 * `start` returned, so handlers registered in `start` see the initial list; a controller waits
 * for `ctx.informers.waitForSync(ctx.signal)` before its workers touch the caches.
 */
import type { Client, SharedInformerFactory, TypedObject } from '../client/index.js';
import type { ControllersConfig } from './config.js';

/** Log lines of one controller (prefixed with its name by the manager). */
export interface ControllerLog {
  info(message: string): void;
  warn(message: string): void;
  /** A failure: the message says what was being done, `err` why it failed. */
  error(message: string, err?: unknown): void;
}

/**
 * Where a controller reports events: the client's `EventRecorder` (events.k8s.io/v1 with series
 * aggregation) satisfies it. Never throws; failures are logged.
 */
export interface EventSink {
  event(
    regarding: TypedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): void;
}

/** Everything a controller may use. Nothing else of the process is reachable from it. */
export interface ControllerContext {
  /** The controller's name (kube's: `deployment`, `garbage-collector`, ...). */
  readonly name: string;
  /**
   * The process's shared informers (one list+watch per resource, under the manager's own
   * identity, as kube's `shared-informers` client).
   */
  readonly informers: SharedInformerFactory;
  /**
   * The client writes go through: with `--use-service-account-credentials`, the identity
   * `system:serviceaccount:kube-system:<serviceAccount>` (token requested for it); otherwise the
   * manager's own.
   */
  readonly client: Client;
  /** An event recorder reporting as `component` (kube's: `deployment-controller`, ...). */
  eventRecorder(component: string): EventSink;
  /** The parsed flags (kube's KubeControllerManagerConfiguration). */
  readonly config: ControllersConfig;
  readonly log: ControllerLog;
  /** Aborted when the controller must stop (shutdown, lost leadership). */
  readonly signal: AbortSignal;
}

/** One controller as the manager knows it. */
export interface ControllerDescriptor {
  /**
   * kube-controller-manager v1.33's canonical name (`cmd/kube-controller-manager/names`:
   * `deployment-controller`, `garbage-collector-controller`, ...), used by `--controllers`.
   */
  readonly name: string;
  /** Older names `--controllers` still accepts (kube's aliases: `deployment`, `garbagecollector`, ...). */
  readonly aliases?: readonly string[];
  /** Off unless named in `--controllers` (kube's `bootstrapsigner`, `tokencleaner`, ...). */
  readonly disabledByDefault?: boolean;
  /**
   * The service account the controller acts as with `--use-service-account-credentials`
   * (kube's `<x>-controller` in kube-system, bound to `system:controller:<x>-controller`).
   */
  readonly serviceAccount: string;
  /**
   * Acts as the manager itself even with `--use-service-account-credentials` (kube's token
   * controller, started with the root client builder: the service-account credentials of the
   * others may depend on it).
   */
  readonly rootClient?: boolean;
  /** Registers handlers and starts the controller's workers; returns once they run. */
  start(ctx: ControllerContext): void | Promise<void>;
}
