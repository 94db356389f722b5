/**
 * `metadata.managedFields` entries: decoding them into manager → owned fields, and encoding back
 * exactly as kube-apiserver writes them.
 *
 * Managers are keyed by kube's *manager identifier*: the entry's JSON without `time`,
 * `fieldsType` and `fieldsV1`, and without `apiVersion` for appliers — so one manager has one
 * Apply entry per subresource, whatever version it applied with, and one Update entry per
 * version and subresource. Identifiers also order conflict messages and capped entries, so they
 * are built byte for byte as Go's `json.Marshal` does.
 */
import { FieldsV1Error } from './errors.js';
import { FieldSet } from './fieldpath.js';
import type { ManagerSets, VersionedSet } from './updater.js';
import { compareStrings, goJsonString, goQuote, isJsonMap, type JsonMap } from './value.js';

/** One `metadata.managedFields` entry, keys in the order kube writes them. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  /** RFC 3339, seconds precision, UTC (`2024-05-01T12:00:00Z`); absent when kube would not set one. */
  readonly time?: string;
  readonly fieldsType: 'FieldsV1';
  readonly fieldsV1: JsonMap;
  readonly subresource?: string;
}

/** What identifies a manager's entry. */
export interface ManagerInfo {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  /** Part of the identity of Update entries only. */
  readonly apiVersion?: string;
  readonly subresource?: string;
}

/**
 * Decoded entries: owned fields, the time of each manager's last change, and the parts of the
 * identifiers met so far (so that encoding does not parse identifiers back).
 */
export interface ManagedState {
  readonly managers: ManagerSets;
  readonly times: ReadonlyMap<string, string>;
  readonly infos: ReadonlyMap<string, ManagerInfo>;
}

/** The empty state (no entries). */
export const EMPTY_STATE: ManagedState = { managers: new Map(), times: new Map(), infos: new Map() };

/**
 * kube's manager identifier (BuildManagerIdentifier).
 * @example managerIdentifier({ manager: 'kubectl', operation: 'Apply' }) // '{"manager":"kubectl","operation":"Apply"}'
 */
export function managerIdentifier(info: ManagerInfo): string {
  const parts: string[] = [];
  if (info.manager !== '') parts.push(`"manager":${goJsonString(info.manager)}`);
  parts.push(`"operation":${goJsonString(info.operation)}`);
  if (info.operation === 'Update' && info.apiVersion !== undefined && info.apiVersion !== '') {
    parts.push(`"apiVersion":${goJsonString(info.apiVersion)}`);
  }
  if (info.subresource !== undefined && info.subresource !== '') {
    parts.push(`"subresource":${goJsonString(info.subresource)}`);
  }
  return `{${parts.join(',')}}`;
}

/** The fields of an identifier (undefined for a key that is not one, such as an internal placeholder). */
export function parseIdentifier(id: string): ManagerInfo | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(id);
  } catch {
    return undefined;
  }
  if (!isJsonMap(parsed)) return undefined;
  const { manager, operation, apiVersion, subresource } = parsed;
  return {
    manager: typeof manager === 'string' ? manager : '',
    operation: operation === 'Apply' ? 'Apply' : 'Update',
    ...(typeof apiVersion === 'string' ? { apiVersion } : {}),
    ...(typeof subresource === 'string' ? { subresource } : {}),
  };
}

/**
 * How kube names a manager in conflicts (printManager): `"kubectl"` for appliers,
 * `"kube-controller-manager" using apps/v1` for updaters, with ` with subresource "status"`
 * after the name when there is one.
 */
