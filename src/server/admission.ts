/**
 * Admission in one server, wired from the flags: the enabled plugins in kube's order
 * (`--enable-admission-plugins`, `--disable-admission-plugins`), their configuration
 * (`--admission-control-config-file`: an AdmissionConfiguration whose plugin entries carry an
 * inline `configuration` or a `path`, relative to the file), the object lookups they read
 * through (watch caches, else storage), and what runs beside them (the quota controller, the
 * system priority classes).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AlreadyExistsError, ConflictError } from '../../storage/errors.js';
import { AdmissionChain, type AdmissionPlugin } from '../admission/index.js';
import type { AdmissionObjects, KindRef } from '../admission/objects.js';
import {
  buildAdmissionPlugins,
  enabledPluginNames,
  pluginFlagErrors,
  type Authorize,
} from '../admission/plugins.js';
import { ensureSystemPriorityClasses } from '../admission/priority.js';
import {
  decodeStored,
  encodeForStorage,
  isJsonObject,
  type JsonObject,
  type KubeObject,
} from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { collectionSpan, objectKey } from '../resource/keys.js';
import { SharedDecodes } from '../resource/shared-decodes.js';
import { lowerBound } from '../watchcache/cache-state.js';
import type { ControllerFactory } from './resources.js';

const CONFIG_API_VERSIONS = [
  'apiserver.config.k8s.io/v1',
  'apiserver.config.k8s.io/v1alpha1',
  'apiserver.k8s.io/v1alpha1',
];

/**
 * The per-plugin configurations of an `--admission-control-config-file` (by plugin name).
 * @throws Error with what is wrong (the server does not start)
 */
export function loadAdmissionConfig(file: string): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  if (file === '') return out;
  const read = (path: string): unknown => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(
        `failed to read admission control configuration file "${path}": ${(err as Error).message}`,
      );
    }
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw new Error(
        `failed to parse admission control configuration file "${path}": ${(err as Error).message}`,
      );
    }
  };
  const doc = read(file);
  if (
    !isJsonObject(doc) ||
    doc['kind'] !== 'AdmissionConfiguration' ||
    !CONFIG_API_VERSIONS.includes(String(doc['apiVersion']))
  ) {
    throw new Error(
      `admission control configuration file "${file}" must be an AdmissionConfiguration of apiserver.config.k8s.io/v1`,
    );
  }
  const plugins = doc['plugins'] ?? [];
  if (!Array.isArray(plugins))
    throw new Error(`admission control configuration file "${file}": plugins must be a list`);
  for (const entry of plugins as unknown[]) {
    if (!isJsonObject(entry) || typeof entry['name'] !== 'string' || entry['name'] === '') {
      throw new Error(`admission control configuration file "${file}": every plugin needs a name`);
    }
    const name = entry['name'];
    if (isJsonObject(entry['configuration'])) out.set(name, entry['configuration']);
    else if (typeof entry['path'] === 'string' && entry['path'] !== '') {
      const config = read(resolve(dirname(file), entry['path']));
      if (!isJsonObject(config))
        throw new Error(`admission configuration of ${name} in "${entry['path']}" is not an object`);
      out.set(name, config);
    }
  }
  return out;
}

/** The objects plugins read, over the resource context once it exists. */
class ContextObjects implements AdmissionObjects {
  #ctx: ResourceContext | undefined;
  /** What `get` and `list` answer (shared and frozen: see AdmissionObjects). */
  readonly #decoded = new SharedDecodes();
  readonly #types = new Map<string, ResourceType | null>();

  attach(ctx: ResourceContext): void {
    this.#ctx = ctx;
  }

  get #context(): ResourceContext {
    if (this.#ctx === undefined) throw new Error('admission lookups before the resource layer exists');
    return this.#ctx;
  }

