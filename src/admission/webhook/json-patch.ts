/**
 * RFC 6902 JSON Patch for webhook responses: {@link decodePatch} checks the document's shape
 * (kube: "received undecodable patch", the webhook's failure), {@link applyPatch} applies it to a
 * copy (an operation that cannot apply is the server's 500, as kube's `patchObj.Apply` error).
 * The resource layer has its own patch code; admission sits below it and keeps this small one.
 */

/** One operation. */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Parses a patch document. @throws Error with the reason it is not a patch */
export function decodePatch(bytes: Buffer): PatchOperation[] {
  const doc: unknown = JSON.parse(bytes.toString('utf8'));
  if (!Array.isArray(doc))
    throw new Error('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return doc.map((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new Error(`operation ${i} is not an object`);
    const o = raw as Record<string, unknown>;
    if (typeof o['op'] !== 'string' || !OPS.has(o['op'])) throw new Error(`operation ${i}: unknown op`);
    if (typeof o['path'] !== 'string') throw new Error(`operation ${i}: missing path`);
    if ((o['op'] === 'move' || o['op'] === 'copy') && typeof o['from'] !== 'string')
      throw new Error(`operation ${i}: missing from`);
    if ((o['op'] === 'add' || o['op'] === 'replace' || o['op'] === 'test') && !('value' in o))
      throw new Error(`operation ${i}: missing value`);
    return o as unknown as PatchOperation;
  });
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

function parent(doc: unknown, path: string): { container: Container; key: string } {
  const t = tokens(path);
  const key = t.pop();
  if (key === undefined) throw new Error('the root cannot be the target of this operation');
  let cur: unknown = doc;
  for (const k of t) {
    if (Array.isArray(cur)) cur = cur[Number(k)];
    else if (isContainer(cur)) cur = (cur as Record<string, unknown>)[k];
    else cur = undefined;
    if (!isContainer(cur)) throw new Error(`doc is missing path: ${path}`);
  }
  if (!isContainer(cur)) throw new Error(`doc is missing path: ${path}`);
  return { container: cur, key };
}

function arrayIndex(arr: unknown[], key: string, path: string, forAdd: boolean): number {
  if (forAdd && key === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw new Error(`invalid array index in path: ${path}`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new Error(`index out of range: ${path}`);
  return i;
}

function get(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const k of tokens(path)) {
    if (Array.isArray(cur)) cur = cur[Number(k)];
    else if (isContainer(cur) && Object.hasOwn(cur, k)) cur = (cur as Record<string, unknown>)[k];
    else cur = undefined;
    if (cur === undefined) throw new Error(`doc is missing path: ${path}`);
  }
  return cur;
}

function add(doc: unknown, path: string, value: unknown): unknown {
  if (path === '') return value;
  const { container, key } = parent(doc, path);
  if (Array.isArray(container)) container.splice(arrayIndex(container, key, path, true), 0, value);
  else container[key] = value;
  return doc;
}

function remove(doc: unknown, path: string): unknown {
  const { container, key } = parent(doc, path);
  if (Array.isArray(container)) container.splice(arrayIndex(container, key, path, false), 1);
  else {
    if (!Object.hasOwn(container, key)) throw new Error(`unable to remove nonexistent key: ${key}`);
    delete container[key];
  }
  return doc;
}

function replace(doc: unknown, path: string, value: unknown): unknown {
  if (path === '') return value;
  const { container, key } = parent(doc, path);
  if (Array.isArray(container)) container[arrayIndex(container, key, path, false)] = value;
  else {
    if (!Object.hasOwn(container, key))
      throw new Error(`replace operation does not apply: doc is missing key: ${path}`);
    container[key] = value;
  }
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isContainer(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/** Applies `ops` to a copy of `doc`. @throws Error when an operation does not apply */
export function applyPatch(doc: unknown, ops: readonly PatchOperation[]): unknown {
  let out: unknown = structuredClone(doc);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        out = add(out, op.path, structuredClone(op.value));
        break;
      case 'remove':
        out = remove(out, op.path);
        break;
      case 'replace':
        out = replace(out, op.path, structuredClone(op.value));
        break;
      case 'move': {
        const value = get(out, op.from ?? '');
        out = remove(out, op.from ?? '');
        out = add(out, op.path, value);
        break;
      }
      case 'copy':
        out = add(out, op.path, structuredClone(get(out, op.from ?? '')));
        break;
      case 'test':
        if (!deepEqual(get(out, op.path), op.value)) throw new Error(`testing value ${op.path} failed`);
        break;
    }
  }
  return out;
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return deepEqual(a, b);
}
