/**
 * The node authorizer's graph (kube's node graph, reduced to what it decides on): for each node,
 * the pods bound to it (`spec.nodeName`), and for each pod the Secrets, ConfigMaps,
 * PersistentVolumeClaims and service account it references. Kept by a list and watch of the
 * pods' storage prefix; restarted from a fresh list on failure.
 */
import type { Store } from '../../storage/interface.js';

/** What one pod gives its node access to. */
interface PodRefs {
  readonly node: string;
  readonly namespace: string;
  readonly secrets: readonly string[];
  readonly configmaps: readonly string[];
  readonly pvcs: readonly string[];
  readonly serviceAccount: string;
}

type Json = Record<string, unknown>;
const decoder = new TextDecoder();

function obj(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
}
function arr(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(obj) : [];
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The references of a stored pod. */
export function podRefs(pod: Json): PodRefs {
  const meta = obj(pod['metadata']);
  const spec = obj(pod['spec']);
  const secrets = new Set<string>();
  const configmaps = new Set<string>();
  const pvcs = new Set<string>();
  for (const s of arr(spec['imagePullSecrets'])) secrets.add(str(s['name']));
  for (const v of arr(spec['volumes'])) {
    secrets.add(str(obj(v['secret'])['secretName']));
    configmaps.add(str(obj(v['configMap'])['name']));
    pvcs.add(str(obj(v['persistentVolumeClaim'])['claimName']));
    if (v['ephemeral'] !== undefined) pvcs.add(`${str(meta['name'])}-${str(v['name'])}`);
    for (const src of arr(obj(v['projected'])['sources'])) {
      secrets.add(str(obj(src['secret'])['name']));
      configmaps.add(str(obj(src['configMap'])['name']));
    }
    for (const key of [
      'cephfs',
      'flexVolume',
      'rbd',
      'iscsi',
      'scaleIO',
      'storageos',
      'cinder',
      'csi',
      'azureFile',
    ]) {
      secrets.add(str(obj(obj(v[key])['secretRef'])['name']));
    }
  }
  const containers = [
    ...arr(spec['containers']),
    ...arr(spec['initContainers']),
    ...arr(spec['ephemeralContainers']),
  ];
  for (const c of containers) {
    for (const e of arr(c['envFrom'])) {
      secrets.add(str(obj(e['secretRef'])['name']));
      configmaps.add(str(obj(e['configMapRef'])['name']));
    }
    for (const e of arr(c['env'])) {
      const from = obj(e['valueFrom']);
      secrets.add(str(obj(from['secretKeyRef'])['name']));
      configmaps.add(str(obj(from['configMapKeyRef'])['name']));
    }
  }
  const clean = (s: Set<string>): string[] => [...s].filter((x) => x !== '');
  return {
    node: str(spec['nodeName']),
    namespace: str(meta['namespace']),
    secrets: clean(secrets),
    configmaps: clean(configmaps),
    pvcs: clean(pvcs),
    serviceAccount: str(spec['serviceAccountName']) || 'default',
  };
}

/** Pods by node, kept current by a watch. */
export class NodeGraph {
  readonly #store: Store;
  readonly #pods = new Map<string, PodRefs>();
  #watch: { close(): void } | undefined;
  #closed = false;
  #synced = false;
  readonly #onError: (err: unknown) => void;

  constructor(store: Store, onError: (err: unknown) => void) {
    this.#store = store;
    this.#onError = onError;
  }

  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    void this.#run();
  }

  close(): void {
    this.#closed = true;
    this.#watch?.close();
  }

  /** True when a pod on `node` in `namespace` references the object. */
  related(
    node: string,
    kind: 'secrets' | 'configmaps' | 'pvcs' | 'serviceAccount',
    namespace: string,
    name: string,
  ): boolean {
    for (const p of this.#pods.values()) {
      if (p.node !== node || p.namespace !== namespace) continue;
      if (kind === 'serviceAccount' ? p.serviceAccount === name : p[kind].includes(name)) return true;
    }
    return false;
  }

  #put(key: string, value: Uint8Array): void {
    try {
      const refs = podRefs(JSON.parse(decoder.decode(value)) as Json);
      if (refs.node === '') this.#pods.delete(key);
      else this.#pods.set(key, refs);
    } catch (err) {
      this.#onError(err);
    }
  }

  async #run(): Promise<void> {
    const prefix = '/pods/';
    while (!this.#closed) {
      try {
        const list = await this.#store.range({ prefix });
        this.#pods.clear();
        for (const kv of list.items) this.#put(kv.key, kv.value);
        this.#synced = true;
        const watch = this.#store.watch({ prefix }, { fromRevision: list.revision + 1n });
        this.#watch = watch;
        for await (const ev of watch) {
          if (ev.type === 'put') this.#put(ev.kv.key, ev.kv.value);
          else if (ev.type === 'delete') this.#pods.delete(ev.kv.key);
        }
      } catch (err) {
        if (this.#closed) return;
        this.#onError(err);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}
