/**
 * Fields an object has that its kind's schema does not declare: kube-apiserver's typed decoder
 * drops them (and field validation reports them). Paths are kube's: keys joined by `.`, list
 * items `[i]`, map entries `[key]`; untyped values (RawExtension, JSON) are not descended.
 */
import type { StructType, TypeNode } from '../../apply/index.js';
import { isJsonObject, type JsonObject } from '../../api/object.js';

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function walk(value: unknown, t: TypeNode, path: string, out: string[]): void {
  switch (t.kind) {
    case 'leaf':
      return;
    case 'struct':
      if (isJsonObject(value)) pruneStruct(value, t, path, out);
      return;
    case 'map':
      if (!isJsonObject(value) || t.element.kind === 'leaf') return;
      for (const [k, v] of Object.entries(value)) walk(v, t.element, `${path}[${k}]`, out);
      return;
    case 'list':
      if (!Array.isArray(value) || t.element.kind === 'leaf') return;
      for (let i = 0; i < value.length; i++) walk(value[i], t.element, `${path}[${i}]`, out);
      return;
  }
}

function pruneStruct(obj: JsonObject, t: StructType, path: string, out: string[]): void {
  for (const key of Object.keys(obj)) {
    const ft = t.field(key);
    if (ft === undefined) {
      out.push(join(path, key));
      delete obj[key];
    } else walk(obj[key], ft, join(path, key), out);
  }
}

/**
 * Removes from `obj` (in place) every field `type` does not declare and returns their paths in
 * document order.
 * @example pruneUnknownFields({ spec: { replicas: 1, foo: 2 } }, deploymentType) // ['spec.foo']
 */
export function pruneUnknownFields(obj: JsonObject, type: StructType): string[] {
  const out: string[] = [];
  pruneStruct(obj, type, '', out);
  return out;
}
