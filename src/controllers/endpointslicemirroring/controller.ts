/**
 * The EndpointSlice mirroring controller, as kube's `pkg/controller/endpointslicemirroring`:
 * Endpoints of a Service without a selector (custom Endpoints, kept by their owner rather than
 * the endpoints controller) are mirrored into EndpointSlices labelled
 * `endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io` and
 * `kubernetes.io/service-name`, owned by the Endpoints. Endpoints labelled
 * `endpointslice.kubernetes.io/skip-mirror: "true"` or carrying a leader-election annotation, of
 * a missing Service, or of a Service with a selector have their mirrored slices removed.
 * Invalid IPs and addresses over `--mirroring-max-endpoints-per-subset` are skipped with kube's
 * `InvalidIPAddress` / `TooManyAddressesToMirror` warning events on the Endpoints.
 *
 * Like the EndpointSlice controller, a sync that wrote waits until the slice cache shows its
 * writes before the next sync of that Endpoints (kube's endpointSliceTracker).
 */
import type { Endpoints, Service } from '../../api/types/core-v1.js';
import type { EndpointSlice } from '../../api/types/discovery-v1.js';
import {
  ENDPOINTS,
  ENDPOINT_SLICES,
  SERVICES,
  WorkQueue,
  defaultControllerRateLimiter,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../endpointslice/plan.js';
import { SKIP_MIRROR_LABEL } from '../endpoints/desired.js';
import { keyOf, typed } from '../shared/meta.js';
import { SliceReconciler } from '../shared/slice-reconciler.js';
import { desiredMirror } from './desired.js';
import { MIRRORING_CONTROLLER_NAME, planMirror } from './plan.js';
import { startWorkers } from '../shared/workers.js';

/** Endpoints that take part in leader election (the old lock) are never mirrored. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** How soon an Endpoints is looked at again while the slice cache catches up (ms). */
const CACHE_WAIT_MS = 100;

/** kube's `shouldMirror`. */
export function shouldMirror(ep: Endpoints | undefined): boolean {
  if (ep === undefined) return false;
  return (
    ep.metadata.labels?.[SKIP_MIRROR_LABEL] !== 'true' &&
    ep.metadata.annotations?.[LEADER_ANNOTATION] === undefined
  );
}

function mine(s: EndpointSlice): boolean {
  return s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME;
}

/** One running mirroring controller. */
export class EndpointSliceMirroringController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #endpoints: SharedInformer<Endpoints>;
  readonly #services: SharedInformer<Service>;
  readonly #slices: SharedInformer<EndpointSlice>;
  readonly #recorder: EventSink;
  readonly #maxPerSubset: number;
  readonly #workers: number;
  readonly #batchMs: number;
  readonly #reconciler: SliceReconciler;

  /** @throws Error when `--mirroring-max-endpoints-per-subset` is outside 1..1000. */
  constructor(ctx: ControllerContext) {
    const max = Number(ctx.config.flags.get('mirroring-max-endpoints-per-subset') ?? 1000);
    if (!Number.isInteger(max) || max < 1 || max > 1000) {
      throw new Error(`--mirroring-max-endpoints-per-subset must be between 1 and 1000, got ${String(max)}`);
    }
    this.#maxPerSubset = max;
    this.#workers = Math.max(
      1,
      Number(ctx.config.flags.get('mirroring-concurrent-service-endpoint-syncs') ?? 5),
    );
    this.#batchMs = Number(ctx.config.flags.get('mirroring-endpointslice-updates-batch-period') ?? 0);
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#endpoints = ctx.informers.informer<Endpoints>(ENDPOINTS);
    this.#services = ctx.informers.informer<Service>(SERVICES);
    this.#slices = ctx.informers.informer<EndpointSlice>(ENDPOINT_SLICES);
    this.#reconciler = new SliceReconciler(ctx.client.resource<EndpointSlice>(ENDPOINT_SLICES), (ns, name) =>
      this.#slices.store.get(`${ns}/${name}`),
    );
    this.#recorder = ctx.eventRecorder('endpoint-slice-mirroring-controller');
    const add = (o: { metadata: Endpoints['metadata'] }): void => this.#queue.add(keyOf(o.metadata));
    const noSelector = (s: Service): boolean => s.spec?.selector === undefined;
    this.#services.addHandler({
      add: (s) => noSelector(s) && add(s),
      update: (o, s) => noSelector(o) !== noSelector(s) && add(s),
      delete: (s) => noSelector(s) && add(s),
    });
    this.#endpoints.addHandler({
      add: (e) => shouldMirror(e) && add(e),
      update: (o, e) => (shouldMirror(o) || shouldMirror(e)) && add(e),
      delete: (e) => shouldMirror(e) && add(e),
    });
    const sliceKey = (s: EndpointSlice): void => {
      const service = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (service === undefined || service === '') return;
      this.#queue.addAfter(`${s.metadata.namespace ?? ''}/${service}`, this.#batchMs);
    };
    this.#slices.addHandler({
      add: (s) => mine(s) && sliceKey(s),
      update: (o, s) => {
        if (o.metadata.labels?.[SERVICE_NAME_LABEL] !== s.metadata.labels?.[SERVICE_NAME_LABEL]) {
          sliceKey(o);
          sliceKey(s);
        } else if (mine(o) || mine(s)) sliceKey(s);
      },
      delete: (s) => mine(s) && sliceKey(s),
    });
    this.#slices.store.addIndex('mirrored', (s) =>
      mine(s) && (s.metadata.labels?.[SERVICE_NAME_LABEL] ?? '') !== ''
        ? [`${s.metadata.namespace ?? ''}/${s.metadata.labels?.[SERVICE_NAME_LABEL] ?? ''}`]
        : [],
    );
  }

  /** Starts the workers once the caches are synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'endpointslice mirroring', {
      queue: this.#queue,
      workers: this.#workers,
      sync: (key) => this.sync(key),
    });
  }

  /** Mirrors one Endpoints (`namespace/name`), or removes its mirror. */
  async sync(key: string): Promise<void> {
    if (this.#reconciler.behind(key)) {
      this.#queue.addAfter(key, CACHE_WAIT_MS);
      return;
    }
    const existing = this.#slices.store.byIndex('mirrored', key);
    const endpoints = this.#endpoints.store.get(key);
    const service = this.#services.store.get(key);
    if (
      endpoints === undefined ||
      !shouldMirror(endpoints) ||
      service === undefined ||
      service.spec?.selector !== undefined
    ) {
      await this.#reconciler.apply(key, { create: [], update: [], delete: existing }, { owner: 'Endpoints' });
      return;
    }
    const desired = desiredMirror(endpoints, this.#maxPerSubset);
    const regarding = typed(endpoints, 'v1', 'Endpoints');
    if (desired.invalidAddresses > 0) {
      this.#recorder.event(
        regarding,
        'Warning',
        'InvalidIPAddress',
        'InvalidIPAddress',
        `Skipped ${desired.invalidAddresses} invalid IP addresses when mirroring to EndpointSlices`,
      );
    }
    if (desired.skippedAddresses > desired.invalidAddresses) {
      this.#recorder.event(
        regarding,
        'Warning',
        'TooManyAddressesToMirror',
        'TooManyAddressesToMirror',
        `A max of ${this.#maxPerSubset} addresses can be mirrored to EndpointSlices per Endpoints subset. ${desired.skippedAddresses} addresses were skipped`,
      );
    }
    const plan = planMirror(endpoints, existing, desired, this.#maxPerSubset);
    // No new slices for Endpoints on their way out.
    await this.#reconciler.apply(key, plan, {
      owner: 'Endpoints',
      create: endpoints.metadata.deletionTimestamp === undefined,
    });
  }
}