export function describeManager(id: string): string {
  const info = parseIdentifier(id);
  if (info === undefined) return goQuote(id);
  let s = goQuote(info.manager);
  if (info.subresource !== undefined && info.subresource !== '')
    s += ` with subresource ${goQuote(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** A time as metav1.Time serializes it: UTC, whole seconds. */
export function formatTime(t: Date): string {
  const year = t.getUTCFullYear();
  if (year >= 1000 && year <= 9999) {
    // Assembled from the fields: this runs on every write, and toISOString costs twice as much.
    const date = `${year}-${twoDigits(t.getUTCMonth() + 1)}-${twoDigits(t.getUTCDate())}`;
    return `${date}T${twoDigits(t.getUTCHours())}:${twoDigits(t.getUTCMinutes())}:${twoDigits(t.getUTCSeconds())}Z`;
  }
  const iso = t.toISOString();
  // `YYYY-MM-DDTHH:MM:SS.sssZ` for years 0-9999; extended years keep their sign and width.
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
}

function parseTime(value: unknown, i: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' && RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new FieldsV1Error(`invalid time in managed fields entry ${i}`);
  return formatTime(new Date(Math.floor(ms / 1000) * 1000));
}

function optionalString(value: unknown, name: string, i: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string')
    throw new FieldsV1Error(`${name} of managed fields entry ${i} is not a string`);
  return value;
}

/**
 * Decodes entries as kube does (DecodeManagedFields). `null`/absent is the empty state.
 * A later entry with the same identifier replaces an earlier one.
 * @throws FieldsV1Error when the list or an entry is malformed: operation other than
 *   `Apply`/`Update`, empty apiVersion, fieldsType other than `FieldsV1`, bad fieldsV1 or time.
 */
export function decodeManagedFields(entries: unknown): ManagedState {
  if (entries === undefined || entries === null) return EMPTY_STATE;
  if (!Array.isArray(entries)) throw new FieldsV1Error('managedFields is not a list');
  const managers = new Map<string, VersionedSet>();
  const times = new Map<string, string>();
  const infos = new Map<string, ManagerInfo>();
  entries.forEach((raw: unknown, i) => {
    if (!isJsonMap(raw)) throw new FieldsV1Error(`managed fields entry ${i} is not an object`);
    const operation = raw['operation'];
    if (operation !== 'Apply' && operation !== 'Update')
      throw new FieldsV1Error('operation must be `Apply` or `Update`');
    const apiVersion = optionalString(raw['apiVersion'], 'apiVersion', i);
    if (apiVersion === '') throw new FieldsV1Error('apiVersion must not be empty');
    const fieldsType = optionalString(raw['fieldsType'], 'fieldsType', i);
    if (fieldsType === '') throw new FieldsV1Error(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1')
      throw new FieldsV1Error(
        `invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`,
      );
    const manager = optionalString(raw['manager'], 'manager', i);
    const subresource = optionalString(raw['subresource'], 'subresource', i);
    const fieldsV1 = raw['fieldsV1'];
    const set =
      fieldsV1 === undefined || fieldsV1 === null ? FieldSet.EMPTY : FieldSet.fromFieldsV1(fieldsV1);
    const time = parseTime(raw['time'], i);
    const info: ManagerInfo = { manager, operation, apiVersion, subresource };
    const id = managerIdentifier(info);
    managers.set(id, { set, apiVersion, applied: operation === 'Apply' });
    infos.set(id, info);
    if (time === undefined) times.delete(id);
    else times.set(id, time);
  });
  return { managers, times, infos };
}

function seconds(time: string | undefined): number {
  return time === undefined ? 0 : Date.parse(time) / 1000;
}

/**
 * Encodes the state as kube does (encodeManagedFields): one entry per manager, sorted by
 * operation (Apply first), time (seconds), manager, apiVersion, subresource.
 */
export function encodeManagedFields(state: ManagedState): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of state.managers) {
    const info = state.infos.get(id) ?? parseIdentifier(id);
    if (info === undefined) continue;
    out.push(entryOf(info, vs, state.times.get(id)));
  }
  if (out.length < 2) return out;
  return out.sort(
    (p, q) =>
      compareStrings(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      compareStrings(p.manager ?? '', q.manager ?? '') ||
      compareStrings(p.apiVersion, q.apiVersion) ||
      compareStrings(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** One entry, its keys in kube's order, built by assignment (this runs on every write). */
function entryOf(info: ManagerInfo, vs: VersionedSet, time: string | undefined): ManagedFieldsEntry {
  const entry: Partial<Record<keyof ManagedFieldsEntry, unknown>> = {};
  if (info.manager !== '') entry.manager = info.manager;
  entry.operation = vs.applied ? 'Apply' : info.operation;
  entry.apiVersion = vs.apiVersion;
  if (time !== undefined) entry.time = time;
  entry.fieldsType = 'FieldsV1';
  entry.fieldsV1 = vs.set.toFieldsV1();
  if (info.subresource !== undefined && info.subresource !== '') entry.subresource = info.subresource;
  return entry as ManagedFieldsEntry;
}
