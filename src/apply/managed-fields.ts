/**
 * The managedFields lifecycle of every write, as kube-apiserver's field manager runs it:
 *
 * - {@link applyOperation} (PATCH `application/apply-patch+yaml`): merges the configuration,
 *   moves ownership, refuses conflicts unless forced, records an `Apply` entry.
 * - {@link updateOperation} (POST, PUT, other PATCHes): records an `Update` entry owning what
 *   the write changed.
 *
 * Around the ownership core (updater.ts) this adds kube's layers: the fields nobody owns
 * (`apiVersion`, `kind`, `metadata.name`, `uid`, ... — "strip meta"); an entry's time changes
 * only when its operation changed something; a first apply to an object without managedFields
 * first gives its existing fields to `before-first-apply`; an update of an existing object
 * without managedFields starts no tracking; more than 10 Update entries fold the oldest into
 * `ancient-changes`; client-sent managedFields replace the stored ones when valid and non-empty,
 * reset them when `[]` or `[{}]`, and are ignored otherwise or on a subresource; an apply by
 * `kubectl` honours and updates the client-side apply annotation (last-applied.ts).
 */
import { ApplyConflictError, ApplyError, FieldsV1Error, TypedValueError } from './errors.js';
import {
  EMPTY_STATE,
  decodeManagedFields,
  describeManager,
  encodeManagedFields,
  formatTime,
  managerIdentifier,
  parseIdentifier,
  type ManagedFieldsEntry,
  type ManagedState,
  type ManagerInfo,
} from './entries.js';
import { copyWithout, setOwn } from '../api/object.js';
import { FieldSet, fieldElement, pathToString } from './fieldpath.js';
import {
  LAST_APPLIED_MANAGER,
  allowedByLastApplied,
  conflictsBeyond,
  withLastAppliedSynced,
} from './last-applied.js';
import type { StructType } from './schema-types.js';
import { Conflicts, applyManagers, updateManagers, type VersionedSet } from './updater.js';
import { compareStrings, isJsonMap, jsonEqual, type JsonMap, type JsonValue } from './value.js';

/** Update entries kept before the oldest are merged (DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;

const f = fieldElement;
/** Paths no manager ever owns (kube's stripMetaManager). */
const STRIPPED = FieldSet.fromPaths([
  [f('apiVersion')],
  [f('kind')],
  [f('metadata')],
  ...[
    'name',
    'namespace',
    'creationTimestamp',
    'selfLink',
    'uid',
    'clusterName',
    'generation',
    'managedFields',
    'resourceVersion',
  ].map((n) => [f('metadata'), f(n)]),
]);

/** Placeholder key of the running update; it cannot collide with identifiers (JSON objects). */
const CURRENT = 'current-operation';

/** Options of both operations. */
export interface OperationOptions {
  /** The kind's type: `objectTypes.forKind(messageName)`. */
  readonly type: StructType;
  /** The request's manager (`fieldManager`, else {@link defaultManagerName} of the User-Agent). */
  readonly manager: string;
  /** apiVersion of the endpoint (`apps/v1`, `v1`). */
  readonly apiVersion: string;
  /** Subresource written (`status`, `scale`); absent or empty for the main resource. */
  readonly subresource?: string;
  /** The clock reading recorded as entry times. */
  readonly now: Date;
  /**
   * Fields nobody may own through this endpoint (kube's reset fields): `status` on the main
   * resource of kinds with a status subresource; on `status`, what that endpoint ignores.
   */
  readonly ignoredFields?: FieldSet;
}

/** Input of {@link applyOperation}. */
export interface ApplyOptions extends OperationOptions {
  /** The stored object, or undefined when the apply creates it. */
  readonly live: JsonMap | undefined;
  /** The applied configuration (parsed YAML/JSON body). */
  readonly config: JsonMap;
  /** The endpoint's kind (`Deployment`): the configuration must have this kind and apiVersion. */
  readonly kind: string;
  /** `force=true`: take conflicting fields instead of failing. */
  readonly force: boolean;
  /** The stored entries; defaults to `live.metadata.managedFields`. */
  readonly managedFields?: unknown;
}

/** Output of {@link applyOperation}. */
export interface ApplyResult {
  /** The object to store: merged, pruned, with `metadata.managedFields` (before defaulting and validation). */
  readonly object: JsonMap;
  readonly managedFields: ManagedFieldsEntry[];
  /** False when object and entries equal the stored ones: the handler can skip the write. */
  readonly changed: boolean;
}

