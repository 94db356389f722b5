/**
 * kubelet's watch-based ConfigMap and Secret managers (`configMapAndSecretChangeDetectionStrategy:
 * Watch`): every object a running pod's volumes name gets its own list+watch, narrowed by
 * `fieldSelector=metadata.name=<name>` (which the Node authorizer allows for objects of pods
 * bound to the node). Reads come from that watch once it has listed; a change to the object
 * calls `changed` with the pods using it, so they are synced again and their files rewritten.
 *
 * A watch lives while some pod references its object ({@link ObjectWatcher.register} replaces a
 * pod's set of references; {@link ObjectWatcher.unregister} drops them).
 */
import { Reflector, type Client, type ResourceRef, type TypedObject } from '../../client/index.js';

interface Entry<T> {
  object: T | undefined;
  synced: boolean;
  readonly waiters: (() => void)[];
  readonly abort: AbortController;
  readonly pods: Set<string>;
}

const SYNC_WAIT_MS = 2000;

/** Per-object watches of one resource (configmaps or secrets). */
export class ObjectWatcher<T extends TypedObject> {
  readonly #client: Client;
  readonly #ref: ResourceRef;
  readonly #changed: (pods: readonly string[]) => void;
  /** Key `namespace/name`. */
  readonly #entries = new Map<string, Entry<T>>();
  readonly #byPod = new Map<string, Set<string>>();

  constructor(client: Client, ref: ResourceRef, changed: (pods: readonly string[]) => void) {
    this.#client = client;
    this.#ref = ref;
    this.#changed = changed;
  }

  /** Sets the objects (`namespace/name` keys) a pod references; starts and stops watches. */
  register(podUid: string, keys: ReadonlySet<string>): void {
    const old = this.#byPod.get(podUid) ?? new Set<string>();
    for (const k of keys) if (!old.has(k)) this.#entry(k).pods.add(podUid);
    for (const k of old) if (!keys.has(k)) this.#release(k, podUid);
    if (keys.size === 0) this.#byPod.delete(podUid);
    else this.#byPod.set(podUid, new Set(keys));
  }

  /** Drops every reference of a pod. */
  unregister(podUid: string): void {
    this.register(podUid, new Set());
  }

  /**
   * The object as its watch last saw it (undefined: it does not exist). Waits up to 2 s for a
   * new watch's first list; `fallback` reads the API when the watch has not listed by then.
   */
  async get(namespace: string, name: string, fallback: () => Promise<T | undefined>): Promise<T | undefined> {
    const e = this.#entries.get(`${namespace}/${name}`);
    if (!e) return fallback();
    if (!e.synced) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        e.waiters.push(resolve);
        timer = setTimeout(resolve, SYNC_WAIT_MS);
      });
      clearTimeout(timer);
    }
    return e.synced ? e.object : fallback();
  }

  /** Stops every watch. */
  stop(): void {
    for (const e of this.#entries.values()) e.abort.abort();
    this.#entries.clear();
    this.#byPod.clear();
  }

  #release(key: string, podUid: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    e.pods.delete(podUid);
    if (e.pods.size === 0) {
      e.abort.abort();
      this.#entries.delete(key);
    }
  }

  #entry(key: string): Entry<T> {
    const found = this.#entries.get(key);
    if (found) return found;
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const e: Entry<T> = {
      object: undefined,
      synced: false,
      waiters: [],
      abort: new AbortController(),
      pods: new Set(),
    };
    this.#entries.set(key, e);
    const set = (obj: T | undefined): void => {
      const before = e.object?.metadata?.resourceVersion;
      const wasSynced = e.synced;
      e.object = obj;
      e.synced = true;
      for (const w of e.waiters.splice(0)) w();
      if (wasSynced && before !== obj?.metadata?.resourceVersion) this.#changed([...e.pods]);
    };
    const reflector = new Reflector<T>(
      this.#client.resource<T>(this.#ref),
      {
        replace: (items) => set(items.find((o) => o.metadata?.name === name)),
        apply: (type, obj) => set(type === 'DELETED' ? undefined : obj),
      },
      {
        namespace,
        fieldSelector: `metadata.name=${name}`,
        log: (message, err) => console.error(`agent: watching ${this.#ref.resource} ${key}: ${message}`, err),
      },
    );
    void reflector.run(e.abort.signal);
    return e;
  }
}
