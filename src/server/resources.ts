/**
 * The resource layer of the server, built from the store and run with the app: the store the
 * handlers see (values converted between the handlers' JSON and `--storage-media-type`), the
 * watch caches over that same store, the representations, and the handlers' context. It is
 * mounted on the app together with the resource routes (src/http/resource-routes.ts) and lives
 * with it: the app's `onReady` starts the system-namespace bootstrap and (when asked) every watch
 * cache; its `onClose` stops them. Namespace deletion is the namespace controller's
 * (src/controllers/namespace/), run by the controller manager.
 */
import { reconcileKubernetesService } from '../apiserver-loops/kubernetes-service.js';
import { startApiserverIdentity, type ApiserverIdentity } from '../apiserver-loops/apiserver-identity.js';
import {
  startEndpointReconciler,
  type EndpointReconciler,
  type EndpointReconcilerOptions,
} from '../apiserver-loops/endpoint-reconciler.js';
import type { Cidr } from '../api/cidr.js';
import { ClusterIPAllocator } from '../ipam/cluster-ips.js';
import { NodePortAllocator, type PortRange } from '../ipam/node-ports.js';
import { repairServiceAllocations } from '../ipam/repair.js';
import { ServiceAllocations } from '../ipam/service-allocation.js';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/interface.js';
import { bootstrapNamespaces } from '../apiserver-loops/bootstrap-namespaces.js';
import { ensureLegacyTokenTracking } from '../apiserver-loops/legacy-token-tracking.js';
import { registerResourceRoutes, type CustomEndpoints } from '../http/resource-routes.js';
import type { Registry, ResourceType } from '../registry/types.js';
import { loadSchemas, type SchemaSet } from '../registry/schema.js';
import { Representations } from '../representation/representations.js';
import { StorageCodec, type StorageMediaType } from '../representation/storage-codec.js';
import { transcodingStore } from '../representation/transcoding-store.js';
import {
  createResourceContext,
  DEFAULT_BOOKMARK_INTERVAL_MS,
  type ResourceContext,
} from '../resource/context.js';
import type { AdmissionChain } from '../admission/index.js';
import { KindStrategies } from '../kinds/index.js';
import { printerFor } from '../table/index.js';
import type { PatchSchema } from '../resource/patch/schema.js';
import { WatchCaches } from '../watchcache/cache-set.js';

/** What the resource layer is built from. */
export interface ResourceDeps {
  readonly registry: Registry;
  /** The store with keys already under `--etcd-prefix`. */
  readonly store: Store;
  /** `--event-ttl` in seconds (Events are stored with a lease of about this length; ≤ 0: none). */
  readonly eventTtlSeconds: number;
  /** `--min-request-timeout` in seconds (watch timeouts are randomized above it). */
  readonly minRequestTimeoutSeconds: number;
  /** Strategic merge patch schema; default: loaded from the generated schemas of the built-in kinds. */
  readonly patchSchema?: PatchSchema;
  /** The clock (tests inject one). */
  readonly now?: () => Date;
  /** Idle interval of watch bookmarks in milliseconds (default {@link DEFAULT_BOOKMARK_INTERVAL_MS}). */
  readonly bookmarkIntervalMs?: number;
  /**
   * Create the system namespaces, repair service allocations and run {@link controllers} while
   * the app is up (on `onReady`, stopped on `onClose`). Default true; servers sharing a store
   * may all run it.
   */
  readonly startControllers?: boolean;
  /** The schema set of the protobuf codec; default: loaded on the first protobuf request. */
  readonly schemas?: SchemaSet;
  /**
   * How objects are stored (`--storage-media-type`, whose default is protobuf); default here
   * JSON. Reads accept either encoding whatever this says.
   */
  readonly storageMediaType?: StorageMediaType;
  /**
   * The watch cache (`--watch-cache`, `--default-watch-cache-size`, `--watch-cache-sizes`):
   * `false` sends every read and watch to storage. Default: on, size 100, each type's cache
   * started on first use. A {@link WatchCaches} instance is used as given (tests inspect it).
   */
  readonly watchCache?: false | WatchCacheDeps | WatchCaches;
  /** How long reads wait for a resourceVersion not reached yet before 504 (ms, default 3000). */
  readonly freshnessTimeoutMs?: number;
  /** Endpoints the generic verbs do not serve (reviews, token requests, ...); default none. */
  readonly endpoints?: CustomEndpoints;
  /** The admission plugins every write passes (src/admission/); default none. */
  readonly admission?: AdmissionChain;
  /** NamespaceLifecycle enabled (`--disable-admission-plugins` may turn it off); default true. */
  readonly namespaceLifecycle?: boolean;
  /** The context a request to a type runs with (custom resource conversion); default the layer's. */
  readonly contextFor?: (ctx: ResourceContext, type: ResourceType, method: string) => ResourceContext;
  /**
   * The server's own controllers, started after the system namespaces exist and stopped on
   * close, when controllers run.
   */
  readonly controllers?: readonly ControllerFactory[];
  /**
   * Service networking: allocation of cluster IPs and node ports, the start-time repair, and
   * the kubernetes ServiceCIDR and Service (with the controllers). None: Services get no IPs.
   */
  readonly services?: ServiceNetworkDeps;
  /** Aborted when the server begins to shut down (it then leaves the kubernetes endpoints). */
  readonly shutdownSignal?: AbortSignal;
  /** Registers work to run once the listener is bound (the server awaits it before it is ready). */
  readonly onListening?: (task: (port: number) => Promise<void>) => void;
}

