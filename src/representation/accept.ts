/**
 * Parsing of `Accept` and `Content-Type` header values into media ranges, as kube-apiserver's
 * negotiation (goautoneg) reads them: clauses separated by commas, parameters by semicolons,
 * `q` the quality. Parsing is lenient and never throws: a clause that is not `type/subtype`
 * is dropped, an unparsable `q` counts as 0 (not acceptable), parameter names are lower-cased
 * while values keep their case (`as=Table`). Quoted parameter values are unquoted.
 */

/** One media range of an `Accept` header (or the single media type of a `Content-Type`). */
export interface MediaRange {
  /** Lower-case type, `*` for any. */
  readonly type: string;
  /** Lower-case subtype, `*` for any. */
  readonly subtype: string;
  /** Parameters other than `q`, names lower-cased, in header order. */
  readonly params: ReadonlyMap<string, string>;
  /** Quality in [0, 1]; 1 when absent. */
  readonly q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Longest header value looked at; longer values are cut (a bounded amount of work per request). */
const MAX_HEADER_LENGTH = 16 * 1024;

/** Most clauses looked at in one header. */
const MAX_CLAUSES = 64;

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return value;
}

function parseQuality(text: string): number {
  if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(text)) {
    // goautoneg takes ParseFloat's result; anything else reads as 0 and is skipped.
    const n = Number(text);
    return Number.isFinite(n) && n >= 0 && n <= 1 ? n : 0;
  }
  return Number(text);
}

/**
 * Parses one clause (`application/json;as=Table;g=meta.k8s.io;v=v1;q=0.9`).
 * @returns undefined when the clause is not a media range.
 */
export function parseMediaRange(clause: string): MediaRange | undefined {
  const parts = clause.split(';');
  const full = (parts[0] ?? '').trim().toLowerCase();
  const slash = full.indexOf('/');
  if (slash <= 0 || slash === full.length - 1) return undefined;
  const type = full.slice(0, slash);
  const subtype = full.slice(slash + 1);
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  if (type === '*' && subtype !== '*') return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i] ?? '';
    const eq = p.indexOf('=');
    const name = (eq < 0 ? p : p.slice(0, eq)).trim().toLowerCase();
    if (name === '') continue;
    const value = eq < 0 ? '' : unquote(p.slice(eq + 1).trim());
    if (name === 'q') q = parseQuality(value);
    else if (!params.has(name)) params.set(name, value);
  }
  return { type, subtype, params, q };
}

/** Specificity rank used for ordering clauses of equal quality: exact before `x/*` before `*\/*`. */
function specificity(r: MediaRange): number {
  if (r.type === '*') return 0;
  if (r.subtype === '*') return 1;
  return 2;
}

/**
 * The clauses of an `Accept` header in preference order: quality descending, then the more
 * specific range first, then header order (a stable sort, so equal clauses keep the client's
 * order: `protobuf, json` means protobuf first). Clauses with `q=0` are dropped (RFC 9110: not
 * acceptable). An empty or absent header gives an empty list (the caller's default applies).
 */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined) return [];
  const text = header.length > MAX_HEADER_LENGTH ? header.slice(0, MAX_HEADER_LENGTH) : header;
  const out: MediaRange[] = [];
  for (const clause of text.split(',', MAX_CLAUSES)) {
    if (clause.trim() === '') continue;
    const range = parseMediaRange(clause);
    if (range !== undefined && range.q > 0) out.push(range);
  }
  return out
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || specificity(b.r) - specificity(a.r) || a.i - b.i)
    .map((x) => x.r);
}

/**
 * The media type of a `Content-Type` value without parameters, lower-cased
 * (`application/json; charset=utf-8` → `application/json`); `''` when absent or malformed.
 */
export function contentMediaType(header: string | undefined): string {
  if (header === undefined) return '';
  const range = parseMediaRange(header.length > MAX_HEADER_LENGTH ? '' : header);
  if (range === undefined || range.type === '*' || range.subtype === '*') return '';
  return `${range.type}/${range.subtype}`;
}
