/**
 * JSON values as server-side apply sees them: equality, the total order structured-merge-diff
 * (SMD) defines on values (it decides the order of set items and list-map keys in FieldsV1),
 * and the two string renderings kube uses for values inside field paths — Go JSON (in FieldsV1
 * keys such as `k:{"name":"c"}`) and Go `%v`/`%q` (in conflict messages such as `[name="c"]`).
 *
 * Values are plain parsed JSON: numbers are JS numbers, so Go's int/float distinction is gone;
 * integers print as integers either way, which is all the API uses in keys.
 */

/** A parsed JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A parsed JSON object. */
export type JsonMap = { [key: string]: JsonValue };

/** True for a JSON object (not null, not an array). */
export function isJsonMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Equality and deep copies are the API's (a parsed `__proto__` key stays a member of a copy).
export { cloneJson, jsonEqual } from '../api/object.js';

/**
 * Compares strings by Unicode code point, which is Go's byte-wise UTF-8 order
 * (`strings.Compare`); plain `<` on JS strings compares UTF-16 units and differs for
 * characters above U+FFFF.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let ca = a.charCodeAt(i);
    let cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Surrogates (U+D800..DFFF) encode code points above U+FFFF: move them after U+E000..FFFF.
    if (ca >= 0xd800) ca = ca <= 0xdfff ? ca + 0x2000 : ca - 0x800;
    if (cb >= 0xd800) cb = cb <= 0xdfff ? cb + 0x2000 : cb - 0x800;
    return ca < cb ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function rank(v: JsonValue): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null) return 4;
  return 5;
}

/**
 * SMD's total order on values: numbers < strings < booleans < lists < maps < null; numbers
 * numerically, strings by code point, false < true, lists element-wise then by length, maps by
 * their sorted entries then by size. Used to sort set items (`v:`) and keys (`k:`).
 */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a === false ? -1 : 1;
    case 3: {
      const la = a as JsonValue[];
      const lb = b as JsonValue[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i] as JsonValue, lb[i] as JsonValue);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      const ma = a as JsonMap;
      const mb = b as JsonMap;
      const ka = Object.keys(ma).sort(compareStrings);
      const kb = Object.keys(mb).sort(compareStrings);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        const c = compareStrings(ka[i] as string, kb[i] as string);
        if (c !== 0) return c;
        const d = compareValues(ma[ka[i] as string] as JsonValue, mb[kb[i] as string] as JsonValue);
        if (d !== 0) return d;
      }
      return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

// Characters Go's HTML-safe JSON encoder (jsoniter's standard-library mode, which SMD uses)
// escapes, plus lone surrogates, which Go sees as invalid UTF-8.
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

/**
 * A string as Go's JSON encoder writes it with HTML escaping: `<`, `>`, `&` as `\u003c`,
 * `\u003e`, `\u0026`; U+2028/2029 escaped; control characters other than `\n\r\t` as `\u00XX`;
 * invalid UTF-16 (lone surrogates) as U+FFFD. FieldsV1 keys carry values in this form, so
 * the exact bytes matter for round trips with kube-written entries.
 */
export function goJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i] + (s[i + 1] as string);
        i++;
      } else out += '\\ufffd';
    } else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += s[i];
  }
  return `${out}"`;
}

/**
 * A JSON value encoded as Go does for FieldsV1 keys: strings per {@link goJsonString}, numbers
 * as JSON numbers, maps with sorted keys (Go would not guarantee an order; such keys do not
 * occur in the API).
 */
export function goJson(v: JsonValue): string {
  if (typeof v === 'string') return goJsonString(v);
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const keys = Object.keys(v).sort(compareStrings);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJson(v[k] as JsonValue)}`).join(',')}}`;
}

/** Go `%q` of a string (strconv.Quote) for the characters the API can contain. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** Go `%v` of a float64 (shortest form, exponent below 1e-4 and from 1e21, two-digit exponent). */
function goFloat(n: number): string {
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}

/**
 * SMD's `value.ToString`, as conflict messages and cause fields show values: strings quoted
 * (`"c"`), numbers and booleans bare, lists `[a,b]`, maps `k=v` pairs, null `null`.
 */
export function valueToString(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : goFloat(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  return Object.keys(v)
    .sort(compareStrings)
    .map((k) => `${k}=${valueToString(v[k] as JsonValue)}`)
    .join('');
}
