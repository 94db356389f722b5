/**
 * The source of the kind table: parsing and validating `proto/kinds.yaml`, and rendering the
 * generated module `src/registry/kinds.ts` from it.
 *
 * Why a generated module: parsing the YAML with the `yaml` package costs ~100 ms of CPU (import
 * plus parse), a third of the server's start budget. The start path therefore imports the
 * pre-parsed table; `test/server/foundation-registry.test.ts` fails when the table drifts from
 * the YAML (and rewrites it when run with `CAPSTAN_UPDATE_GENERATED=1`). Only tests and that
 * regeneration import this module.
 */
import { parse } from 'yaml';
import { NAME_RULES, SUBRESOURCES, type NameRule, type ResourceType, type Subresource } from './types.js';

/** One API group and its served versions, preferred first. */
export interface GroupEntry {
  /** `''` for the core group. */
  readonly name: string;
  readonly versions: readonly string[];
}

/** One kind as the YAML states it: a {@link ResourceType} without its derived fields. */
export type KindEntry = Omit<ResourceType, 'apiVersion' | 'listKind'>;

/** The whole table: groups in discovery order, kinds in file order. */
export interface KindsDocument {
  readonly groups: readonly GroupEntry[];
  readonly kinds: readonly KindEntry[];
}

/** The YAML is malformed or breaks a rule; `path` locates the offending entry. */
export class KindsFileError extends Error {
  readonly code = 'REGISTRY_INVALID_KINDS_FILE';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'KindsFileError';
  }
}

const KNOWN_VERBS = new Set([
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
]);
const KNOWN_SUBRESOURCES: ReadonlySet<string> = new Set(SUBRESOURCES);
const KIND_KEYS = new Set([
  'group',
  'version',
  'kind',
  'plural',
  'singular',
  'namespaced',
  'shortNames',
  'categories',
  'verbs',
  'subresources',
  'storageResource',
  'messageType',
  'virtual',
  'tracksGeneration',
  'createOnUpdate',
  'keepStatusOnCreate',
  'returnDeletedObject',
  'nameRule',
  'eventTTL',
]);
const DNS_LABEL_LIST = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(where: string, v: unknown, pattern?: RegExp): string {
  if (typeof v !== 'string') throw new KindsFileError(where, 'must be a string');
  if (pattern !== undefined && !pattern.test(v))
    throw new KindsFileError(where, `${JSON.stringify(v)} is malformed`);
  return v;
}

function strList(where: string, v: unknown, allowed?: ReadonlySet<string>): readonly string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new KindsFileError(where, 'must be a list of strings');
  const out = v.map((item, i) => str(`${where}[${i}]`, item));
  for (const item of out) {
    if (allowed !== undefined && !allowed.has(item)) throw new KindsFileError(where, `unknown value ${item}`);
  }
  if (new Set(out).size !== out.length) throw new KindsFileError(where, 'has duplicates');
  return out;
}

function bool(where: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new KindsFileError(where, 'must be true or false');
  return v;
}

function nameRule(where: string, v: unknown): NameRule {
  if (v === undefined) return 'subdomain';
  const rule = NAME_RULES.find((r) => r === v);
  if (rule === undefined) throw new KindsFileError(where, `must be one of ${NAME_RULES.join(', ')}`);
  return rule;
}

function parseGroup(where: string, raw: unknown): GroupEntry {
  if (!isRecord(raw)) throw new KindsFileError(where, 'must be a mapping');
  const name = str(`${where}.name`, raw['name']);
  const versions = strList(`${where}.versions`, raw['versions']);
  if (versions.length === 0) throw new KindsFileError(`${where}.versions`, 'must not be empty');
  return { name, versions };
}

