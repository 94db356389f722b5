/**
 * A computed status compared with the one read back, as the API stores it. Go's JSON drops the
 * zero value of a non-pointer field tagged `omitempty`, so a status read back never shows
 * `readyReplicas: 0` or `currentRevision: ""`. A controller that compared its computed status
 * as it is would find it changed on every sync and write the same status forever (each write an
 * event, each event a sync); it compares the computed status without those fields instead, with
 * member order ignored (what it reads is in Go's field order).
 */
import { jsonEqual } from '../../api/object.js';

/** `status` without the zero values of `omitEmpty` (0, "", false), as Go would show it. */
export function asStored<T extends object>(status: T, omitEmpty: readonly (keyof T & string)[]): T {
  const out = { ...status };
  for (const key of omitEmpty) {
    const v = out[key];
    if (v === 0 || v === '' || v === false) delete out[key];
  }
  return out;
}

/** True when `computed`, stored, would read back as `stored` (see the module comment). */
export function sameStoredStatus<T extends object>(
  computed: T,
  stored: T | undefined,
  omitEmpty: readonly (keyof T & string)[],
): boolean {
  return jsonEqual(asStored(computed, omitEmpty), stored ?? {});
}
