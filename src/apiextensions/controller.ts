/**
 * The CustomResourceDefinition controller: what kube-apiserver's apiextensions controllers do,
 * in one loop over the stored CRDs (list, then watch: src/apiserver-loops/watch-loop.ts).
 *
 * - Names (kube's naming controller): `status.acceptedNames` and the NamesAccepted condition,
 *   conflicts with other CRDs of the group reported (names.ts); Established `Installing` until
 *   the kind is served.
 * - Serving: once names are accepted, every served version is registered in the server's
 *   registry (routes, discovery) with the kind's {@link CustomStrategy}, and the watch cache of
 *   its storage resource is started; then Established becomes True (`InitialNamesAccepted`) and
 *   `status.storedVersions` holds the storage version. A deleted CRD's kind is unregistered and
 *   its cache stopped.
 * - Cleanup (kube's finalizer controller): a CRD being deleted with the
 *   `customresourcecleanup.apiextensions.k8s.io` finalizer (added by its DELETE, see
 *   src/kinds/crd-deletion.ts) gets Terminating `InstanceDeletionInProgress`, every custom object
 *   is deleted through the generic delete (objects with finalizers wait for them), then
 *   `InstanceDeletionCompleted` and the finalizer goes, which removes the CRD.
 *
 * Status writes go straight to the store, guarded by the CRD's mod revision (a lost race waits
 * for the next event).
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import type { KeySpan } from '../../storage/interface.js';
import {
  decodeStored,
  encodeForStorage,
  isJsonObject,
  rfc3339Seconds,
  type KubeObject,
} from '../api/object.js';
import { watchLoop, type Observed, type WatchLoop } from '../apiserver-loops/watch-loop.js';
import { CRD_CLEANUP_FINALIZER } from '../kinds/crd-deletion.js';
import { CustomStrategy, type KindRef } from '../kinds/index.js';
import type { LayeredRegistry } from '../registry/layered.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { deleteObject } from '../resource/delete.js';
import { compileSchema } from '../schema/index.js';
import {
  isTrue,
  readDefinition,
  servedTypes,
  storageVersionOf,
  type CrdCondition,
  type Definition,
} from './definition.js';
import type { PublishedSchemas } from './published.js';
import type { CrdRequests } from './requests.js';
import { convertNone, webhookConversion } from './webhook.js';
import { computeNames, namesJson, namesSettled, setCondition } from './names.js';

/** Where CRDs are stored (below `--etcd-prefix`). */
export const CRD_PREFIX = '/apiextensions.k8s.io/customresourcedefinitions/';

/** How long cleanup waits for custom objects with finalizers before reporting and retrying. */
const CLEANUP_WAIT_MS = 60_000;

/** What the controller is given besides the resource context. */
export interface CrdControllerOptions {
  /** The server's registry: custom kinds are added to and removed from it. */
  readonly registry: LayeredRegistry;
  /** Where the served versions' schemas are published for OpenAPI (none: not published). */
  readonly published?: PublishedSchemas;
  /**
   * Where multi-version kinds' conversions and terminating kinds are registered (none: versions
   * are not converted, creates during deletion not refused).
   */
  readonly conversions?: CrdRequests;
  /** Failures worth a log line (a status write that failed for a reason other than a race). */
  readonly onError?: (message: string, err: unknown) => void;
}

/** What one CRD serves now. */
interface Serving {
  readonly kind: KindRef;
  readonly storageResource: string;
  readonly types: readonly ResourceType[];
}

/** True when a schema declares a `default` anywhere (its objects are defaulted on read). */
function declaresDefault(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(declaresDefault);
  if (!isJsonObject(schema)) return false;
  return Object.entries(schema).some(([k, v]) => k === 'default' || declaresDefault(v));
}

/** A running controller. */
export interface CrdController {
  stop(): Promise<void>;
}

/** Starts the controller over `ctx` (see the module comment). */
export function startCrdController(ctx: ResourceContext, options: CrdControllerOptions): CrdController {
  const controller = new Controller(ctx, options);
  return { stop: () => controller.stop() };
}

