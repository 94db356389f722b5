/**
 * The APIService controller: creates the local APIServices of the built-in group versions at
 * start, keeps every APIService's `Available` condition (kube's available-condition controller),
 * and holds what the proxy and discovery read: the available remote group versions and the
 * resources their servers list.
 *
 * A local APIService (no `spec.service`) is Available with reason `Local`. A remote one is
 * checked on every change of APIServices, Services, Endpoints or EndpointSlices and every
 * `checkIntervalMs`: its Service must exist (`ServiceNotFound`) and listen on the port
 * (`ServicePortError`), have endpoints (`EndpointsNotFound`, `MissingEndpoints`), and answer a
 * discovery GET of `/apis/<group>/<version>` with 2xx (`FailedDiscoveryCheck`); then `Passed`.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { transitionTime } from '../api/conditions.js';
import { ApiError } from '../api/errors.js';
import {
  decodeStored,
  encodeForStorage,
  isJsonObject,
  rfc3339Seconds,
  type JsonObject,
  type KubeObject,
} from '../api/object.js';
import { Informer } from '../admission/webhook/informer.js';
import type { Endpoint, ServiceObjects } from '../admission/webhook/service-resolver.js';
import type { ServedGroup } from '../registry/registry.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import {
  Backends,
  DiscoveryCheckError,
  remoteSpecOf,
  type ProxyClientCert,
  type RemoteSpec,
} from './backend.js';
import { apiServiceName, AUTOMANAGED_LABEL, customApiServices, localApiServices } from './priorities.js';

const APISERVICES = '/apiregistration.k8s.io/apiservices/';

/** The Available condition kube's controller computes. */
interface Availability {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** A remote group version as the proxy and discovery see it. */
export interface RemoteGroupVersion {
  readonly apiService: string;
  readonly spec: RemoteSpec;
  readonly available: boolean;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
  /** The `resources` of the server's APIResourceList (from the last passed check). */
  readonly resources: readonly JsonObject[];
}

/** What the controller is built from. */
export interface AggregatorDeps {
  /** The built-in groups (their local APIServices are created at start). */
  readonly localGroups: () => readonly ServedGroup[];
  /**
   * All served groups, custom resources' included, with change notifications (the layered
   * registry): CRD group versions get local APIServices while they are served.
   */
  readonly servedGroups?: {
    groups(): readonly ServedGroup[];
    onChange(listener: () => void): () => void;
  };
  /** The front-proxy client certificate, read when a connection is made. */
  readonly clientCert: () => ProxyClientCert | undefined;
  /** How often every remote APIService is checked again (kube: 30 s). */
  readonly checkIntervalMs?: number;
  /** How long a discovery check may take (kube: 5 s). */
  readonly checkTimeoutMs?: number;
  readonly onError: (message: string, err: unknown) => void;
}

function num(v: unknown, fallback: number): number {
  return typeof v === 'number' ? v : fallback;
}

/** The APIService controller and the remote group versions it found. */
export class Aggregator {
  readonly #deps: AggregatorDeps;
  #ctx: ResourceContext | undefined;
  #informers:
    { apiServices: Informer; services: Informer; endpoints: Informer; slices: Informer } | undefined;
  readonly #remote = new Map<string, RemoteGroupVersion>();
  readonly #resources = new Map<string, readonly JsonObject[]>();
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** Services, Endpoints and EndpointSlices as the informers hold them. */
  readonly #services: ServiceObjects;
  /** The backends, reached through the informers' Services and endpoints. */
  readonly backends: Backends;

