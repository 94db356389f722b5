/**
 * `--runtime-config`: which built-in group versions and resources are served, as kube-apiserver
 * merges the flag over its default resource config (`resourceconfig.MergeAPIResourceConfigs`).
 *
 * Keys, applied in this order:
 * 1. `api/all`, `api/ga`, `api/beta`, `api/alpha` (`true`/`false` only): every version, or those
 *    of the form `v1`, `v1beta1`, `v1alpha1`;
 * 2. `<group>/<version>` (`v1` and `api/v1` name the core group): the whole version;
 * 3. `<group>/<version>/<resource>` (lowercase plural): one resource, whatever its version says.
 * Values of 2 and 3 are Go booleans (`true`, `1`, `t`, `F`, ...); an empty value means true.
 * The deprecated `api/legacy` is accepted and ignored, as kube-apiserver's completion drops it.
 *
 * The default is kube 1.33's: every GA version on, beta and alpha versions off. Every version
 * Capstan serves is GA (kube 1.33 serves each of them by default, `networking.k8s.io/v1`
 * ServiceCIDR and IPAddress included), so by default everything is served.
 */
import type { KindsDocument } from './kinds-source.js';

/** A `--runtime-config` value kube-apiserver refuses at start; the message is kube's. */
export class RuntimeConfigError extends Error {
  readonly code = 'RUNTIME_CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeConfigError';
  }
}

/** A GA version (`v1`, `v2`): on by default. */
const GA = /^v\d+$/;

function versionOf(gv: string): string {
  return gv.slice(gv.indexOf('/') + 1);
}

const MATCHERS: readonly (readonly [string, (version: string) => boolean])[] = [
  ['api/all', () => true],
  ['api/ga', (v) => GA.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
];
const MATCHER_KEYS = new Set(MATCHERS.map(([k]) => k));

/** Go's strconv.ParseBool. */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

function gvKey(group: string, version: string): string {
  return `${group}/${version}`;
}

/** Splits a key into group, version and optional resource; undefined when it has no group version. */
function splitKey(key: string): { group: string; version: string; resource?: string } | undefined {
  // kube-apiserver's spelling of the core group: `v1` (and the legacy `api/v1`).
  const normalized =
    key === 'v1' || key.startsWith('v1/') || key === 'api/v1' || key.startsWith('api/v1/')
      ? `/${key.replace(/^api\//, '')}`
      : key;
  const tokens = normalized.split('/');
  if (tokens.length !== 2 && tokens.length !== 3) return undefined;
  const [group = '', version = '', resource] = tokens;
  if (version === '') return undefined;
  return resource === undefined ? { group, version } : { group, version, resource };
}

/** Which group versions and resources are served; immutable. */
export class ApiEnablement {
  readonly #versions: ReadonlyMap<string, boolean>;
  readonly #resources: ReadonlyMap<string, boolean>;

  private constructor(versions: ReadonlyMap<string, boolean>, resources: ReadonlyMap<string, boolean>) {
    this.#versions = versions;
    this.#resources = resources;
  }

  /** kube 1.33's default: GA versions on, beta and alpha versions off. */
  static defaults(): ApiEnablement {
    return new ApiEnablement(new Map(), new Map());
  }

  /**
   * The enablement `flag` (the `--runtime-config` map) asks for over the kinds of `doc`.
   * @throws RuntimeConfigError with kube-apiserver's start-up message for a bad key or value.
   */
  static parse(given: Readonly<Record<string, string>>, doc: KindsDocument): ApiEnablement {
    // kube-apiserver's completion drops the deprecated `api/legacy` key.
    const flag = Object.fromEntries(Object.entries(given).filter(([k]) => k !== 'api/legacy'));
    const keys = Object.keys(flag);
    if (flag['api/all'] === 'false' && keys.length === 1) {
      throw new RuntimeConfigError('invalid key with only api/all=false');
    }
    const registered = new Set(doc.groups.flatMap((g) => g.versions.map((v) => gvKey(g.name, v))));
    const groups = new Set(doc.groups.map((g) => g.name));
    const unknown: string[] = [];
    for (const key of keys) {
      if (MATCHER_KEYS.has(key)) continue;
      const parts = splitKey(key);
      if (parts === undefined || (parts.group !== '' && parts.group.includes('/'))) {
        throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
      }
      if (!groups.has(parts.group)) unknown.push(parts.group);
    }
    if (unknown.length > 0) throw new RuntimeConfigError(`unknown api groups ${unknown.join(',')}`);

    const versions = new Map<string, boolean>();
    for (const gv of registered) versions.set(gv, GA.test(versionOf(gv)));
    for (const [key, matches] of MATCHERS) {
      const value = flag[key];
      if (value === undefined) continue;
      if (value !== 'true' && value !== 'false')
        throw new RuntimeConfigError(`invalid value ${key}=${value}`);
      for (const gv of registered) if (matches(versionOf(gv))) versions.set(gv, value === 'true');
    }
    const resources = new Map<string, boolean>();
    for (const key of keys) {
      if (MATCHER_KEYS.has(key)) continue;
      const { group, version, resource } = splitKey(key) ?? { group: '', version: '' };
      const gv = gvKey(group, version);
      if (!registered.has(gv)) {
        throw new RuntimeConfigError(
          `group version ${group === '' ? version : gv} that has not been registered`,
        );
      }
      const text = flag[key] ?? '';
      const enabled = text === '' ? true : parseGoBool(text);
      if (enabled === undefined) {
        throw new RuntimeConfigError(
          `invalid value of ${key}: ${text}, err: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
        );
      }
      if (resource === undefined) {
        versions.set(gv, enabled);
      } else if (resource.toLowerCase() !== resource) {
        throw new RuntimeConfigError(
          `invalid key ${key}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`,
        );
      } else {
        resources.set(`${gv}/${resource}`, enabled);
      }
    }
    return new ApiEnablement(versions, resources);
  }

  /** True when `<group>/<version>` serves `resource` (its top-level plural). */
  serves(group: string, version: string, resource: string): boolean {
    const gv = gvKey(group, version);
    return this.#resources.get(`${gv}/${resource}`) ?? this.#versions.get(gv) ?? GA.test(version);
  }

  /** Of `resources` (`<group>/<version>/<plural>`, `''` group for core), those not served. */
  disabledOf(resources: readonly string[]): string[] {
    return resources.filter((r) => {
      const [group = '', version = '', plural = ''] = r.split('/');
      return !this.serves(group, version, plural);
    });
  }
}