/** Service networking settings of {@link ResourceDeps}. */
export interface ServiceNetworkDeps {
  /** `--service-cluster-ip-range`, primary first. */
  readonly ranges: readonly Cidr[];
  /** `--service-node-port-range`. */
  readonly nodePorts: PortRange;
  /** The address the kubernetes Service's endpoints carry. */
  readonly advertiseAddress: string;
  /** `--endpoint-reconciler-type`, `--apiserver-count` and the lease timings; default lease. */
  readonly endpointReconciler?: Pick<
    EndpointReconcilerOptions,
    'type' | 'apiserverCount' | 'ttlSeconds' | 'intervalMs'
  >;
}

/** Starts a controller over the resource layer. */
export type ControllerFactory = (ctx: ResourceContext) => { stop(): Promise<void> };

/** Watch cache settings of {@link ResourceDeps}. */
export interface WatchCacheDeps {
  /** `--default-watch-cache-size` (default 100). */
  readonly defaultSize?: number;
  /** `--watch-cache-sizes` entries. */
  readonly sizes?: readonly string[];
  /** Start every type's cache when the app is ready (default: on first use). */
  readonly startAll?: boolean;
  /** Queue bound per client watcher (default 10,000). */
  readonly watcherCapacity?: number;
  /** Events younger than this are kept (ms, default 75 s; older history is storage's). */
  readonly minAgeMs?: number;
  /** Failures of a type's storage watch. */
  readonly onError?: (resource: string, err: unknown) => void;
}

/**
 * The watch caches `deps` ask for over `store`, or undefined with `watchCache: false`. `store`
 * must be the store the handlers read (values in the handlers' JSON layout), so that cached
 * versions and storage reads are the same bytes.
 */
function buildWatchCaches(deps: ResourceDeps, store: Store): WatchCaches | undefined {
  if (deps.watchCache === false) return undefined;
  if (deps.watchCache instanceof WatchCaches) return deps.watchCache;
  const o = deps.watchCache ?? {};
  return new WatchCaches({
    store,
    defaultSize: o.defaultSize ?? 100,
    bookmarkIntervalMs: deps.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS,
    ...(o.sizes === undefined ? {} : { sizes: o.sizes }),
    ...(o.watcherCapacity === undefined ? {} : { watcherCapacity: o.watcherCapacity }),
    ...(o.minAgeMs === undefined ? {} : { minAgeMs: o.minAgeMs }),
    ...(o.onError === undefined ? {} : { onError: o.onError }),
  });
}

/** What {@link createResourceLayer} builds: the handlers' context and what serves it. */
export interface ResourceLayer {
  readonly ctx: ResourceContext;
  readonly reps: Representations;
  /** The handlers' store (values in the handlers' JSON layout, under `--etcd-prefix`). */
  readonly store: Store;
  readonly watchCaches: WatchCaches | undefined;
  /** Service cluster IP and node port allocation, with `deps.services`. */
  readonly allocators:
    { readonly clusterIPs: ClusterIPAllocator; readonly nodePorts: NodePortAllocator } | undefined;
}

/**
 * Builds the resource layer `deps` describe without mounting it: the server builds it first so
 * that the parts wired before the routes (the authorizer's RBAC index) can read its store.
 */
export function createResourceLayer(deps: ResourceDeps): ResourceLayer {
  const now = deps.now ?? ((): Date => new Date());
  const strategies = KindStrategies.fromRegistry(deps.registry);
  const reps = new Representations(
    deps.registry,
    () => deps.schemas ?? loadSchemas(),
    now,
    (type) => {
      // Types without a kind strategy (PartialObjectMetadata) get the default columns.
      const strategy = strategies.find(type);
      if (strategy === undefined) return printerFor(type.group, type.plural);
      const version = type.apiVersion.slice(type.apiVersion.indexOf('/') + 1);
      return strategy.tableOf?.(version) ?? strategy.table;
    },
  );
  const storageCodec = new StorageCodec(deps.storageMediaType ?? 'application/json', () => reps.protobuf);
  // The handlers' store (values in the handlers' JSON layout); the watch caches read the same one.
  const store = transcodingStore(deps.store, storageCodec);
  const watchCaches = buildWatchCaches(deps, store);
  const net = deps.services;
  const clusterIPs = net === undefined ? undefined : new ClusterIPAllocator(deps.registry, net.ranges);
  const nodePorts = net === undefined ? undefined : new NodePortAllocator(net.nodePorts);
  const allocations =
    clusterIPs === undefined || nodePorts === undefined
      ? undefined
      : new ServiceAllocations(clusterIPs, nodePorts);
  const ctx = createResourceContext({
    ...(allocations === undefined
      ? {}
      : { writeHooks: allocations, serviceIPFamilies: allocations.families }),
    registry: deps.registry,
    store,
    storedForm: (json) => storageCodec.fromStorage(storageCodec.toStorage(json)),
    encode: (obj) => storageCodec.encode(obj),
    strategies,
    eventTtlSeconds: deps.eventTtlSeconds,
    minRequestTimeoutSeconds: deps.minRequestTimeoutSeconds,
    ...(deps.patchSchema === undefined ? {} : { patchSchema: deps.patchSchema }),
    ...(deps.schemas === undefined ? {} : { schemas: deps.schemas }),
    now,
    ...(deps.bookmarkIntervalMs === undefined ? {} : { bookmarkIntervalMs: deps.bookmarkIntervalMs }),
    ...(watchCaches === undefined ? {} : { watchCaches }),
    ...(deps.freshnessTimeoutMs === undefined ? {} : { freshnessTimeoutMs: deps.freshnessTimeoutMs }),
    ...(deps.admission === undefined ? {} : { admission: deps.admission }),
    ...(deps.namespaceLifecycle === undefined ? {} : { namespaceLifecycle: deps.namespaceLifecycle }),
  });
  return {
    ctx,
    reps,
    store,
    watchCaches,
    allocators: clusterIPs === undefined || nodePorts === undefined ? undefined : { clusterIPs, nodePorts },
  };
}

