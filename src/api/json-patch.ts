/**
 * JSON Patch (RFC 6902) over JSON values, with JSON Pointer paths (RFC 6901), as kube-apiserver
 * applies it (the json-patch library's v4 semantics, which are looser than the RFC's):
 * - `replace` of a key an object does not have sets it;
 * - an operation without `value` carries `null`.
 *
 * A patch document that is not a list of objects whose `op`, `path` and `from` are strings is a
 * {@link JsonPatchFormatError} (kube answers 400 with the message it decodes with); any other
 * failure (an unknown or incomplete operation, a missing path, a failed `test`) is a
 * {@link JsonPatchApplyError} (kube: 422). The input is never modified: the patch applies to a copy.
 */
import { cloneJson, isJsonObject, jsonEqual, setOwn, type JsonObject } from './object.js';

/** The patch document is not a list of well-formed operations. */
export class JsonPatchFormatError extends Error {
  readonly code = 'JSON_PATCH_FORMAT';
}

/** An operation could not be applied to the document. */
export class JsonPatchApplyError extends Error {
  readonly code = 'JSON_PATCH_APPLY';
}

interface Operation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Go's name for the JSON type of `v`, as its decoder's errors print it. */
function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** kube's message for a patch document its decoder refuses. */
function undecodable(what: string): JsonPatchFormatError {
  return new JsonPatchFormatError(`error decoding patch: json: cannot unmarshal ${what}`);
}

/**
 * Checks the shape of a patch document (what kube's decoder checks), then each operation (what
 * applying it would refuse).
 * @throws JsonPatchFormatError, JsonPatchApplyError
 */
export function parseJsonPatch(patch: unknown): readonly Operation[] {
  if (patch === null) return [];
  if (!Array.isArray(patch))
    throw undecodable(`${goJsonType(patch)} into Go value of type []handlers.jsonPatchOp`);
  for (const raw of patch) {
    if (raw === null) continue;
    if (!isJsonObject(raw))
      throw undecodable(`${goJsonType(raw)} into Go value of type handlers.jsonPatchOp`);
    for (const field of ['op', 'path', 'from']) {
      const v = raw[field];
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw undecodable(`${goJsonType(v)} into Go struct field jsonPatchOp.${field} of type string`);
      }
    }
  }
  return patch.map((raw: unknown, i): Operation => {
    const { op, path, from } = isJsonObject(raw) ? raw : {};
    if (typeof op !== 'string' || !OPS.has(op))
      throw new JsonPatchApplyError(`operation ${i}: unknown op ${JSON.stringify(op ?? 'unknown')}`);
    if (typeof path !== 'string') throw new JsonPatchApplyError(`operation ${i}: missing path`);
    pointer(path);
    if ((op === 'move' || op === 'copy') && typeof from !== 'string') {
      throw new JsonPatchApplyError(`operation ${i}: ${op} needs from`);
    }
    if (typeof from === 'string') pointer(from);
    const value = isJsonObject(raw) ? (raw['value'] ?? null) : null;
    return { op: op as Operation['op'], path, ...(typeof from === 'string' ? { from } : {}), value };
  });
}

/** Splits a JSON pointer into unescaped tokens. @throws JsonPatchApplyError */
function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchApplyError(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = JsonObject | unknown[];

function arrayIndex(arr: unknown[], token: string, forAdd: boolean, path: string): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw new JsonPatchApplyError(`invalid array index ${JSON.stringify(token)} in ${path}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) {
    throw new JsonPatchApplyError(`array index ${i} out of bounds in ${path}`);
  }
  return i;
}

/** The container holding the last token of `tokens`, and that token. */
function parentOf(doc: unknown, tokens: readonly string[], path: string): [Container, string] {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, false, path)];
    else if (isJsonObject(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new JsonPatchApplyError(`doc is missing path: ${path}`);
  }
  if (!Array.isArray(cur) && !isJsonObject(cur))
    throw new JsonPatchApplyError(`doc is missing path: ${path}`);
  return [cur, tokens[tokens.length - 1] ?? ''];
}

function get(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, false, path)];
    else if (isJsonObject(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new JsonPatchApplyError(`doc is missing path: ${path}`);
  }
  return cur;
}

function add(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const [parent, key] = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, path), 0, value);
  else setOwn(parent, key, value);
  return doc;
}

function remove(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) throw new JsonPatchApplyError('cannot remove the whole document');
  const [parent, key] = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false, path), 1);
  else if (Object.hasOwn(parent, key)) delete parent[key];
  else throw new JsonPatchApplyError(`Unable to remove nonexistent key: ${key}: missing value`);
  return doc;
}

function replace(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const [parent, key] = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent[arrayIndex(parent, key, false, path)] = value;
  // kube's json-patch sets a key the object does not have.
  else setOwn(parent, key, value);
  return doc;
}

/**
 * `doc` with `patch` applied.
 * @throws JsonPatchFormatError for a malformed patch; JsonPatchApplyError when an operation fails.
 */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  const ops = parseJsonPatch(patch);
  let out = cloneJson(doc);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        out = add(out, op.path, cloneJson(op.value));
        break;
      case 'remove':
        out = remove(out, op.path);
        break;
      case 'replace':
        out = replace(out, op.path, cloneJson(op.value));
        break;
      case 'move': {
        const from = op.from ?? '';
        if (op.path.startsWith(`${from}/`))
          throw new JsonPatchApplyError(`cannot move ${from} into its own child`);
        const value = get(out, from);
        out = add(remove(out, from), op.path, value);
        break;
      }
      case 'copy':
        out = add(out, op.path, cloneJson(get(out, op.from ?? '')));
        break;
      case 'test':
        if (!jsonEqual(get(out, op.path), op.value)) {
          throw new JsonPatchApplyError(`testing value ${op.path} failed: test failed`);
        }
        break;
    }
  }
  return out;
}
