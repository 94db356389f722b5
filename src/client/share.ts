/**
 * Holding equal parts of many cached objects once. The pods of one workload have equal labels,
 * owner references, containers, tolerations and volumes, and their namespace, node and scheduler
 * names are a few strings; an informer that keeps 10,000 of them otherwise holds 10,000 copies of
 * each (V8's JSON parser makes a new object for every object it reads, and shares only short
 * strings). A component's informer transform hands those parts to one {@link ValueSharer}.
 *
 * The shared copies are frozen: informers' objects are read-only by contract, and a write to a
 * shared part would change every object that holds it, so it fails loudly (a TypeError) instead.
 * Code that changes a cached object must copy it first (`cloneJson`, `structuredClone`: both give
 * unfrozen copies).
 */
import { deepFreeze } from '../api/object.js';

/** Values above this many characters of JSON are not shared: they are seldom repeated. */
const MAX_SHARED_JSON = 4096;

/**
 * One frozen copy of each distinct JSON value (and string) it is handed, so equal parts of many
 * objects are held once. Each table holds at most `limit` entries and starts over when full, so
 * values that never repeat (a StatefulSet pod's own label) cannot grow it without bound; objects
 * trimmed before that keep their copies, which are only no longer shared with later ones.
 */
export class ValueSharer {
  readonly #values = new Map<string, unknown>();
  /** The shared copy last handed out for each field name: the next object's is most often equal. */
  readonly #recent = new Map<string, unknown>();
  readonly #strings = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 4096) {
    this.#limit = limit;
  }

  /**
   * The shared, frozen copy of `value` (a JSON object or array); `undefined` stays undefined.
   * `field` names where the value was found (`labels`, `containers`): the copy last handed out
   * for that name is compared first, member by member, which costs less than the JSON text the
   * table is keyed by, and is the answer for the pods of one workload arriving one after another.
   */
  value<T>(value: T, field?: string): T {
    if (typeof value !== 'object' || value === null) return value;
    const recent = field === undefined ? undefined : this.#recent.get(field);
    if (recent !== undefined && sameJsonText(recent, value)) return recent as T;
    const shared = this.#lookUp(value);
    if (field !== undefined && shared !== value) this.#recent.set(field, shared);
    return shared;
  }

  #lookUp<T>(value: T): T {
    const key = JSON.stringify(value);
    if (key.length > MAX_SHARED_JSON) return value;
    const known = this.#values.get(key);
    if (known !== undefined) return known as T;
    if (this.#values.size >= this.#limit) this.#values.clear();
    // A copy: the caller's object is left as it was (and unfrozen).
    const copy = deepFreeze(JSON.parse(key) as T);
    this.#values.set(key, copy);
    return copy;
  }

  /**
   * Replaces every part of `obj` with its shared copy: object and array values by
   * {@link value}, strings by {@link string}; numbers and booleans stay.
   */
  shareParts(obj: object): void {
    const fields = obj as Record<string, unknown>;
    for (const k of Object.keys(fields)) {
      const v = fields[k];
      if (typeof v === 'object' && v !== null) fields[k] = this.value(v, k);
      else if (typeof v === 'string') fields[k] = this.string(v);
    }
  }

  /** The shared instance of `s`. */
  string<T extends string | undefined>(s: T): T {
    if (s === undefined) return s;
    const known = this.#strings.get(s);
    if (known !== undefined) return known as T;
    if (this.#strings.size >= this.#limit) this.#strings.clear();
    this.#strings.set(s, s);
    return s;
  }
}

/** Sets `obj[key]` to the shared copy of its value, when it has one. */
export function shareField<T extends object, K extends keyof T>(obj: T, key: K, sharer: ValueSharer): void {
  const v = obj[key];
  if (v !== undefined) obj[key] = sharer.value(v, String(key));
}

/** Sets `obj[key]` to the shared instance of its string, when it has one. */
export function shareString<T extends object, K extends keyof T>(obj: T, key: K, sharer: ValueSharer): void {
  const v = obj[key];
  if (typeof v === 'string') obj[key] = sharer.string(v);
}

/**
 * True when `a` and `b` (JSON values, as `JSON.parse` makes them) have the same JSON text: equal
 * scalars, and objects with the same keys in the same order. Key order counts because the table
 * is keyed by the text, so a shared copy always reads as the value it stands for.
 */
function sameJsonText(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonText(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i]) return false;
    if (!sameJsonText((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
