/**
 * The schema registry of the built-in kinds: lookups by resource and by kind, plus the group and
 * version layout discovery needs. Built from the kind table of `proto/kinds.yaml` (pre-parsed
 * into `kinds.ts`, see `kinds-source.ts` for why), once per server.
 */
import { KINDS } from './kinds.js';
import type { GroupEntry, KindsDocument } from './kinds-source.js';
import type { ApiEnablement } from './runtime-config.js';
import { storedAs } from './stored-as.js';
import { storageVersionHash, type Registry, type ResourceType } from './types.js';
import { formatApiVersion } from '../api/group-version.js';

/** The table breaks a registry rule (duplicate resource or kind, a group without kinds, ...). */
export class RegistryError extends Error {
  readonly code = 'REGISTRY_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** A served group with its versions, preferred first; only versions that serve a kind. */
export interface ServedGroup {
  /** `''` for the core group. */
  readonly name: string;
  readonly versions: readonly string[];
  readonly preferredVersion: string;
}

function gvKey(group: string, version: string): string {
  return `${group}/${version}`;
}

/**
 * {@link Registry} over a {@link KindsDocument}. Immutable after construction; every returned
 * object is frozen and shared, so callers must not copy it per request.
 */
export class KindRegistry implements Registry {
  readonly #all: readonly ResourceType[];
  readonly #byResource = new Map<string, ResourceType>();
  readonly #byKind = new Map<string, ResourceType>();
  readonly #byGroupVersion = new Map<string, readonly ResourceType[]>();
  readonly #groups: readonly ServedGroup[];

  /**
   * @param serves `--runtime-config`'s filter: kinds it turns off are not served at all (no
   *   routes, discovery or OpenAPI); a group version left without kinds disappears.
   * @throws RegistryError on duplicate resources or kinds, or kinds of undeclared versions.
   */
  constructor(doc: KindsDocument, serves?: ApiEnablement) {
    const order = new Map<string, number>();
    doc.groups.forEach((g, gi) => g.versions.forEach((v, vi) => order.set(gvKey(g.name, v), gi * 1000 + vi)));
    const kinds =
      serves === undefined ? doc.kinds : doc.kinds.filter((k) => serves.serves(k.group, k.version, k.plural));
    const types = kinds.map((k): ResourceType => {
      if (!order.has(gvKey(k.group, k.version))) {
        throw new RegistryError(`${k.kind}: ${gvKey(k.group, k.version)} is not a declared group version`);
      }
      const stored = k.virtual ? undefined : (storedAs(k.group, k.version, k.kind) ?? k);
      return Object.freeze({
        ...k,
        ...(stored === undefined
          ? {}
          : { storageVersionHash: storageVersionHash(stored.group, stored.version, stored.kind) }),
        apiVersion: formatApiVersion(k.group, k.version),
        listKind: `${k.kind}List`,
        shortNames: Object.freeze([...k.shortNames]),
        categories: Object.freeze([...k.categories]),
        verbs: Object.freeze([...k.verbs]),
        subresources: Object.freeze([...k.subresources]),
      });
    });
    types.sort(
      (a, b) =>
        (order.get(gvKey(a.group, a.version)) ?? 0) - (order.get(gvKey(b.group, b.version)) ?? 0) ||
        (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0),
    );
    for (const t of types) {
      const rk = `${gvKey(t.group, t.version)}/${t.plural}`;
      if (this.#byResource.has(rk)) throw new RegistryError(`duplicate resource ${rk}`);
      this.#byResource.set(rk, t);
      const kk = `${gvKey(t.group, t.version)}/${t.kind}`;
      if (this.#byKind.has(kk)) throw new RegistryError(`duplicate kind ${kk}`);
      this.#byKind.set(kk, t);
      const gv = gvKey(t.group, t.version);
      const list = this.#byGroupVersion.get(gv);
      if (list === undefined) this.#byGroupVersion.set(gv, [t]);
      else (list as ResourceType[]).push(t);
    }
    this.#all = Object.freeze(types);
    this.#groups = Object.freeze(
      doc.groups.flatMap((g: GroupEntry): ServedGroup[] => {
        const versions = g.versions.filter((v) => this.#byGroupVersion.has(gvKey(g.name, v)));
        const preferred = versions[0];
        if (preferred === undefined) return [];
        return [
          Object.freeze({ name: g.name, versions: Object.freeze(versions), preferredVersion: preferred }),
        ];
      }),
    );
  }

  /** Always 0: the built-in table never changes. */
  readonly generation = 0;

  all(): readonly ResourceType[] {
    return this.#all;
  }

  byResource(group: string, version: string, plural: string): ResourceType | undefined {
    return this.#byResource.get(`${group}/${version}/${plural}`);
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.#byKind.get(`${group}/${version}/${kind}`);
  }

  /** Served groups in discovery order (the core group `''` first); empty versions are dropped. */
  groups(): readonly ServedGroup[] {
    return this.#groups;
  }

  /** The group named `name`, or undefined when it is not served. */
  group(name: string): ServedGroup | undefined {
    return this.#groups.find((g) => g.name === name);
  }

  /** The types served at one group version, sorted by plural; empty when the version is not served. */
  resourcesOf(group: string, version: string): readonly ResourceType[] {
    return this.#byGroupVersion.get(gvKey(group, version)) ?? [];
  }
}

/**
 * The registry of the built-in kinds from the generated table. Cheap (no parsing); each call
 * builds a fresh, independent registry, so servers in one process share no state. `serves`
 * (`--runtime-config`) leaves out the kinds it turns off.
 */
export function loadRegistry(serves?: ApiEnablement): KindRegistry {
  return new KindRegistry(KINDS, serves);
}

/**
 * A registry straight from YAML text (for tests and tools; slow, as it loads the YAML parser).
 * @throws KindsFileError when the text breaks a rule of the file; RegistryError on duplicates.
 */
export async function registryFromYaml(text: string): Promise<KindRegistry> {
  const { parseKindsYaml } = await import('./kinds-source.js');
  return new KindRegistry(parseKindsYaml(text));
}
