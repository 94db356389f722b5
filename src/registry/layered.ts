/**
 * The registry a server serves from: the built-in kinds (a {@link KindRegistry}, immutable)
 * layered under a set of custom resource types that come and go at run time (one set per
 * CustomResourceDefinition). Lookups see both layers; a built-in type always wins over a custom
 * one of the same group, version and resource. Every change bumps {@link LayeredRegistry.generation}
 * and tells the listeners, so documents rendered from the registry (discovery, OpenAPI) know to
 * render again.
 */
import type { KindRegistry, ServedGroup } from './registry.js';
import type { Registry, ResourceType } from './types.js';

/** A registry whose content may change while the server runs. */
export interface ServedRegistry extends Registry {
  /** Served groups in discovery order (the core group `''` first). */
  groups(): readonly ServedGroup[];
  /** The group named `name`, or undefined when it is not served. */
  group(name: string): ServedGroup | undefined;
  /** The types served at one group version, sorted by plural. */
  resourcesOf(group: string, version: string): readonly ResourceType[];
  /** Changes with every change of the served types (0 for a registry that never changes). */
  readonly generation: number;
}

function gvKey(group: string, version: string): string {
  return `${group}/${version}`;
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * kube's version priority (`version.CompareKubeAwareVersionStrings`): GA before beta before
 * alpha, higher numbers first; versions that are not kube-like come last, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (ma === null || mb === null) {
    if (ma !== null) return -1;
    if (mb !== null) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const rank = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  const ra = rank(ma);
  const rb = rank(mb);
  if (ra !== rb) return rb - ra;
  const major = Number(mb[1]) - Number(ma[1]);
  if (major !== 0) return major;
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

/** The custom types of one owner (a CRD), with the group's version order. */
interface CustomSet {
  readonly types: readonly ResourceType[];
}

/** Built-in kinds plus run-time custom types. One per server. */
export class LayeredRegistry implements ServedRegistry {
  readonly #base: KindRegistry;
  readonly #sets = new Map<string, CustomSet>();
  readonly #listeners = new Set<() => void>();
  #generation = 0;
  // Derived views of the custom layer, rebuilt on change.
  #byResource = new Map<string, ResourceType>();
  #byKind = new Map<string, ResourceType>();
  #byGroupVersion = new Map<string, readonly ResourceType[]>();
  #groups: readonly ServedGroup[];
  #all: readonly ResourceType[];

  constructor(base: KindRegistry) {
    this.#base = base;
    this.#groups = base.groups();
    this.#all = base.all();
  }

  /** The built-in layer. */
  get base(): KindRegistry {
    return this.#base;
  }

  get generation(): number {
    return this.#generation;
  }

  /**
   * Serves `types` for `owner` (a CRD name), replacing what `owner` served before. Types a
   * built-in already serves are ignored.
   */
  setCustom(owner: string, types: readonly ResourceType[]): void {
    this.#sets.set(owner, { types: types.map((t) => Object.freeze({ ...t })) });
    this.#rebuild();
  }

  /** Stops serving what `owner` served; true when it served something. */
  removeCustom(owner: string): boolean {
    if (!this.#sets.delete(owner)) return false;
    this.#rebuild();
    return true;
  }

  /** The custom types `owner` serves (empty when none). */
  customOf(owner: string): readonly ResourceType[] {
    return this.#sets.get(owner)?.types ?? [];
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  all(): readonly ResourceType[] {
    return this.#all;
  }

  byResource(group: string, version: string, plural: string): ResourceType | undefined {
    return (
      this.#base.byResource(group, version, plural) ??
      this.#byResource.get(`${gvKey(group, version)}/${plural}`)
    );
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.#base.byKind(group, version, kind) ?? this.#byKind.get(`${gvKey(group, version)}/${kind}`);
  }

  groups(): readonly ServedGroup[] {
    return this.#groups;
  }

  group(name: string): ServedGroup | undefined {
    return this.#groups.find((g) => g.name === name);
  }

  resourcesOf(group: string, version: string): readonly ResourceType[] {
    const base = this.#base.resourcesOf(group, version);
    const custom = this.#byGroupVersion.get(gvKey(group, version));
    if (custom === undefined) return base;
    if (base.length === 0) return custom;
    return [...base, ...custom].sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
  }

  #rebuild(): void {
    const byResource = new Map<string, ResourceType>();
    const byKind = new Map<string, ResourceType>();
    const byGroupVersion = new Map<string, ResourceType[]>();
    const custom: ResourceType[] = [];
    for (const set of this.#sets.values()) {
      for (const t of set.types) {
        if (this.#base.byResource(t.group, t.version, t.plural) !== undefined) continue;
        const rk = `${gvKey(t.group, t.version)}/${t.plural}`;
        if (byResource.has(rk)) continue;
        byResource.set(rk, t);
        const kk = `${gvKey(t.group, t.version)}/${t.kind}`;
        if (!byKind.has(kk)) byKind.set(kk, t);
        const gv = gvKey(t.group, t.version);
        const list = byGroupVersion.get(gv);
        if (list === undefined) byGroupVersion.set(gv, [t]);
        else list.push(t);
        custom.push(t);
      }
    }
    for (const list of byGroupVersion.values()) {
      list.sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
    }
    this.#byResource = byResource;
    this.#byKind = byKind;
    this.#byGroupVersion = byGroupVersion;
    this.#groups = this.#groupsWith(custom);
    this.#all = [...this.#base.all(), ...custom];
    this.#generation += 1;
    for (const listener of this.#listeners) listener();
  }

  /** Built-in groups first (custom versions of a built-in group appended), then custom groups by name. */
  #groupsWith(custom: readonly ResourceType[]): readonly ServedGroup[] {
    const versionsOf = new Map<string, Set<string>>();
    for (const t of custom) {
      let set = versionsOf.get(t.group);
      if (set === undefined) versionsOf.set(t.group, (set = new Set()));
      set.add(t.version);
    }
    const out: ServedGroup[] = [];
    for (const g of this.#base.groups()) {
      const extra = versionsOf.get(g.name);
      versionsOf.delete(g.name);
      if (extra === undefined) {
        out.push(g);
        continue;
      }
      const versions = [...g.versions, ...[...extra].filter((v) => !g.versions.includes(v))];
      out.push(
        Object.freeze({
          name: g.name,
          versions: Object.freeze(versions),
          preferredVersion: g.preferredVersion,
        }),
      );
    }
    for (const name of [...versionsOf.keys()].sort()) {
      const versions = [...(versionsOf.get(name) ?? [])].sort(compareKubeVersions);
      const preferred = versions[0];
      if (preferred === undefined) continue;
      out.push(Object.freeze({ name, versions: Object.freeze(versions), preferredVersion: preferred }));
    }
    return Object.freeze(out);
  }
}
