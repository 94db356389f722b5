/**
 * The Endpoints controller, as kube's `pkg/controller/endpoint`: for every Service with a
 * selector, an Endpoints object of the same name listing the selected pods' addresses (ready
 * and not ready) per port set, truncated at 1000 addresses with
 * `endpoints.kubernetes.io/over-capacity: truncated`. The Endpoints of a deleted Service are
 * deleted. Services without a selector (the API server's `default/kubernetes` among them) are
 * never touched.
 */
import type { Endpoints, Pod, Service } from '../../api/types/core-v1.js';
import {
  ENDPOINTS,
  PODS,
  SERVICES,
  WorkQueue,
  defaultControllerRateLimiter,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext } from '../context.js';
import { concurrency } from '../config.js';
import { keyOf, splitKey } from '../shared/meta.js';
import { hasEndpointsFromSelector, podsOfService, servicesOfPod } from '../endpointslice/services.js';
import { TriggerTimeTracker } from '../endpointslice/trigger-time.js';
import { desiredEndpoints } from './desired.js';
import { startWorkers } from '../shared/workers.js';

/** One running Endpoints controller. */
export class EndpointsController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #services: SharedInformer<Service>;
  readonly #pods: SharedInformer<Pod>;
  readonly #endpoints: SharedInformer<Endpoints>;
  readonly #client: ResourceClient<Endpoints>;
  readonly #tracker = new TriggerTimeTracker();

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#services = ctx.informers.informer<Service>(SERVICES);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#endpoints = ctx.informers.informer<Endpoints>(ENDPOINTS);
    this.#client = ctx.client.resource<Endpoints>(ENDPOINTS);
    const enqueue = (s: Service): void => this.#queue.add(keyOf(s.metadata));
    this.#services.addHandler({ add: enqueue, update: (_o, s) => enqueue(s), delete: enqueue });
    const podChanged = (pod: Pod, old?: Pod): void => {
      for (const key of servicesOfPod(this.#services.store, pod, old)) this.#queue.add(key);
    };
    this.#pods.addHandler({
      add: (p) => podChanged(p),
      update: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) podChanged(cur, old);
      },
      delete: (p) => podChanged(p),
    });
    // Someone else changing our Endpoints: put them back.
    this.#endpoints.addHandler({
      update: (_o, e) => {
        const svc = this.#services.store.get(keyOf(e.metadata));
        if (svc !== undefined && hasEndpointsFromSelector(svc)) this.#queue.add(keyOf(e.metadata));
      },
      delete: (e) => {
        const svc = this.#services.store.get(keyOf(e.metadata));
        if (svc !== undefined && hasEndpointsFromSelector(svc)) this.#queue.add(keyOf(e.metadata));
      },
    });
  }

  /** Starts the workers once the caches are synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'endpoints', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'endpoint', 5),
      sync: (key) => this.sync(key),
    });
  }

  /** Reconciles the Endpoints of one Service (`namespace/name`). */
  async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    // The API server owns these (its `kubernetes` Service has no selector anyway).
    if (namespace === 'default' && name === 'kubernetes') return;
    const service = this.#services.store.get(key);
    if (service === undefined) {
      this.#tracker.forget(key);
      if (this.#endpoints.store.get(key) === undefined) return;
      try {
        await this.#client.delete(name, { namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    if (!hasEndpointsFromSelector(service)) return;
    const pods = podsOfService(this.#pods.store, service);
    const current = this.#endpoints.store.get(key);
    const trigger = this.#tracker.compute(key, service, pods);
    const next = desiredEndpoints(service, pods, current, trigger);
    if (next === undefined) return;
    if (current === undefined) {
      delete next.metadata.resourceVersion;
      await this.#client.create(next, { namespace });
    } else {
      await this.#client.update(next, { namespace });
    }
  }
}
