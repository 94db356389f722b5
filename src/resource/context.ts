/**
 * What every verb handler works with: the registry, the store (already under `--etcd-prefix`),
 * the kind rules, the clock, the event leases and the patch schema; and the resolved target of a
 * request. Built once per server from the deps the HTTP layer is given.
 */
import type { Readable } from 'node:stream';
import type { Store } from '../../storage/interface.js';
import { EventLeases } from './event-leases.js';
import { CachedStore } from './cached-store.js';
import type { ObjectStore } from './object-store.js';
import type { WatchCaches } from '../watchcache/cache-set.js';
import type { Qualified } from '../api/errors.js';
import type { Registry, ResourceType } from '../registry/types.js';
import { KindStrategies } from '../kinds/index.js';
import { loadSchemas, type SchemaSet } from '../registry/schema.js';
import { FieldManager } from './field-manager.js';
import { NamespaceAdmission } from './namespace-admission.js';
import { encodeForStorage, type KubeObject } from '../api/object.js';
import { EMPTY_CHAIN, type AdmissionChain } from '../admission/index.js';
import type { PatchSchema } from './patch/schema.js';
import { patchSchemaFrom } from './patch/schema-adapter.js';

/** The shared state of the resource handlers of one server (no global state: one per app). */
export interface ResourceContext {
  readonly registry: Registry;
  readonly store: Store;
  /** Per-kind behaviour (defaulting, validation, flags, reset fields, ...). */
  readonly strategies: KindStrategies;
  /** The server's clock (tests inject one). */
  readonly now: () => Date;
  readonly eventLeases: EventLeases;
  /** Merge keys and strategies for strategic merge patch. */
  readonly patchSchema: PatchSchema;
  /** managedFields on every write, and server-side apply. */
  readonly fields: FieldManager;
  /** `--min-request-timeout` (seconds): watches end after a random time in [this, 2 × this). */
  readonly minRequestTimeoutSeconds: number;
  /** How often an idle watch with `allowWatchBookmarks` gets a BOOKMARK (milliseconds). */
  readonly bookmarkIntervalMs: number;
  /**
   * What handlers read, watch and start writes from (the watch caches in front of `store`:
   * cached-store.ts); writes go to `store`.
   */
  readonly objects: ObjectStore;
  /** The watch caches (`--watch-cache`) behind `objects`; undefined: it reads storage only. */
  readonly watchCaches: WatchCaches | undefined;
  /** How long a read for a resourceVersion not reached yet waits before 504 (ms). */
  readonly freshnessTimeoutMs: number;
  /** NamespaceLifecycle's lookups: the namespaces cache, or storage (namespace-admission.ts). */
  readonly namespaceAdmission: NamespaceAdmission;
  /**
   * NamespaceLifecycle is enabled (kube's default): no content in missing or terminating
   * namespaces, the system namespaces are never deleted. Off with
   * `--disable-admission-plugins=NamespaceLifecycle`, as in kube, where nothing else checks.
   */
  readonly namespaceLifecycle: boolean;
  /** The admission plugins every write passes (src/admission/; empty: admit everything). */
  readonly admission: AdmissionChain;
  /** Side effects of writes outside the written object (Service cluster IPs and node ports). */
  readonly writeHooks: WriteHooks | undefined;
  /** The IP families of `--service-cluster-ip-range`, primary first. */
  readonly serviceIPFamilies: readonly ('IPv4' | 'IPv6')[];
  /**
   * What a read would give of `json` (the handlers' storage layout) once stored: a dry run's
   * answer, which kube-apiserver also passes through its storage codec. Writes that are stored
   * answer with the store's own result, which is that form already.
   */
  readonly storedForm: (json: Uint8Array) => Uint8Array;
  /**
   * The value to hand the store for `obj` (see `StorageCodec.encode`): already in the storage
   * encoding when that is protobuf, so that no JSON text is made only to be converted. `obj` is
   * not modified.
   */
  readonly encode: (obj: KubeObject) => Uint8Array;
}