/** Input of {@link updateOperation}. */
export interface UpdateOptions extends OperationOptions {
  /** The stored object; undefined for a create. */
  readonly oldObject: JsonMap | undefined;
  /** The object about to be stored (after defaulting); its own managedFields are the client's. */
  readonly newObject: JsonMap;
  /** The stored entries; defaults to `oldObject.metadata.managedFields`. */
  readonly managedFields?: unknown;
  /**
   * For a create: what the new object is compared with (default: nothing). kube's handlers
   * compare with the kind's empty typed object, whose always-present structs are then not new.
   */
  readonly createBase?: JsonMap;
}

/** Output of {@link updateOperation}. */
export interface UpdateResult {
  /** `newObject` with `metadata.managedFields` replaced (a shallow copy). */
  readonly object: JsonMap;
  readonly managedFields: ManagedFieldsEntry[];
}

function metadataOf(obj: JsonMap | undefined): JsonMap | undefined {
  const m = obj?.['metadata'];
  return isJsonMap(m) ? m : undefined;
}

/**
 * A shallow copy of `obj` whose metadata has no managedFields, then `entries` as its last key
 * when given (key by key: rest-destructuring takes V8's slow path, and this runs on every write).
 */
function replaceManagedFields(obj: JsonMap, entries?: ManagedFieldsEntry[]): JsonMap {
  const from = metadataOf(obj);
  const meta = from === undefined ? {} : copyWithout(from, 'managedFields');
  if (entries !== undefined) meta['managedFields'] = entries as unknown as JsonMap[];
  const out: JsonMap = {};
  for (const key of Object.keys(obj)) setOwn(out, key, key === 'metadata' ? meta : (obj[key] as JsonValue));
  if (!Object.hasOwn(obj, 'metadata')) out['metadata'] = meta;
  return out;
}

/** `obj` without `metadata.managedFields` (a shallow copy when it had them). */
function withoutManagedFields(obj: JsonMap): JsonMap {
  const meta = metadataOf(obj);
  if (meta === undefined || !Object.hasOwn(meta, 'managedFields')) return obj;
  return replaceManagedFields(obj);
}

/** `obj` with its entries set, or removed when there are none (a shallow copy). */
function withManagedFields(obj: JsonMap, entries: ManagedFieldsEntry[]): JsonMap {
  return replaceManagedFields(obj, entries.length === 0 ? undefined : entries);
}

function strip(managers: Map<string, VersionedSet>, id: string): void {
  const vs = managers.get(id);
  if (vs === undefined) return;
  const set = vs.set.difference(STRIPPED);
  if (set.isEmpty()) managers.delete(id);
  else managers.set(id, { ...vs, set });
}

/** Folds the oldest Update entries per version into `ancient-changes` until at most the cap remain. */
function capUpdateManagers(state: MutableState): void {
  const { managers, times } = state;
  if (managers.size <= MAX_UPDATE_MANAGERS) return;
  const updaters = [...managers].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const secs = (id: string): number => {
    const t = times.get(id);
    return t === undefined ? 0 : Date.parse(t) / 1000;
  };
  updaters.sort((a, b) => secs(a) - secs(b) || compareStrings(a, b));
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (const id of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const vs = managers.get(id) as VersionedSet;
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    const bucketInfo: ManagerInfo = {
      manager: 'ancient-changes',
      operation: 'Update',
      apiVersion: vs.apiVersion,
    };
    const bucket = managerIdentifier(bucketInfo);
    state.infos.set(bucket, bucketInfo);
    if (!managers.has(bucket)) {
      managers.set(bucket, managers.get(first) as VersionedSet);
      managers.delete(first);
    }
    managers.set(bucket, { ...vs, set: vs.set.union((managers.get(bucket) as VersionedSet).set) });
    managers.delete(id);
    const time = times.get(id);
    if (time === undefined) times.delete(bucket);
    else times.set(bucket, time);
    count--;
  }
}

interface MutableState {
  managers: Map<string, VersionedSet>;
  readonly times: Map<string, string>;
  readonly infos: Map<string, ManagerInfo>;
}

/**
 * Records the time of the operation on entry `id`. A `scale` entry has none: kube builds the
 * object's entries from the Scale's through its scale handler, which takes each entry's time
 * from the object's previous entries, where a scale manager's never had one (so such entries
 * also sort first).
 */
