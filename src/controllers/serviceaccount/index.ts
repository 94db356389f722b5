/**
 * The `serviceaccount-controller` (alias `serviceaccount`), kube's
 * `pkg/controller/serviceaccount/serviceaccounts_controller.go`: every Active namespace holds a
 * `default` ServiceAccount. A namespace added or changed, or a `default` account deleted, queues
 * its namespace; the sync creates the account when the informer does not hold it. A create refused
 * because the namespace is terminating (or already gone) is not an error; AlreadyExists neither.
 */
import type { Namespace, ServiceAccount } from '../../api/types/core-v1.js';
import {
  NAMESPACES,
  SERVICE_ACCOUNTS,
  defaultControllerRateLimiter,
  isAlreadyExists,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { namespaceActive, namespaceGoneOrTerminating } from '../shared/namespaces.js';
import { startWorkers } from '../shared/workers.js';

/** The accounts kube's controller keeps in every namespace (`--service-account-...` has no flag). */
export const SERVICE_ACCOUNTS_TO_ENSURE: readonly string[] = ['default'];

/** One running controller. */
export class ServiceAccountsController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #namespaces: SharedInformer<Namespace>;
  readonly #accounts: SharedInformer<ServiceAccount>;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#namespaces = ctx.informers.informer<Namespace>(NAMESPACES);
    this.#accounts = ctx.informers.informer<ServiceAccount>(SERVICE_ACCOUNTS);
    const nsSeen = (ns: Namespace): void => this.#queue.add(ns.metadata.name ?? '');
    this.#namespaces.addHandler({ add: nsSeen, update: (_, ns) => nsSeen(ns) });
    this.#accounts.addHandler({
      delete: (sa) => {
        if (SERVICE_ACCOUNTS_TO_ENSURE.includes(sa.metadata.name ?? '')) {
          this.#queue.add(sa.metadata.namespace ?? '');
        }
      },
    });
  }

  /** Starts the worker once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'serviceaccount', {
      queue: this.#queue,
      workers: 1,
      sync: (ns) => this.sync(ns),
    });
  }

  /** Creates the missing accounts of namespace `name`. */
  async sync(name: string): Promise<void> {
    if (name === '') return;
    const ns = this.#namespaces.store.get(name);
    if (ns === undefined || !namespaceActive(ns)) return;
    const failures: string[] = [];
    for (const sa of SERVICE_ACCOUNTS_TO_ENSURE) {
      if (this.#accounts.store.get(`${name}/${sa}`) !== undefined) continue;
      try {
        await this.#ctx.client
          .resource<ServiceAccount>(SERVICE_ACCOUNTS)
          .create(
            { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: name } },
            { namespace: name },
          );
      } catch (err) {
        if (isAlreadyExists(err) || namespaceGoneOrTerminating(err)) continue;
        failures.push(`${sa}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0) {
      throw new Error(`creating service accounts in namespace ${name}: ${failures.join('; ')}`);
    }
  }
}

/** Registry entry. */
export const serviceAccountController: ControllerDescriptor = {
  name: 'serviceaccount-controller',
  aliases: ['serviceaccount'],
  serviceAccount: 'service-account-controller',
  start(ctx) {
    new ServiceAccountsController(ctx).start();
  },
};
