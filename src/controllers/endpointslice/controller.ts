/**
 * The EndpointSlice controller, as kube's `pkg/controller/endpointslice`: for every Service
 * with a selector, EndpointSlices (labelled `kubernetes.io/service-name` and managed by
 * `endpointslice-controller.k8s.io`, owned by the Service) listing the selected pods by address
 * type and resolved port set, at most `--max-endpoints-per-slice` endpoints each, with a
 * placeholder slice when there are none. Slices of deleted Services go with their owner (the
 * garbage collector).
 *
 * The slice cache may lag the controller's own writes: a sync that wrote remembers what it
 * wrote, and the next sync of that Service waits until the cache shows it (kube's
 * EndpointSliceTracker), so a slow cache never makes it create a second set of slices.
 */
import type { Node, Pod, Service } from '../../api/types/core-v1.js';
import type { EndpointSlice } from '../../api/types/discovery-v1.js';
import {
  ENDPOINT_SLICES,
  NODES,
  PODS,
  SERVICES,
  WorkQueue,
  defaultControllerRateLimiter,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { concurrency } from '../config.js';
import { keyOf, typed } from '../shared/meta.js';
import { SliceReconciler } from '../shared/slice-reconciler.js';
import { desiredGroups } from './desired.js';
import { CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, planSlices } from './plan.js';
import { hasEndpointsFromSelector, podsOfService, servicesOfPod } from './services.js';
import { TriggerTimeTracker } from './trigger-time.js';
import { startWorkers } from '../shared/workers.js';

/** How soon a service is looked at again while the slice cache catches up (ms). */
const CACHE_WAIT_MS = 100;

/** One running EndpointSlice controller. */
export class EndpointSliceController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #services: SharedInformer<Service>;
  readonly #pods: SharedInformer<Pod>;
  readonly #nodes: SharedInformer<Node>;
  readonly #slices: SharedInformer<EndpointSlice>;
  readonly #recorder: EventSink;
  readonly #tracker = new TriggerTimeTracker();
  readonly #reconciler: SliceReconciler;
  readonly #maxPerSlice: number;

  /** @throws Error when `--max-endpoints-per-slice` is outside 1..1000 (a start-up error). */
  constructor(ctx: ControllerContext) {
    const max = Number(ctx.config.flags.get('max-endpoints-per-slice') ?? 100);
    if (!Number.isInteger(max) || max < 1 || max > 1000) {
      throw new Error(`--max-endpoints-per-slice must be between 1 and 1000, got ${String(max)}`);
    }
    this.#maxPerSlice = max;
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#services = ctx.informers.informer<Service>(SERVICES);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#nodes = ctx.informers.informer<Node>(NODES);
    this.#slices = ctx.informers.informer<EndpointSlice>(ENDPOINT_SLICES);
    this.#reconciler = new SliceReconciler(ctx.client.resource<EndpointSlice>(ENDPOINT_SLICES), (ns, name) =>
      this.#slices.store.get(`${ns}/${name}`),
    );
    this.#recorder = ctx.eventRecorder('endpoint-slice-controller');
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
    // A node's arrival or zone change can change endpoints (a pod on an unknown node is left out).
    const nodeChanged = (): void => {
      for (const s of this.#services.store.list()) if (hasEndpointsFromSelector(s)) enqueue(s);
    };
    this.#nodes.addHandler({
      add: nodeChanged,
      update: (old, cur) => {
        if (
          old.metadata.labels?.['topology.kubernetes.io/zone'] !==
          cur.metadata.labels?.['topology.kubernetes.io/zone']
        )
          nodeChanged();
      },
    });
    const sliceChanged = (s: EndpointSlice): void => {
      if (s.metadata.labels?.[MANAGED_BY_LABEL] !== CONTROLLER_NAME) return;
      const service = s.metadata.labels[SERVICE_NAME_LABEL];
      if (service !== undefined) this.#queue.add(`${s.metadata.namespace ?? ''}/${service}`);
    };
    this.#slices.addHandler({ add: sliceChanged, update: (_o, s) => sliceChanged(s), delete: sliceChanged });
    this.#slices.store.addIndex('service', (s) =>
      s.metadata.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME &&
      s.metadata.labels[SERVICE_NAME_LABEL] !== undefined
        ? [`${s.metadata.namespace ?? ''}/${s.metadata.labels[SERVICE_NAME_LABEL]}`]
        : [],
    );
  }

  /** Starts the workers once the caches are synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'endpointslice', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'service-endpoint', 5),
      sync: (key) => this.sync(key),
    });
  }

  /** Reconciles the slices of one Service (`namespace/name`). */
  async sync(key: string): Promise<void> {
    if (this.#reconciler.behind(key)) {
      this.#queue.addAfter(key, CACHE_WAIT_MS);
      return;
    }
    const service = this.#services.store.get(key);
    if (service === undefined) {
      this.#tracker.forget(key);
      return;
    }
    if (!hasEndpointsFromSelector(service)) return;
    const pods = podsOfService(this.#pods.store, service);
    const { groups, missingNode } = desiredGroups(service, pods, (name) => this.#nodes.store.get(name));
    const existing = this.#slices.store.byIndex('service', key);
    const trigger = this.#tracker.compute(key, service, pods);
    const plan = planSlices(service, existing, groups, this.#maxPerSlice, trigger);
    try {
      await this.#reconciler.apply(key, plan, { owner: 'Service' });
    } catch (err) {
      this.#recorder.event(
        typed(service, 'v1', 'Service'),
        'Warning',
        'FailedToUpdateEndpointSlices',
        'FailedToUpdateEndpointSlices',
        `Error updating Endpoint Slices for Service ${key}: ${err instanceof Error ? err.message : String(err)}`,
      );
      throw err;
    }
    if (missingNode)
      throw new Error(`a pod of Service ${key} is on a node not known yet; synced again later`);
  }
}