function stamp(times: Map<string, string>, id: string, o: OperationOptions): void {
  if (o.subresource === 'scale') times.delete(id);
  else times.set(id, formatTime(o.now));
}

/** One Update through kube's layers (build manager info, time, strip meta, cap). */
function runUpdate(
  oldObject: JsonMap,
  newObject: JsonMap,
  state: MutableState,
  manager: string,
  o: OperationOptions,
): void {
  const info: ManagerInfo = {
    manager: manager === '' ? 'unknown' : manager,
    operation: 'Update',
    apiVersion: o.apiVersion,
    ...(o.subresource === undefined ? {} : { subresource: o.subresource }),
  };
  const id = managerIdentifier(info);
  state.infos.set(id, info);
  const managers = updateManagers(oldObject, newObject, state.managers, CURRENT, {
    type: o.type,
    apiVersion: o.apiVersion,
    ...(o.ignoredFields === undefined ? {} : { ignored: o.ignoredFields }),
  });
  strip(managers, CURRENT);
  const taken = managers.get(CURRENT);
  if (taken !== undefined) {
    // The write changed something: it joins the manager's entry, which gets a new time.
    managers.delete(CURRENT);
    const previous = managers.get(id);
    managers.set(id, { ...taken, set: previous === undefined ? taken.set : taken.set.union(previous.set) });
    stamp(state.times, id, o);
  }
  state.managers = managers;
  capUpdateManagers(state);
}

function mutable(state: ManagedState): MutableState {
  return { managers: new Map(state.managers), times: new Map(state.times), infos: new Map(state.infos) };
}

/** True when the client asks to clear managedFields: `[]` or `[{}]`. */
function isReset(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  return (
    entries.length === 0 ||
    (entries.length === 1 && isJsonMap(entries[0]) && Object.keys(entries[0]).length === 0)
  );
}

function tryDecode(entries: unknown): ManagedState | undefined {
  try {
    return decodeManagedFields(entries);
  } catch (err) {
    if (err instanceof FieldsV1Error) return undefined;
    throw err;
  }
}

/**
 * managedFields after a non-apply write. Client-sent entries (`newObject.metadata.managedFields`)
 * win when valid and non-empty (clients may edit them), `[]`/`[{}]` clears them, anything else
 * falls back to the stored ones (invalid stored ones count as none). The writer's Update entry
 * gains what the write changed; other entries lose it; emptied entries disappear. Never throws
 * for bad entries: it resets them, as kube does.
 */
export function updateOperation(o: UpdateOptions): UpdateResult {
  const stored = o.managedFields !== undefined ? o.managedFields : metadataOf(o.oldObject)?.['managedFields'];
  const sent = metadataOf(o.newObject)?.['managedFields'];
  const subresource = o.subresource !== undefined && o.subresource !== '';
  let decoded: ManagedState;
  if (!subresource && isReset(sent)) decoded = EMPTY_STATE;
  else {
    const fromClient = subresource ? undefined : tryDecode(sent);
    decoded =
      fromClient !== undefined && fromClient.managers.size > 0
        ? fromClient
        : (tryDecode(stored) ?? EMPTY_STATE);
  }
  const newObject = withoutManagedFields(o.newObject);
  // An existing object nobody tracked stays untracked until its first apply.
  if (decoded.managers.size === 0 && o.oldObject !== undefined)
    return { object: newObject, managedFields: [] };
  const state = mutable(decoded);
  runUpdate(
    o.oldObject === undefined ? (o.createBase ?? {}) : withoutManagedFields(o.oldObject),
    newObject,
    state,
    o.manager,
    o,
  );
  const managedFields = encodeManagedFields(state);
  return { object: withManagedFields(newObject, managedFields), managedFields };
}