function parseKind(where: string, raw: unknown, groups: ReadonlyMap<string, GroupEntry>): KindEntry {
  if (!isRecord(raw)) throw new KindsFileError(where, 'must be a mapping');
  for (const key of Object.keys(raw)) {
    if (!KIND_KEYS.has(key)) throw new KindsFileError(`${where}.${key}`, 'unknown field');
  }
  const group = str(`${where}.group`, raw['group']);
  const version = str(`${where}.version`, raw['version']);
  const g = groups.get(group);
  if (g === undefined)
    throw new KindsFileError(`${where}.group`, `group ${JSON.stringify(group)} is not in groups`);
  if (!g.versions.includes(version)) {
    throw new KindsFileError(
      `${where}.version`,
      `${version} is not a version of group ${JSON.stringify(group)}`,
    );
  }
  const kind = str(`${where}.kind`, raw['kind'], /^[A-Z][A-Za-z0-9]*$/);
  const plural = str(`${where}.plural`, raw['plural'], DNS_LABEL_LIST);
  const singular = str(`${where}.singular`, raw['singular'], DNS_LABEL_LIST);
  if (typeof raw['namespaced'] !== 'boolean')
    throw new KindsFileError(`${where}.namespaced`, 'is required (true or false)');
  const virtual = bool(`${where}.virtual`, raw['virtual'], false);
  const verbs = strList(`${where}.verbs`, raw['verbs'], KNOWN_VERBS);
  if (verbs.length === 0) throw new KindsFileError(`${where}.verbs`, 'must not be empty');
  const subresources = strList(
    `${where}.subresources`,
    raw['subresources'],
    KNOWN_SUBRESOURCES,
  ) as readonly Subresource[];
  let storageResource = '';
  if (virtual) {
    if (raw['storageResource'] !== undefined)
      throw new KindsFileError(where, 'a virtual kind has no storageResource');
    if (subresources.length > 0) throw new KindsFileError(where, 'a virtual kind has no subresources');
  } else {
    storageResource = str(
      `${where}.storageResource`,
      raw['storageResource'],
      /^[a-z0-9.-]+(\/[a-z0-9.-]+)*$/,
    );
  }
  return {
    group,
    version,
    kind,
    plural,
    singular,
    namespaced: raw['namespaced'],
    shortNames: strList(`${where}.shortNames`, raw['shortNames']),
    categories: strList(`${where}.categories`, raw['categories']),
    verbs,
    subresources,
    storageResource,
    messageType: str(
      `${where}.messageType`,
      raw['messageType'],
      /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/,
    ),
    virtual,
    tracksGeneration: bool(`${where}.tracksGeneration`, raw['tracksGeneration'], false),
    createOnUpdate: bool(`${where}.createOnUpdate`, raw['createOnUpdate'], false),
    keepStatusOnCreate: bool(`${where}.keepStatusOnCreate`, raw['keepStatusOnCreate'], false),
    returnDeletedObject: bool(`${where}.returnDeletedObject`, raw['returnDeletedObject'], false),
    nameRule: nameRule(`${where}.nameRule`, raw['nameRule']),
    eventTTL: bool(`${where}.eventTTL`, raw['eventTTL'], false),
  };
}

/**
 * Parses and validates the text of `proto/kinds.yaml`. Defaults are filled in (see the file's
 * header); unknown fields, unknown verbs or subresources, kinds of undeclared groups or versions,
 * and virtual kinds with storage are errors ({@link KindsFileError}). Duplicate resources are
 * caught later, by the registry itself.
 */
export function parseKindsYaml(text: string): KindsDocument {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new KindsFileError(
      'kinds.yaml',
      `not valid YAML: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (!isRecord(raw)) throw new KindsFileError('kinds.yaml', 'must be a mapping');
  if (!Array.isArray(raw['groups'])) throw new KindsFileError('groups', 'must be a list');
  if (!Array.isArray(raw['kinds'])) throw new KindsFileError('kinds', 'must be a list');
  const groups = raw['groups'].map((g, i) => parseGroup(`groups[${i}]`, g));
  const byName = new Map<string, GroupEntry>();
  for (const g of groups) {
    if (byName.has(g.name)) throw new KindsFileError('groups', `duplicate group ${JSON.stringify(g.name)}`);
    byName.set(g.name, g);
  }
  const kinds = raw['kinds'].map((k, i) => parseKind(`kinds[${i}]`, k, byName));
  return { groups, kinds };
}

/** The text of the generated module `src/registry/kinds.ts` for `doc`; byte-stable. */
export function renderKindsModule(doc: KindsDocument): string {
  const lines = [
    '// Generated from proto/kinds.yaml by renderKindsModule in src/registry/kinds-source.ts. Do not edit.',
    '// Regenerate: CAPSTAN_UPDATE_GENERATED=1 npx vitest run test/server/foundation-registry.test.ts',
    "import type { KindsDocument } from './kinds-source.js';",
    '',
    '/** The parsed kind table (defaults filled in). */',
    'export const KINDS: KindsDocument = {',
    '  groups: [',
    ...doc.groups.map((g) => `    ${JSON.stringify(g)},`),
    '  ],',
    '  kinds: [',
    ...doc.kinds.map((k) => `    ${JSON.stringify(k)},`),
    '  ],',
    '};',
    '',
  ];
  return lines.join('\n');
}