/**
 * Builds the resource layer `deps` describe (or uses `layer`, built by
 * {@link createResourceLayer} from the same deps) and mounts it on `app`: the resource routes (in
 * their own plugin scope) and, unless `deps.startControllers` is false, the system-namespace
 * bootstrap, the namespace controller and `deps.controllers` on the app's `onReady`/`onClose`
 * hooks. Errors are thrown as `ApiError`s for the app's error handler (`installErrorHandler`) to
 * render. Returns the layer.
 */
export function mountResources(
  app: FastifyInstance,
  deps: ResourceDeps,
  layer: ResourceLayer = createResourceLayer(deps),
): ResourceLayer {
  const { ctx, reps, watchCaches, allocators } = layer;
  if (watchCaches !== undefined) {
    app.addHook('onReady', (done) => {
      const o = deps.watchCache;
      if (o !== undefined && o !== false && !(o instanceof WatchCaches) && o.startAll === true) {
        watchCaches.startAll(deps.registry.all());
      }
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      watchCaches.close();
      done();
    });
  }
  registerResourceRoutes(app, {
    ctx,
    reps,
    ...(deps.endpoints === undefined ? {} : { endpoints: deps.endpoints }),
    ...(deps.contextFor === undefined ? {} : { contextFor: deps.contextFor }),
  });
  if (deps.startControllers === false) return layer;
  const others: { stop(): Promise<void> }[] = [];
  // The system namespaces are kube-apiserver's post-start work: made beside the listener and the
  // other hooks (not on the path to /healthz), and waited for before the server counts as started
  // (the first listening task, so the kubernetes Service and lease find their namespaces).
  let namespacesMade: Promise<void> = Promise.resolve();
  app.addHook('onReady', async () => {
    // First, while the store is idle: the repair's reads then answer at once.
    if (allocators !== undefined) {
      await repairServiceAllocations(ctx, allocators.clusterIPs, allocators.nodePorts);
    }
    namespacesMade = bootstrapNamespaces(ctx).then(() => {
      ensureLegacyTokenTracking(ctx).catch((err: unknown) =>
        app.log.error({ err }, 'creating the legacy service-account token tracking ConfigMap failed'),
      );
    });
    // Held until the listening task takes it over (an early failure is not unhandled meanwhile).
    namespacesMade.catch(() => undefined);
    for (const start of deps.controllers ?? []) others.push(start(ctx));
  });
  deps.onListening?.(async () => {
    try {
      await namespacesMade;
    } catch (err) {
      app.log.error({ err }, 'creating the system namespaces failed');
    }
  });
  const net = deps.services;
  let identity: ApiserverIdentity | undefined;
  let endpoints: EndpointReconciler | undefined;
  if (net !== undefined) {
    // The kubernetes Service needs the port actually bound (--secure-port=0 picks one).
    deps.onListening?.(async (port) => {
      await reconcileKubernetesService(ctx, { ranges: net.ranges, port });
      const onError = (message: string, err: unknown): void => app.log.error({ err }, message);
      identity = await startApiserverIdentity(ctx, { onError });
      endpoints = await startEndpointReconciler(ctx, {
        ...(net.endpointReconciler ?? { type: 'lease', apiserverCount: 1 }),
        address: net.advertiseAddress,
        port,
        onError,
      });
      // As kube's pre-shutdown hook: out of the endpoints as soon as shutdown begins.
      deps.shutdownSignal?.addEventListener('abort', () => void endpoints?.stop(), { once: true });
      if (deps.shutdownSignal?.aborted === true) await endpoints.stop();
    });
  }
  app.addHook('onClose', async () => {
    await identity?.stop();
    await endpoints?.stop();
    await Promise.all(others.map((c) => c.stop()));
  });
  return layer;
}
