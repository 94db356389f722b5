/**
 * The CEL side of a structural schema: the declared type of `self` at a node (object types for
 * objects with properties, `map<string, T>` for additionalProperties, `list<T>`, scalars,
 * `dyn` for int-or-string and preserve-unknown-fields), JSON values converted to CEL values
 * (integers of `type: integer` as int, `type: number` as double), and the size bounds the cost
 * estimator uses (maxItems/maxLength/maxProperties, or kube's estimate from the 3 MiB request
 * limit when unbounded).
 */
import type { CelObjectType, SizeOracle } from '../cel/index.js';
import { isJsonMap, type SchemaNode } from './node.js';

const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** Declared CEL types of a rule node and the object types they need. */
export interface CelTypes {
  readonly selfType: string;
  readonly objectTypes: readonly CelObjectType[];
}

/** Builds the CEL type of `self` at `node`. */
export function celTypesOf(node: SchemaNode, resourceRoot: boolean): CelTypes {
  const objectTypes: CelObjectType[] = [];
  let n = 0;
  const typeOf = (s: SchemaNode | undefined, root: boolean): string => {
    if (s === undefined) return 'dyn';
    if (s.intOrString || s.embeddedResource) return 'dyn';
    switch (s.type) {
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'string':
        return 'string';
      case 'boolean':
        return 'bool';
      case 'array':
        return `list<${typeOf(s.items, false)}>`;
      case 'object': {
        if (s.preserveUnknownFields) return s.properties.size > 0 ? 'dyn' : 'map<string, dyn>';
        if (s.properties.size === 0) {
          const ap = s.additionalProperties;
          return `map<string, ${ap === undefined || ap === true ? 'dyn' : typeOf(ap, false)}>`;
        }
        const fields: Record<string, string> = {};
        for (const [k, p] of s.properties) fields[k] = typeOf(p, false);
        if (root) {
          fields['apiVersion'] = 'string';
          fields['kind'] = 'string';
          fields['metadata'] = 'dyn';
        }
        const name = `Object${n++}`;
        objectTypes.push({ name, fields });
        return name;
      }
      default:
        return 'dyn';
    }
  };
  const selfType = typeOf(node, resourceRoot);
  return { selfType, objectTypes };
}

/** Converts a JSON value to CEL values following the schema's types. */
export function toCel(value: unknown, node: SchemaNode | undefined): unknown {
  if (typeof value === 'number') {
    if (node?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => toCel(v, node?.items));
  if (isJsonMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p =
        node?.properties.get(k) ??
        (node?.additionalProperties === true ? undefined : node?.additionalProperties);
      out[k] = toCel(v, p);
    }
    return out;
  }
  return value;
}

function minSerializedSize(s: SchemaNode | undefined): number {
  switch (s?.type) {
    case 'string':
      return 2;
    case 'boolean':
      return 4;
    case 'integer':
    case 'number':
      return 1;
    default:
      return 2;
  }
}

/** The maximum size of the value at `node` (elements, properties or characters). */
export function maxSize(node: SchemaNode | undefined): number | undefined {
  if (node === undefined) return undefined;
  if (node.type === 'array')
    return node.maxItems ?? Math.floor(MAX_REQUEST_BYTES / (minSerializedSize(node.items) + 1));
  if (node.type === 'string') return node.maxLength ?? MAX_REQUEST_BYTES - 2;
  if (node.type === 'object' && node.properties.size === 0)
    return node.maxProperties ?? Math.floor(MAX_REQUEST_BYTES / 5);
  return undefined;
}

/** A {@link SizeOracle} for rules at `node` (`self` is the node). */
export function sizeOracle(node: SchemaNode): SizeOracle {
  return (path) => {
    if (path[0] !== 'self' && path[0] !== 'oldSelf') return undefined;
    let cur: SchemaNode | undefined = node;
    for (const seg of path.slice(1)) {
      if (cur === undefined) return undefined;
      if (seg === '@items')
        cur = cur.items ?? (cur.additionalProperties === true ? undefined : cur.additionalProperties);
      else
        cur =
          cur.properties.get(seg) ??
          (cur.additionalProperties === true ? undefined : cur.additionalProperties);
    }
    return maxSize(cur);
  };
}
