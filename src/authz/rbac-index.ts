/**
 * The in-memory RBAC index the authorizer decides from (no storage read per request): Roles,
 * ClusterRoles, RoleBindings and ClusterRoleBindings, each kept by a list then a watch of its
 * storage prefix (kube's RBAC informers), and the bindings indexed by the user and group names
 * their subjects name. A watch that fails is restarted from a fresh list.
 *
 * The four watches run apart, so the index may hold a binding before the role it names (kube's
 * informers too). {@link RbacIndex.catchUp} closes that gap on demand: it waits until every kind
 * has applied the store's revision of the moment (asking idle watches for progress), so a caller
 * can make sure a decision sees every write that finished before it asked.
 */
import type { Store, WatchEvent } from '../../storage/interface.js';
import type { UserInfo } from '../authn/user.js';
import type { PolicyRule, RoleRef, Subject } from './rbac-rules.js';
import { serviceAccountUser } from './rbac-rules.js';

/** A Role or ClusterRole as the index keeps it. */
export interface IndexedRole {
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly PolicyRule[];
  /** The stored object (aggregation and reconcile read labels and aggregationRule). */
  readonly object: RbacObject;
}

/** A RoleBinding or ClusterRoleBinding as the index keeps it. */
export interface IndexedBinding {
  /** '' for a ClusterRoleBinding. */
  readonly namespace: string;
  readonly name: string;
  readonly roleRef: RoleRef;
  readonly subjects: readonly Subject[];
}

/** The stored shape of the four RBAC kinds (fields the index reads). */
export interface RbacObject {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly rules?: readonly PolicyRule[] | null;
  readonly aggregationRule?: { readonly clusterRoleSelectors?: readonly LabelSelector[] } | null;
  readonly roleRef?: RoleRef;
  readonly subjects?: readonly Subject[] | null;
}

/** A label selector (matchLabels and matchExpressions). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] }[];
}

type Kind = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';
const KINDS: readonly Kind[] = ['clusterroles', 'roles', 'clusterrolebindings', 'rolebindings'];

/** A change the index applied (for the aggregation controller). */
export type IndexListener = (kind: Kind, key: string) => void;

function subjectKeys(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return `u:${subject.name ?? ''}`;
    case 'Group':
      return `g:${subject.name ?? ''}`;
    case 'ServiceAccount': {
      const ns =
        subject.namespace === undefined || subject.namespace === '' ? bindingNamespace : subject.namespace;
      return `u:${serviceAccountUser(ns, subject.name ?? '')}`;
    }
    default:
      return undefined;
  }
}