class Controller {
  readonly #ctx: ResourceContext;
  readonly #registry: LayeredRegistry;
  readonly #published: PublishedSchemas | undefined;
  readonly #conversions: CrdRequests | undefined;
  readonly #onError: (message: string, err: unknown) => void;
  readonly #defs = new Map<string, Definition>();
  readonly #serving = new Map<string, Serving>();
  readonly #cleaning = new Map<string, Promise<void>>();
  readonly #loop: WatchLoop;
  #stopped = false;

  constructor(ctx: ResourceContext, options: CrdControllerOptions) {
    this.#ctx = ctx;
    this.#registry = options.registry;
    this.#published = options.published;
    this.#conversions = options.conversions;
    this.#onError = options.onError ?? ((): void => undefined);
    const span: KeySpan = { prefix: CRD_PREFIX };
    this.#loop = watchLoop(ctx, span, (change) => this.#observe(change));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop.stop();
    await Promise.allSettled([...this.#cleaning.values()]);
  }

  async #observe(change: Observed): Promise<void> {
    const name = change.key.slice(CRD_PREFIX.length);
    if (change.obj === undefined) {
      const group = this.#defs.get(name)?.group;
      this.#defs.delete(name);
      this.#unserve(name);
      // Names it held are free now: others of its group may take them.
      for (const other of this.#defs.values()) {
        if (other.group === group && !namesSettled(other)) await this.#reconcile(other.name);
      }
      return;
    }
    this.#defs.set(name, readDefinition(change.obj));
    await this.#reconcile(name);
  }

  async #reconcile(name: string): Promise<void> {
    const def = this.#defs.get(name);
    if (def === undefined || this.#stopped) return;
    const now = rfc3339Seconds(this.#ctx.now());
    if (!namesSettled(def) || def.conditions.find((c) => c.type === 'NamesAccepted') === undefined) {
      const outcome = computeNames(def, this.#defs.values());
      const changed = await this.#writeStatus(name, (status, conditions) => {
        status['acceptedNames'] = namesJson(outcome.acceptedNames);
        setCondition(conditions, outcome.namesAccepted, now);
        setCondition(conditions, outcome.established, now);
      });
      // The write comes back as an event; the rest follows then.
      if (changed) return;
    }
    if (isTrue(def, 'NamesAccepted') && def.acceptedNames.plural !== '' && def.acceptedNames.kind !== '') {
      this.#serve(def);
      const storage = storageVersionOf(def);
      const needsStored = storage !== undefined && !def.storedVersions.includes(storage);
      if ((!isTrue(def, 'Established') && !def.deleting) || needsStored) {
        await this.#writeStatus(name, (status, conditions) => {
          if (!def.deleting) {
            setCondition(
              conditions,
              {
                type: 'Established',
                status: 'True',
                reason: 'InitialNamesAccepted',
                message: 'the initial names have been accepted',
              },
              now,
            );
          }
          if (storage !== undefined) {
            const stored = Array.isArray(status['storedVersions'])
              ? (status['storedVersions'] as string[])
              : [];
            if (!stored.includes(storage)) status['storedVersions'] = [...stored, storage];
          }
        });
      }
    }
    if (def.deleting && def.finalizers.includes(CRD_CLEANUP_FINALIZER) && !this.#cleaning.has(name)) {
      const run = this.#cleanup(name).finally(() => this.#cleaning.delete(name));
      this.#cleaning.set(name, run);
    }
  }

  /** Registers `def`'s served versions (the strategy first, so a found type has one). */
  #serve(def: Definition): void {
    const types = servedTypes(def);
    const previous = this.#serving.get(def.name);
    const kind: KindRef = { group: def.group, kind: def.acceptedNames.kind };
    const strategy = new CustomStrategy({
      group: def.group,
      kind: kind.kind,
      versions: def.versions
        .filter((v) => v.served)
        .map((v) => ({
          name: v.name,
          schema: compileSchema(v.schema, { preserveUnknownFields: def.preserveUnknownFields }),
          hasStatus: v.status,
          scale: v.scale,
          columns: v.columns,
          selectableFields: v.selectableFields,
        })),
    });
    this.#ctx.strategies.set(kind, strategy);
    if (previous !== undefined && previous.kind.kind !== kind.kind)
      this.#ctx.strategies.delete(previous.kind);
    this.#registry.setCustom(def.name, types);
    this.#published?.set(
      def.name,
      types.map((type) => {
        const version = def.versions.find((v) => v.name === type.version);
        return {
          type,
          schema: version?.schema,
          preserveUnknownFields: def.preserveUnknownFields,
          selectableFields: version?.selectableFields ?? [],
        };
      }),
    );
    const storageResource = `${def.group}/${def.acceptedNames.plural}`;
    if (previous !== undefined && previous.storageResource !== storageResource) {
      this.#ctx.watchCaches?.remove(previous.storageResource);
    }
    this.#serving.set(def.name, { kind, storageResource, types });
    this.#conversions?.setTerminating(storageResource, def.deleting);
    const storage = storageVersionOf(def);
    const hasDefaults = def.versions.some((v) => v.schema !== undefined && declaresDefault(v.schema));
    if ((def.versions.length > 1 || hasDefaults) && storage !== undefined) {
      this.#conversions?.set(storageResource, {
        storageApiVersion: `${def.group}/${storage}`,
        convert:
          def.conversion.strategy === 'Webhook'
            ? webhookConversion(def.conversion, (ns, svc, port) => this.#resolveService(ns, svc, port))
            : convertNone,
        ...(hasDefaults ? { readDefaults: (obj: KubeObject) => strategy.default(obj) } : {}),
      });
    } else {
      this.#conversions?.delete(storageResource);
    }
  }

  #unserve(name: string): void {
    const serving = this.#serving.get(name);
    if (serving === undefined) return;
    this.#serving.delete(name);
    this.#registry.removeCustom(name);
    this.#published?.remove(name);
    this.#ctx.strategies.delete(serving.kind);
    this.#ctx.watchCaches?.remove(serving.storageResource);
    this.#conversions?.delete(serving.storageResource);
    this.#conversions?.setTerminating(serving.storageResource, false);
  }

  /**
   * `host:port` of a ready endpoint of service `name` for its port `port` (the Endpoints port of
   * the same name, else the first), or undefined.
   */
  async #resolveService(namespace: string, name: string, port: number): Promise<string | undefined> {
    const read = async (key: string): Promise<KubeObject | undefined> => {
      const { kv } = await this.#ctx.store.get(key);
      return kv === undefined ? undefined : decodeStored(kv.value, kv.modRevision);
    };
    const service = await read(`/services/specs/${namespace}/${name}`);
    const endpoints = await read(`/services/endpoints/${namespace}/${name}`);
    if (service === undefined || endpoints === undefined) return undefined;
    const ports = (
      isJsonObject(service['spec']) && Array.isArray(service['spec']['ports']) ? service['spec']['ports'] : []
    ) as {
      name?: string;
      port?: number;
    }[];
    const portName = ports.find((p) => p.port === port)?.name;
    const subsets = (Array.isArray(endpoints['subsets']) ? endpoints['subsets'] : []) as {
      addresses?: { ip?: string }[];
      ports?: { name?: string; port?: number }[];
    }[];
    for (const subset of subsets) {
      const ip = subset.addresses?.[0]?.ip;
      const target =
        subset.ports?.find((p) => portName === undefined || p.name === portName) ?? subset.ports?.[0];
      if (ip !== undefined && target?.port !== undefined) {
        return ip.includes(':') ? `[${ip}]:${target.port}` : `${ip}:${target.port}`;
      }
    }
    return undefined;
  }

  /**
   * Reads the CRD, lets `mutate` change its status and conditions, and writes it if anything
   * changed. True when it wrote; false when nothing changed, or the CRD is gone or changed
   * meanwhile (the next event reconciles again).
   */
  async #writeStatus(
    name: string,
    mutate: (status: Record<string, unknown>, conditions: CrdCondition[], obj: KubeObject) => void,
  ): Promise<boolean> {
    const key = `${CRD_PREFIX}${name}`;
    try {
      const { kv } = await this.#ctx.store.get(key);
      if (kv === undefined) return false;
      const obj = decodeStored(kv.value, kv.modRevision);
      const before = JSON.stringify(obj);
      const status: Record<string, unknown> = isJsonObject(obj['status']) ? { ...obj['status'] } : {};
      const conditions: CrdCondition[] = Array.isArray(status['conditions'])
        ? (status['conditions'] as CrdCondition[]).map((c) => ({ ...c }))
        : [];
      mutate(status, conditions, obj);
      status['conditions'] = conditions;
      obj['status'] = status;
      if (JSON.stringify(obj) === before) return false;
      const finalizers = obj.metadata.finalizers ?? [];
      if (obj.metadata.deletionTimestamp && finalizers.length === 0) {
        await this.#ctx.store.delete(key, { ifModRevision: kv.modRevision });
      } else {
        await this.#ctx.store.update(key, encodeForStorage(obj), { ifModRevision: kv.modRevision });
      }
      return true;
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) return false;
      this.#onError(`customresourcedefinition ${name}: status update failed`, err);
      return false;
    }
  }

  /** kube's finalizer controller for one CRD (see the module comment). */
  async #cleanup(name: string): Promise<void> {
    const now = (): string => rfc3339Seconds(this.#ctx.now());
    const def = this.#defs.get(name);
    if (def === undefined) return;
    await this.#writeStatus(name, (_s, conditions) =>
      setCondition(
        conditions,
        {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionInProgress',
          message: 'CustomResource deletion is in progress',
        },
        now(),
      ),
    );
    let outcome: CrdCondition = {
      type: 'Terminating',
      status: 'False',
      reason: 'InstanceDeletionCompleted',
      message: 'removed all instances',
    };
    const type = this.#serving.get(name)?.types[0];
    if (type !== undefined && isTrue(def, 'Established')) {
      try {
        const left = await this.#deleteInstances(type);
        if (left > 0) {
          outcome = {
            type: 'Terminating',
            status: 'True',
            reason: 'InstanceDeletionCheck',
            message: `could not confirm zero CustomResources remaining: timed out waiting for the condition`,
          };
        }
      } catch (err) {
        outcome = {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionFailed',
          message: `could not list instances: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
    }
    if (this.#stopped) return;
    const done = outcome.status === 'False';
    await this.#writeStatus(name, (_s, conditions, obj) => {
      setCondition(conditions, outcome, now());
      if (done) {
        const finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
        obj.metadata.finalizers = finalizers;
        if (finalizers.length === 0) delete obj.metadata.finalizers;
      }
    });
  }

  /** Deletes every object of `type`'s storage; the count still there after waiting. */
  async #deleteInstances(type: ResourceType): Promise<number> {
    const span: KeySpan = { prefix: `/${type.storageResource}/` };
    const deadline = Date.now() + CLEANUP_WAIT_MS;
    for (;;) {
      const listed = await this.#ctx.store.range(span);
      if (listed.items.length === 0 || this.#stopped) return listed.items.length;
      for (const kv of listed.items) {
        const obj = decodeStored(kv.value, kv.modRevision);
        if (obj.metadata.deletionTimestamp) continue;
        try {
          await deleteObject(this.#ctx, type, obj.metadata.namespace, obj.metadata.name ?? '', {});
        } catch {
          // Gone meanwhile, or a race: the next round sees.
        }
      }
      if (Date.now() > deadline) return (await this.#ctx.store.range(span)).items.length;
      const again = await this.#ctx.store.range(span);
      if (again.items.length === 0) return 0;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