function splitApiVersion(apiVersion: string): [string, string] {
  const i = apiVersion.indexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/** Go's GroupVersionKind.String(): `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const [group, version] = splitApiVersion(typeof apiVersion === 'string' ? apiVersion : '');
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

function toConflictError(conflicts: Conflicts): ApplyConflictError {
  const ids = [...conflicts.byManager.keys()].sort(compareStrings);
  return new ApplyConflictError(
    ids.flatMap((id) => {
      const info = parseIdentifier(id);
      const describedManager = describeManager(id);
      return (conflicts.byManager.get(id) as FieldSet).paths().map((p) => ({
        manager: info?.manager ?? id,
        operation: info?.operation ?? 'Update',
        ...(info?.operation === 'Update' && info.apiVersion !== undefined
          ? { apiVersion: info.apiVersion }
          : {}),
        ...(info?.subresource === undefined ? {} : { subresource: info.subresource }),
        field: pathToString(p),
        describedManager,
      }));
    }),
  );
}

/**
 * Server-side apply of `config` by `manager`.
 * @throws ApplyError `INVALID_OBJECT_TYPE` (apiVersion/kind differ from the endpoint's),
 *   `MANAGED_FIELDS_IN_CONFIG`, `INVALID_CONFIG` (not of the schema), `INVALID_MANAGED_FIELDS`
 *   (stored entries undecodable).
 * @throws ApplyConflictError when not forced and the apply changes fields other managers own
 *   to other values; nothing is modified.
 */
export function applyOperation(o: ApplyOptions): ApplyResult {
  const { config } = o;
  if (config['apiVersion'] !== o.apiVersion || config['kind'] !== o.kind) {
    throw new ApplyError(
      'INVALID_OBJECT_TYPE',
      `invalid object type: ${gvkString(config['apiVersion'], config['kind'])}`,
    );
  }
  const configMeta = metadataOf(config);
  if (configMeta?.['managedFields'] !== undefined && configMeta['managedFields'] !== null) {
    throw new ApplyError('MANAGED_FIELDS_IN_CONFIG', 'metadata.managedFields must be nil');
  }
  const stored = o.managedFields !== undefined ? o.managedFields : metadataOf(o.live)?.['managedFields'];
  let decoded: ManagedState;
  try {
    decoded = decodeManagedFields(stored);
  } catch (cause) {
    if (!(cause instanceof FieldsV1Error)) throw cause;
    throw new ApplyError('INVALID_MANAGED_FIELDS', `failed to decode managed fields: ${cause.message}`, {
      cause,
    });
  }
  const state = mutable(decoded);
  const live = o.live === undefined ? {} : withoutManagedFields(o.live);
  // Fields set before anyone applied belong to "before-first-apply", so a first apply conflicts with them.
  if (state.managers.size === 0) runUpdate({}, live, state, 'before-first-apply', o);
  const info: ManagerInfo = {
    manager: o.manager,
    operation: 'Apply',
    ...(o.subresource === undefined ? {} : { subresource: o.subresource }),
  };
  const id = managerIdentifier(info);
  state.infos.set(id, info);
  const run = (force: boolean): ReturnType<typeof applyManagers> =>
    applyManagers(live, config, state.managers, id, force, {
      type: o.type,
      apiVersion: o.apiVersion,
      ...(o.ignoredFields === undefined ? {} : { ignored: o.ignoredFields }),
    });
  let outcome;
  try {
    try {
      outcome = run(o.force);
    } catch (err) {
      // Conflicts with what the same user last set by client-side apply are no conflicts.
      if (!(err instanceof Conflicts) || o.manager !== LAST_APPLIED_MANAGER) throw err;
      const allowed = allowedByLastApplied(o.live, o.type, o.apiVersion);
      if (allowed === undefined) throw err;
      const left = conflictsBeyond(err, allowed);
      if (left !== undefined) throw left;
      outcome = run(true);
    }
  } catch (err) {
    if (err instanceof Conflicts) throw toConflictError(err);
    if (err instanceof TypedValueError) {
      const name = typeof configMeta?.['name'] === 'string' ? configMeta['name'] : '';
      const ns = typeof configMeta?.['namespace'] === 'string' ? configMeta['namespace'] : '';
      const where = `${ns}/${name}; ${gvkString(config['apiVersion'], config['kind'])}`;
      throw new ApplyError(
        'INVALID_CONFIG',
        `failed to create typed patch object (${where}): ${err.message}`,
        { cause: err },
      );
    }
    throw err;
  }
  state.managers = outcome.managers;
  strip(state.managers, id);
  if (outcome.object !== undefined) stamp(state.times, id, o);
  const managedFields = encodeManagedFields(state);
  let object = withManagedFields(outcome.object ?? live, managedFields);
  let annotationChanged = false;
  if (o.manager === LAST_APPLIED_MANAGER) {
    const synced = withLastAppliedSynced(object, config);
    annotationChanged = synced !== object && !jsonEqual(metadataOf(synced), metadataOf(object));
    object = synced;
  }
  const previous = Array.isArray(stored) ? stored : [];
  return {
    object,
    managedFields,
    changed: outcome.object !== undefined || annotationChanged || !jsonEqual(previous, managedFields),
  };
}