  constructor(deps: AggregatorDeps) {
    this.#deps = deps;
    this.#services = {
      service: async (ns, name) => this.#informers?.services.get(`/services/specs/${ns}/${name}`),
      endpoints: async (ns, name) => this.#informers?.endpoints.get(`/services/endpoints/${ns}/${name}`),
      endpointSlices: async (ns, service) =>
        [...(this.#informers?.slices.values() ?? [])].filter(
          (s) => s.metadata.namespace === ns && s.metadata.labels?.['kubernetes.io/service-name'] === service,
        ),
    };
    this.backends = new Backends(this.#services, deps.clientCert);
  }

  /** Changes whenever the set of remote group versions or their resources changes. */
  get generation(): number {
    return this.#generation;
  }

  /** Every remote group version, by `group/version`. */
  remotes(): readonly RemoteGroupVersion[] {
    return [...this.#remote.values()];
  }

  /** The remote group version `group/version`, or undefined when the server serves it itself. */
  remote(group: string, version: string): RemoteGroupVersion | undefined {
    return this.#remote.get(`${group}/${version}`);
  }

  /** Starts the controller over the resource layer (a controller factory). */
  start(ctx: ResourceContext): { stop(): Promise<void> } {
    this.#ctx = ctx;
    const onError = (err: unknown): void => this.#deps.onError('APIService controller: watch failed', err);
    const informers = {
      apiServices: new Informer(ctx.store, APISERVICES, onError),
      services: new Informer(ctx.store, '/services/specs/', onError),
      endpoints: new Informer(ctx.store, '/services/endpoints/', onError),
      slices: new Informer(ctx.store, '/endpointslices/', onError),
    };
    this.#informers = informers;
    for (const i of Object.values(informers)) {
      i.onChange(() => this.#schedule());
      i.start();
    }
    void this.#bootstrap(ctx);
    const served = this.#deps.servedGroups;
    let syncing = Promise.resolve();
    const sync = (): void => {
      syncing = syncing.then(() => this.#syncCustom(ctx, informers.apiServices));
    };
    const unsubscribe = served?.onChange(sync);
    if (served !== undefined) sync();
    const interval = this.#deps.checkIntervalMs ?? 30_000;
    this.#timer = setInterval(() => this.#schedule(), interval);
    this.#timer.unref();
    return {
      stop: async () => {
        this.#stopped = true;
        unsubscribe?.();
        clearInterval(this.#timer);
        await syncing;
        for (const i of Object.values(informers)) i.close();
        await this.#running;
      },
    };
  }

  async #bootstrap(ctx: ResourceContext): Promise<void> {
    const type = ctx.registry.byKind('apiregistration.k8s.io', 'v1', 'APIService');
    if (type === undefined) return;
    // Created together: the store commits them in one batch.
    const create = async (obj: JsonObject): Promise<void> => {
      try {
        await createObject(ctx, type, obj as KubeObject);
      } catch (err) {
        if (err instanceof ApiError && err.reason === 'AlreadyExists') return;
        if (!this.#stopped)
          this.#deps.onError('APIService controller: creating a local APIService failed', err);
      }
    };
    await Promise.all(localApiServices(this.#deps.localGroups()).map(create));
  }

  /** Creates the APIServices of served custom group versions, deletes those no longer served. */
  async #syncCustom(ctx: ResourceContext, apiServices: Informer): Promise<void> {
    const served = this.#deps.servedGroups;
    const type = ctx.registry.byKind('apiregistration.k8s.io', 'v1', 'APIService');
    if (served === undefined || type === undefined || this.#stopped) return;
    await apiServices.whenSynced();
    const builtin = new Set(
      this.#deps.localGroups().flatMap((g) => g.versions.map((v) => apiServiceName(g.name, v))),
    );
    const wanted = served
      .groups()
      .flatMap((g) => g.versions.map((version) => ({ group: g.name, version })))
      .filter((gv) => !builtin.has(apiServiceName(gv.group, gv.version)));
    const names = new Set(wanted.map((gv) => apiServiceName(gv.group, gv.version)));
    for (const obj of customApiServices(wanted)) {
      const name = (obj['metadata'] as { name: string }).name;
      if (apiServices.get(`${APISERVICES}${name}`) !== undefined) continue;
      try {
        await createObject(ctx, type, obj as KubeObject);
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists') && !this.#stopped)
          this.#deps.onError(`APIService controller: creating apiservice ${name} failed`, err);
      }
    }
    for (const obj of [...apiServices.values()]) {
      const name = obj.metadata.name ?? '';
      if (obj.metadata.labels?.[AUTOMANAGED_LABEL] !== 'true' || names.has(name)) continue;
      try {
        await ctx.store.delete(`${APISERVICES}${name}`);
      } catch (err) {
        if (!(err instanceof NotFoundError) && !this.#stopped)
          this.#deps.onError(`APIService controller: deleting apiservice ${name} failed`, err);
      }
    }
  }

  /** Runs one reconcile after the current one; several requests in the meantime make one run. */
  #schedule(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#pending = true;
      return;
    }
    this.#running = this.#reconcile().finally(() => {
      this.#running = undefined;
      if (this.#pending) {
        this.#pending = false;
        this.#schedule();
      }
    });
  }

  async #reconcile(): Promise<void> {
    const informers = this.#informers;
    if (informers === undefined) return;
    await Promise.all(Object.values(informers).map((i) => i.whenSynced()));
    const seen = new Set<string>();
    let changed = false;
    await Promise.all(
      [...informers.apiServices.values()].map(async (obj) => {
        const name = obj.metadata.name ?? '';
        const spec = remoteSpecOf(obj);
        const availability = spec === undefined ? LOCAL : await this.#check(name, spec);
        if (this.#stopped) return;
        if (spec !== undefined) {
          const gv = `${spec.group}/${spec.version}`;
          seen.add(gv);
          const specJson = isJsonObject(obj['spec']) ? obj['spec'] : {};
          const next: RemoteGroupVersion = {
            apiService: name,
            spec,
            available: availability.status === 'True',
            groupPriorityMinimum: num(specJson['groupPriorityMinimum'], 0),
            versionPriority: num(specJson['versionPriority'], 0),
            resources: this.#resources.get(name) ?? [],
          };
          if (JSON.stringify(this.#remote.get(gv)) !== JSON.stringify(next)) changed = true;
          this.#remote.set(gv, next);
        }
        // The informer's copy already says so: nothing to write (a later change reschedules).
        if (!isCurrent(obj, availability)) await this.#writeStatus(name, availability);
      }),
    );
    for (const gv of [...this.#remote.keys()]) {
      if (!seen.has(gv)) {
        this.#remote.delete(gv);
        changed = true;
      }
    }
    if (changed) this.#generation++;
  }

  async #check(name: string, spec: RemoteSpec): Promise<Availability> {
    const svc = this.backends;
    const informers = this.#informers;
    if (informers === undefined) return { status: 'False', reason: 'ServiceNotFound', message: '' };
    const where = `service/${spec.name} in ${JSON.stringify(spec.namespace)}`;
    const service = informers.services.get(`/services/specs/${spec.namespace}/${spec.name}`);
    if (service === undefined)
      return { status: 'False', reason: 'ServiceNotFound', message: `${where} is not present` };
    const ports =
      isJsonObject(service['spec']) && Array.isArray(service['spec']['ports'])
        ? service['spec']['ports']
        : [];
    if (!ports.some((p) => isJsonObject(p) && p['port'] === spec.port)) {
      return {
        status: 'False',
        reason: 'ServicePortError',
        message: `${where} is not listening on port ${spec.port}`,
      };
    }
    const hasSlices = (await this.#services.endpointSlices(spec.namespace, spec.name)).length > 0;
    if (!hasSlices && (await this.#services.endpoints(spec.namespace, spec.name)) === undefined) {
      return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for ${where}` };
    }
    let endpoint: Endpoint;
    try {
      endpoint = await svc.resolve(spec);
    } catch (err) {
      return {
        status: 'False',
        reason: 'MissingEndpoints',
        message: `endpoints for ${where} have no addresses: ${String((err as Error).message)}`,
      };
    }
    try {
      const body = await svc.getJson(
        spec,
        endpoint,
        `/apis/${spec.group}/${spec.version}`,
        this.#deps.checkTimeoutMs ?? 5_000,
      );
      const resources =
        isJsonObject(body) && Array.isArray(body['resources']) ? body['resources'].filter(isJsonObject) : [];
      this.#resources.set(name, resources);
      return { status: 'True', reason: 'Passed', message: 'all checks passed' };
    } catch (err) {
      return {
        status: 'False',
        reason: 'FailedDiscoveryCheck',
        message:
          err instanceof DiscoveryCheckError
            ? `failing or missing response from ${err.url}: ${err.message}`
            : `failing or missing response from https://${spec.name}.${spec.namespace}.svc:${spec.port}/apis/${spec.group}/${spec.version}: ${String((err as Error).message)}`,
      };
    }
  }

  async #writeStatus(name: string, a: Availability): Promise<void> {
    const ctx = this.#ctx;
    if (ctx === undefined) return;
    const key = `${APISERVICES}${name}`;
    try {
      const { kv } = await ctx.store.get(key);
      if (kv === undefined) return;
      const obj = decodeStored(kv.value, kv.modRevision);
      const status: JsonObject = isJsonObject(obj['status']) ? { ...obj['status'] } : {};
      const conditions = (Array.isArray(status['conditions']) ? status['conditions'] : []).filter(
        isJsonObject,
      );
      const old = conditions.find((c) => c['type'] === 'Available');
      if (isCurrent(obj, a)) return;
      const lastTransitionTime = transitionTime(old, a.status, rfc3339Seconds(ctx.now()));
      const condition = {
        type: 'Available',
        status: a.status,
        lastTransitionTime,
        reason: a.reason,
        message: a.message,
      };
      status['conditions'] = [...conditions.filter((c) => c['type'] !== 'Available'), condition];
      obj['status'] = status;
      await ctx.store.update(key, encodeForStorage(obj), { ifModRevision: kv.modRevision });
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) {
        this.#schedule();
        return;
      }
      if (!this.#stopped) this.#deps.onError(`apiservice ${name}: status update failed`, err);
    }
  }
}

/** True when `obj`'s Available condition already says `a` (status, reason and message). */
function isCurrent(obj: JsonObject, a: Availability): boolean {
  const status = obj['status'];
  const conditions = isJsonObject(status) && Array.isArray(status['conditions']) ? status['conditions'] : [];
  const old = conditions.find((c) => isJsonObject(c) && c['type'] === 'Available') as JsonObject | undefined;
  return (
    old !== undefined &&
    old['status'] === a.status &&
    old['reason'] === a.reason &&
    old['message'] === a.message
  );
}

const LOCAL: Availability = {
  status: 'True',
  reason: 'Local',
  message: 'Local APIServices are always available',
};
