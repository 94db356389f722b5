/**
 * kube's conversion between the two served forms of an Event: core `v1` (the storage version,
 * as kube-apiserver stores `/registry/events`) and `events.k8s.io/v1`. Field for field it is
 * kube's `Convert_v1_Event_To_core_Event` and back: `regarding`↔`involvedObject`,
 * `note`↔`message`, `reportingController`↔`reportingComponent`, `deprecatedSource`↔`source`,
 * `deprecated{First,Last}Timestamp`↔`{first,last}Timestamp`, `deprecatedCount`↔`count`; the
 * rest (eventTime, series, action, reason, related, reportingInstance, type) is the same.
 */
import { isJsonObject, type KubeObject } from '../api/object.js';

/** The apiVersion of the core form. */
export const CORE_EVENT_API_VERSION = 'v1';
/** The apiVersion of the events.k8s.io form. */
export const EVENTS_API_VERSION = 'events.k8s.io/v1';

/** Field renames, events.k8s.io/v1 name → core v1 name. */
const RENAMES: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

/** Structs kube always writes (non-pointer, so `{}` when empty), by the target form's name. */
const ALWAYS_CORE = ['involvedObject', 'source'];
const ALWAYS_EVENTS = ['regarding', 'deprecatedSource'];

function rename(
  obj: KubeObject,
  apiVersion: string,
  pairs: readonly (readonly [string, string])[],
  always: readonly string[],
): KubeObject {
  const { kind: _k, apiVersion: _a, metadata, ...rest } = obj;
  const out: KubeObject = { kind: 'Event', apiVersion, metadata };
  const names = new Map(pairs);
  for (const [field, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    out[names.get(field) ?? field] = value;
  }
  for (const field of always) if (!isJsonObject(out[field])) out[field] = {};
  return out;
}

/** The core v1 form of an events.k8s.io/v1 Event (a new object; `obj` is not changed). */
export function eventToCore(obj: KubeObject): KubeObject {
  return rename(obj, CORE_EVENT_API_VERSION, RENAMES, ALWAYS_CORE);
}

/** The events.k8s.io/v1 form of a core v1 Event (a new object; `obj` is not changed). */
export function eventFromCore(obj: KubeObject): KubeObject {
  return rename(
    obj,
    EVENTS_API_VERSION,
    RENAMES.map(([a, b]) => [b, a] as const),
    ALWAYS_EVENTS,
  );
}
