/**
 * Tolerant readers over decoded JSON. Objects reach validation as plain JSON values whose shape
 * the decoder has not guaranteed, so every reader accepts anything and answers "absent" for a
 * value of the wrong type; validation must never throw on a malformed body.
 *
 * Absent, `null` and a wrong-typed value read alike, as Go's decoder would leave the zero value.
 */

/** A JSON object (not an array, not null). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not an array, not null). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object at `o[k]`, or undefined. */
export function obj(o: JsonObject | undefined, k: string): JsonObject | undefined {
  const v = o?.[k];
  return isObject(v) ? v : undefined;
}

/** The object at the end of `path` from `o`, or undefined when any step is not an object. */
export function objectAtPath(o: JsonObject | undefined, path: readonly string[]): JsonObject | undefined {
  let cur = o;
  for (const k of path) cur = obj(cur, k);
  return cur;
}

/** The array at `o[k]`, or undefined. */
export function arr(o: JsonObject | undefined, k: string): unknown[] | undefined {
  const v = o?.[k];
  return Array.isArray(v) ? v : undefined;
}

/** The array at `o[k]` as objects; non-object items read as empty objects so indexes stay true. */
export function objects(o: JsonObject | undefined, k: string): JsonObject[] {
  const a = arr(o, k);
  if (a === undefined) return [];
  return a.map((item) => (isObject(item) ? item : {}));
}

/** The string at `o[k]`, or `''` (Go's zero value). */
export function str(o: JsonObject | undefined, k: string): string {
  const v = o?.[k];
  return typeof v === 'string' ? v : '';
}

/** The string at `o[k]` when one is present (a pointer-to-string field), else undefined. */
export function optStr(o: JsonObject | undefined, k: string): string | undefined {
  const v = o?.[k];
  return typeof v === 'string' ? v : undefined;
}

/** The number at `o[k]`, or undefined (absent, null, or not a number). */
export function num(o: JsonObject | undefined, k: string): number | undefined {
  const v = o?.[k];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The boolean at `o[k]`, or undefined. */
export function bool(o: JsonObject | undefined, k: string): boolean | undefined {
  const v = o?.[k];
  return typeof v === 'boolean' ? v : undefined;
}

/** True when `v` is one of the allowed strings. */
export function oneOf(v: unknown, allowed: readonly string[]): boolean {
  return typeof v === 'string' && allowed.includes(v);
}

/** True when `o[k]` holds a value (not absent, not null). */
export function has(o: JsonObject | undefined, k: string): boolean {
  const v = o?.[k];
  return v !== undefined && v !== null;
}

/** The string-to-string map at `o[k]`; non-string values are skipped. */
export function stringMap(o: JsonObject | undefined, k: string): Map<string, string> {
  const m = new Map<string, string>();
  const v = obj(o, k);
  if (v === undefined) return m;
  for (const [mk, mv] of Object.entries(v)) {
    if (typeof mv === 'string') m.set(mk, mv);
  }
  return m;
}

/** The strings of the array at `o[k]` (non-strings skipped). */
export function strings(o: JsonObject | undefined, k: string): string[] {
  const a = arr(o, k);
  if (a === undefined) return [];
  return a.filter((x): x is string => typeof x === 'string');
}

/** Number of entries of an array or object at `o[k]` (0 when absent). */
export function size(o: JsonObject | undefined, k: string): number {
  const v = o?.[k];
  if (Array.isArray(v)) return v.length;
  if (isObject(v)) return Object.keys(v).length;
  return 0;
}

/**
 * Semantic equality of two JSON values as kube's `apiequality.Semantic.DeepEqual` sees decoded
 * objects: absent, `null`, `[]` and `{}` are all "empty" and equal each other; everything else
 * compares structurally. (Kube distinguishes a nil pointer-to-struct from an empty struct; JSON
 * bodies almost never depend on that, and the looser rule only makes immutability checks
 * tolerate `{}` against absent.)
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (!semanticEqual(a[k], b[k])) return false;
    }
    return true;
  }
  return false;
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.keys(v).length === 0;
  return false;
}