function splitKey(prefix: string, key: string): { namespace: string; name: string } {
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash === -1
    ? { namespace: '', name: rest }
    : { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
}

const decoder = new TextDecoder();

/** The RBAC objects of one server, kept current by watches. */
export class RbacIndex {
  readonly #store: Store;
  readonly #roles = new Map<string, IndexedRole>();
  readonly #clusterRoles = new Map<string, IndexedRole>();
  readonly #bindings = new Map<string, IndexedBinding>();
  /** subject key (`u:name` / `g:name`) -> binding keys (`ns/name`, cluster bindings `/name`). */
  readonly #bySubject = new Map<string, Set<string>>();
  readonly #synced = new Set<Kind>();
  readonly #listeners = new Set<IndexListener>();
  readonly #watches = new Map<Kind, { close(): void; requestProgress(): void }>();
  /** Per kind: every event up to this revision is applied. */
  readonly #applied = new Map<Kind, bigint>();
  /** Callers of {@link catchUp} waiting for a revision. */
  #waiters: { revision: bigint; resolve: () => void }[] = [];
  #closed = false;
  #readyResolve: (() => void) | undefined;
  readonly #ready: Promise<void>;
  readonly #onError: (err: unknown) => void;

  constructor(store: Store, onError: (err: unknown) => void = () => undefined) {
    this.#store = store;
    this.#onError = onError;
    this.#ready = new Promise((resolve) => (this.#readyResolve = resolve));
  }

  /** Starts the four list-and-watch loops. */
  start(): void {
    for (const kind of KINDS) void this.#run(kind);
  }

  /** True once every kind was listed. */
  get synced(): boolean {
    return this.#synced.size === KINDS.length;
  }

  /** Resolves true once synced, false after `timeoutMs`. */
  async waitSynced(timeoutMs: number): Promise<boolean> {
    if (this.synced) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const result = await Promise.race([this.#ready.then(() => true), timeout]);
    clearTimeout(timer);
    return result;
  }

  /** Called after each applied change. */
  onChange(listener: IndexListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#watches.values()) w.close();
    this.#watches.clear();
    for (const w of this.#waiters) w.resolve();
    this.#waiters = [];
  }

  /** The revision every kind has applied (0 before the first lists). */
  get appliedRevision(): bigint {
    if (!this.synced) return 0n;
    let min: bigint | undefined;
    for (const r of this.#applied.values()) if (min === undefined || r < min) min = r;
    return min ?? 0n;
  }

  /**
   * Waits until every kind has applied the store's current revision (read now), so that every
   * write finished before the call is in the index. Resolves false when `timeoutMs` passes first
   * (or the index closes); true at once when already there.
   */
  async catchUp(timeoutMs: number): Promise<boolean> {
    const target = await this.#store.currentRevision();
    if (this.appliedRevision >= target) return true;
    if (this.#closed) return false;
    for (const [kind, watch] of this.#watches) {
      if ((this.#applied.get(kind) ?? 0n) < target) watch.requestProgress();
    }
    let timer: NodeJS.Timeout | undefined;
    const reached = new Promise<boolean>((resolve) => {
      this.#waiters.push({ revision: target, resolve: () => resolve(true) });
    });
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const result = await Promise.race([reached, timeout]);
    clearTimeout(timer);
    return result && this.appliedRevision >= target;
  }

  #advance(kind: Kind, revision: bigint): void {
    if ((this.#applied.get(kind) ?? -1n) >= revision) return;
    this.#applied.set(kind, revision);
    if (this.#waiters.length === 0) return;
    const at = this.appliedRevision;
    const done = this.#waiters.filter((w) => w.revision <= at);
    if (done.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => w.revision > at);
    for (const w of done) w.resolve();
  }

  clusterRole(name: string): IndexedRole | undefined {
    return this.#clusterRoles.get(name);
  }

  role(namespace: string, name: string): IndexedRole | undefined {
    return this.#roles.get(`${namespace}/${name}`);
  }

  /** A RoleBinding (`namespace` set) or ClusterRoleBinding (`namespace` ''). */
  binding(namespace: string, name: string): IndexedBinding | undefined {
    return this.#bindings.get(`${namespace}/${name}`);
  }

  /** Every ClusterRole (aggregation). */
  clusterRoles(): IterableIterator<IndexedRole> {
    return this.#clusterRoles.values();
  }

  /**
   * The bindings that may name `user` (by user name or group), cluster bindings and the
   * bindings of `namespace` (every namespace when undefined). Callers still check the subjects.
   */
  *bindingsFor(user: UserInfo, namespace: string | undefined): Generator<IndexedBinding> {
    const seen = new Set<string>();
    const keys = [`u:${user.name}`, ...user.groups.map((g) => `g:${g}`)];
    for (const k of keys) {
      const set = this.#bySubject.get(k);
      if (set === undefined) continue;
      for (const id of set) {
        if (seen.has(id)) continue;
        const b = this.#bindings.get(id);
        if (b === undefined) continue;
        if (b.namespace !== '' && namespace !== undefined && b.namespace !== namespace) continue;
        seen.add(id);
        yield b;
      }
    }
  }

  async #run(kind: Kind): Promise<void> {
    const prefix = `/${kind}/`;
    while (!this.#closed) {
      try {
        const list = await this.#store.range({ prefix });
        this.#reset(
          kind,
          prefix,
          list.items.map((kv) => ({ key: kv.key, value: kv.value })),
        );
        this.#synced.add(kind);
        this.#advance(kind, list.revision);
        if (this.synced) this.#readyResolve?.();
        const watch = this.#store.watch({ prefix }, { fromRevision: list.revision + 1n });
        this.#watches.set(kind, watch);
        try {
          for await (const ev of watch) {
            this.#apply(kind, prefix, ev);
            this.#advance(kind, ev.revision);
          }
        } finally {
          if (this.#watches.get(kind) === watch) this.#watches.delete(kind);
        }
      } catch (err) {
        if (this.#closed) return;
        this.#onError(err);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  #reset(kind: Kind, prefix: string, items: readonly { key: string; value: Uint8Array }[]): void {
    const present = new Set<string>();
    for (const { key, value } of items) {
      present.add(key);
      this.#put(kind, prefix, key, value);
    }
    for (const key of this.#keysOf(kind, prefix)) if (!present.has(key)) this.#delete(kind, prefix, key);
  }

  #keysOf(kind: Kind, prefix: string): string[] {
    const out: string[] = [];
    const ids =
      kind === 'clusterroles'
        ? [...this.#clusterRoles.keys()].map((n) => n)
        : kind === 'roles'
          ? [...this.#roles.keys()]
          : [...this.#bindings.keys()]
              .filter((id) => id.startsWith('/') === (kind === 'clusterrolebindings'))
              .map((id) => (id.startsWith('/') ? id.slice(1) : id));
    for (const id of ids) out.push(prefix + id);
    return out;
  }

  #apply(kind: Kind, prefix: string, ev: WatchEvent): void {
    if (ev.type === 'put') this.#put(kind, prefix, ev.kv.key, ev.kv.value);
    else if (ev.type === 'delete') this.#delete(kind, prefix, ev.kv.key);
  }

  #put(kind: Kind, prefix: string, key: string, value: Uint8Array): void {
    let obj: RbacObject;
    try {
      obj = JSON.parse(decoder.decode(value)) as RbacObject;
    } catch (err) {
      this.#onError(err);
      return;
    }
    const { namespace, name } = splitKey(prefix, key);
    if (kind === 'clusterroles' || kind === 'roles') {
      const role: IndexedRole = { namespace, name, rules: obj.rules ?? [], object: obj };
      if (kind === 'clusterroles') this.#clusterRoles.set(name, role);
      else this.#roles.set(`${namespace}/${name}`, role);
    } else {
      const id = `${namespace}/${name}`;
      this.#unindex(id);
      const binding: IndexedBinding = {
        namespace,
        name,
        roleRef: obj.roleRef ?? {},
        subjects: obj.subjects ?? [],
      };
      this.#bindings.set(id, binding);
      for (const s of binding.subjects) {
        const k = subjectKeys(s, namespace);
        if (k === undefined) continue;
        let set = this.#bySubject.get(k);
        if (set === undefined) this.#bySubject.set(k, (set = new Set()));
        set.add(id);
      }
    }
    this.#notify(kind, key);
  }

  #unindex(id: string): void {
    const old = this.#bindings.get(id);
    if (old === undefined) return;
    for (const s of old.subjects) {
      const k = subjectKeys(s, old.namespace);
      if (k === undefined) continue;
      const set = this.#bySubject.get(k);
      set?.delete(id);
      if (set?.size === 0) this.#bySubject.delete(k);
    }
    this.#bindings.delete(id);
  }

  #delete(kind: Kind, prefix: string, key: string): void {
    const { namespace, name } = splitKey(prefix, key);
    if (kind === 'clusterroles') this.#clusterRoles.delete(name);
    else if (kind === 'roles') this.#roles.delete(`${namespace}/${name}`);
    else this.#unindex(`${namespace}/${name}`);
    this.#notify(kind, key);
  }

  #notify(kind: Kind, key: string): void {
    for (const l of this.#listeners) {
      try {
        l(kind, key);
      } catch (err) {
        this.#onError(err);
      }
    }
  }
}
