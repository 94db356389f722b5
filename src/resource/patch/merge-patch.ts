/**
 * JSON Merge Patch (RFC 7386): objects merge key by key, `null` deletes a key, anything else
 * (arrays included) replaces. The target is never modified.
 */
import { cloneJson, isJsonObject, ownMember, setOwn, type JsonObject } from '../../api/object.js';

/** `target` with `patch` merged in (RFC 7386 `MergePatch`). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(ownMember(out, key), value));
  }
  return out;
}