  #type(k: KindRef): ResourceType | undefined {
    const key = `${k.group}/${k.kind}`;
    let t = this.#types.get(key);
    if (t === undefined) {
      t =
        this.#context.registry.all().find((x) => x.group === k.group && x.kind === k.kind && !x.virtual) ??
        null;
      this.#types.set(key, t);
    }
    return t ?? undefined;
  }

  resolve(group: string, plural: string): (KindRef & { plural: string }) | undefined {
    const t = this.#context.registry
      .all()
      .find((x) => x.group === group && x.plural === plural && !x.virtual);
    return t === undefined ? undefined : { group: t.group, kind: t.kind, plural: t.plural };
  }

  async get(k: KindRef, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const type = this.#type(k);
    if (type === undefined) return undefined;
    const key = objectKey(type, namespace, name);
    const cache = this.#context.watchCaches?.for(type);
    if (cache?.ready === true) {
      const v = cache.get(key);
      if (v !== undefined) return this.#decoded.of(key, v.value, v.revision);
    }
    const { kv } = await this.#context.store.get(key);
    return kv === undefined ? undefined : this.#decoded.of(key, kv.value, kv.modRevision);
  }

  async list(k: KindRef, namespace: string | undefined): Promise<KubeObject[]> {
    const type = this.#type(k);
    if (type === undefined) return [];
    const cache = this.#context.watchCaches?.for(type);
    if (cache?.ready !== true) return this.listLive(k, namespace);
    const span = collectionSpan(type, type.namespaced ? namespace : undefined);
    const prefix = 'prefix' in span ? span.prefix : '';
    const { items } = cache.snapshot();
    const out: KubeObject[] = [];
    for (let i = lowerBound(items, prefix); i < items.length; i++) {
      const v = items[i];
      if (v === undefined || !v.key.startsWith(prefix)) break;
      out.push(this.#decoded.of(v.key, v.value, v.revision));
    }
    return out;
  }

  async listLive(k: KindRef, namespace: string | undefined): Promise<KubeObject[]> {
    const type = this.#type(k);
    if (type === undefined) return [];
    const { items } = await this.#context.store.range(
      collectionSpan(type, type.namespaced ? namespace : undefined),
    );
    return items.map((kv) => decodeStored(kv.value, kv.modRevision));
  }

  async replace(k: KindRef, obj: KubeObject): Promise<KubeObject | undefined> {
    const type = this.#type(k);
    if (type === undefined) return undefined;
    const key = objectKey(type, obj.metadata.namespace ?? undefined, obj.metadata.name ?? '');
    try {
      const { kv } = await this.#context.store.update(key, encodeForStorage(obj), {
        ifModRevision: BigInt(obj.metadata.resourceVersion ?? '0'),
      });
      return decodeStored(kv.value, kv.modRevision);
    } catch (err) {
      if (err instanceof ConflictError) return undefined;
      throw err;
    }
  }

  async createIfMissing(k: KindRef, obj: KubeObject): Promise<boolean> {
    const type = this.#type(k);
    if (type === undefined) return false;
    const key = objectKey(type, obj.metadata.namespace ?? undefined, obj.metadata.name ?? '');
    const stored: KubeObject = {
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: randomUUID(),
        creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        generation: 1,
      },
    };
    try {
      await this.#context.store.create(key, encodeForStorage(stored));
      return true;
    } catch (err) {
      if (err instanceof AlreadyExistsError) return false;
      throw err;
    }
  }
}

/** What {@link buildAdmission} is given. */
export interface AdmissionDeps {
  readonly enable: readonly string[];
  readonly disable: readonly string[];
  /** `--admission-control-config-file` (absolute), or ''. */
  readonly configFile: string;
  /** Plugins made elsewhere, by name (ServiceAccount; later the webhook plugins). */
  readonly external: ReadonlyMap<string, AdmissionPlugin>;
  readonly authorize: Authorize | undefined;
  readonly tolerationSeconds: { readonly notReady: number; readonly unreachable: number };
  readonly logError: (message: string, err: unknown) => void;
}

/** The admission of one server. */
export interface Admission {
  readonly chain: AdmissionChain;
  /** NamespaceLifecycle is enabled (the resource handler enforces it inline). */
  readonly namespaceLifecycle: boolean;
  /** Started with the resource controllers (quota status, system priority classes). */
  readonly controllers: readonly ControllerFactory[];
  /** Hands the lookups the resource context (right after the resource layer is built). */
  attach(ctx: ResourceContext): void;
}

/** Builds the chain. @throws Error for unknown plugin names or a bad configuration file */
export function buildAdmission(deps: AdmissionDeps): Admission {
  const errors = pluginFlagErrors(deps.enable, deps.disable);
  if (errors.length > 0) throw new Error(errors.join('; '));
  const configs = loadAdmissionConfig(deps.configFile);
  const objects = new ContextObjects();
  const names = enabledPluginNames(deps.enable, deps.disable);
  const plugins = buildAdmissionPlugins(
    names,
    { objects, now: () => new Date(), authorize: deps.authorize, tolerationSeconds: deps.tolerationSeconds },
    configs,
    deps.external,
  );
  const controllers: ControllerFactory[] = [];
  if (names.includes('Priority')) {
    controllers.push(() => {
      void ensureSystemPriorityClasses(objects).catch((err: unknown) =>
        deps.logError('system priority classes', err),
      );
      return { stop: async () => undefined };
    });
  }
  return {
    chain: new AdmissionChain(plugins),
    namespaceLifecycle: names.includes('NamespaceLifecycle'),
    controllers,
    attach: (ctx) => objects.attach(ctx),
  };
}