/** Allocations a write made before it is stored: finished when stored, undone when it fails. */
export interface PendingWrite {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/**
 * Side effects of writes of some kinds beyond their own object (kube's `BeginCreate`,
 * `BeginUpdate` and after-delete hooks). Called after validation, before the store write; they
 * may fill fields of the object (allocated IPs and ports) or refuse it with a 422.
 */
export interface WriteHooks {
  beginCreate(
    ctx: ResourceContext,
    type: ResourceType,
    obj: KubeObject,
    dryRun: boolean,
  ): Promise<PendingWrite | undefined>;
  beginUpdate(
    ctx: ResourceContext,
    type: ResourceType,
    next: KubeObject,
    current: KubeObject,
    dryRun: boolean,
  ): Promise<PendingWrite | undefined>;
  afterDelete(ctx: ResourceContext, type: ResourceType, obj: KubeObject): Promise<void>;
}

/**
 * How often an idle watcher gets a BOOKMARK (ms). kube-apiserver sends one about once a minute;
 * Capstan every 20 s, so that the watch cache's window (this plus 15 s, as kube sizes it) holds
 * 35 s of events instead of 75 s: a watcher resuming from its last bookmark still finds its
 * revision there, and a busy type's window holds half the memory (older history is storage's).
 */
export const DEFAULT_BOOKMARK_INTERVAL_MS = 20_000;

/** The inputs of {@link createResourceContext}. */
export interface ResourceContextOptions {
  readonly registry: Registry;
  readonly store: Store;
  /** `--event-ttl` in seconds. */
  readonly eventTtlSeconds: number;
  readonly minRequestTimeoutSeconds: number;
  /** Default: the generated schemas of the built-in kinds (read once, here). */
  readonly patchSchema?: PatchSchema;
  /** The schema set of the built-in kinds (the server's one load); default: read on first use. */
  readonly schemas?: SchemaSet;
  readonly now?: () => Date;
  /** Default: the built-in strategies of every kind `registry` serves. */
  readonly strategies?: KindStrategies;
  /** Default {@link DEFAULT_BOOKMARK_INTERVAL_MS}. */
  readonly bookmarkIntervalMs?: number;
  readonly watchCaches?: WatchCaches;
  /** Default 3000 (kube-apiserver's wait for a too-large resourceVersion). */
  readonly freshnessTimeoutMs?: number;
  /** Default: no plugins. */
  readonly admission?: AdmissionChain;
  /** NamespaceLifecycle enabled (default true). */
  readonly namespaceLifecycle?: boolean;
  /** Write hooks (Service allocations); none by default. */
  readonly writeHooks?: WriteHooks;
  /** Service IP families (default single-stack IPv4). */
  readonly serviceIPFamilies?: readonly ('IPv4' | 'IPv6')[];
  /** Default: the bytes as they are (a store that keeps values as given). */
  readonly storedForm?: (json: Uint8Array) => Uint8Array;
  /** Default: `encodeForStorage` (the handlers' JSON layout, for a store that keeps it). */
  readonly encode?: (obj: KubeObject) => Uint8Array;
}

/**
 * Builds the context; loads the strategic-merge-patch schema when none is given (synchronous
 * file read, once per server).
 */
export function createResourceContext(options: ResourceContextOptions): ResourceContext {
  const now = options.now ?? (() => new Date());
  // One parse of the schema file for both strategic merge patch and apply.
  let schemas = options.schemas;
  const load = (): SchemaSet => (schemas ??= loadSchemas());
  const strategies = options.strategies ?? KindStrategies.fromRegistry(options.registry);
  const freshnessTimeoutMs = options.freshnessTimeoutMs ?? 3000;
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS;
  return {
    registry: options.registry,
    store: options.store,
    strategies,
    now,
    eventLeases: new EventLeases(options.store, options.eventTtlSeconds, () => now().getTime()),
    patchSchema: options.patchSchema ?? patchSchemaFrom(load()),
    fields: new FieldManager(load, strategies),
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds,
    bookmarkIntervalMs,
    objects: new CachedStore({
      store: options.store,
      caches: options.watchCaches,
      freshnessTimeoutMs,
      bookmarkIntervalMs,
    }),
    watchCaches: options.watchCaches,
    freshnessTimeoutMs,
    namespaceAdmission: new NamespaceAdmission(options.watchCaches, () => now().getTime()),
    namespaceLifecycle: options.namespaceLifecycle ?? true,
    admission: options.admission ?? EMPTY_CHAIN,
    writeHooks: options.writeHooks,
    serviceIPFamilies: options.serviceIPFamilies ?? ['IPv4'],
    storedForm: options.storedForm ?? ((json) => json),
    encode: options.encode ?? encodeForStorage,
  };
}

/**
 * `ctx` over another store (a custom resource's converting store), read without the watch
 * caches: they hold the objects of `ctx.store`, not of `store`.
 */
export function storageOnlyContext(ctx: ResourceContext, store: Store): ResourceContext {
  const { freshnessTimeoutMs, bookmarkIntervalMs } = ctx;
  const objects = new CachedStore({ store, caches: undefined, freshnessTimeoutMs, bookmarkIntervalMs });
  return { ...ctx, store, objects, watchCaches: undefined };
}

/** A request's resolved target: type, namespace (undefined = all / cluster-scoped), name, subresource. */
export interface Target {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

/** The identity of an object in error messages (`pods "x"`, `deployments.apps "x"`). */
export function qualified(type: ResourceType, name: string): Qualified {
  return { resource: type.plural, group: type.group, name };
}

/** A verb's answer: status code and JSON body (bytes, text, or a stream of bytes for large lists). */
export interface ResourceReply {
  readonly code: number;
  readonly body: Buffer | string | Uint8Array | Readable;
  /** Set when `body` is already in the negotiated representation (issue 5); else it is JSON. */
  readonly contentType?: string;
}
