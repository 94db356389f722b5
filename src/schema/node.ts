/**
 * The compiled form of one node of a CRD's `openAPIV3Schema` (kube's `Structural` plus the
 * value-validation keywords): read once from the CRD's JSON, then walked by defaulting, pruning,
 * validation and the apply type. Everything here is immutable after {@link compileNode}.
 */
import type { JsonObject } from '../api/object.js';

/** One `x-kubernetes-validations` entry. */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
  readonly messageExpression: string;
  readonly reason: string;
  readonly fieldPath: string;
  readonly optionalOldSelf: boolean;
}

/** A compiled schema node. */
export interface SchemaNode {
  /** `type` ('' when absent: int-or-string, preserve-unknown-fields, value-validation nodes). */
  readonly type: string;
  readonly nullable: boolean;
  readonly intOrString: boolean;
  readonly preserveUnknownFields: boolean;
  readonly embeddedResource: boolean;
  readonly format: string;
  readonly properties: ReadonlyMap<string, SchemaNode>;
  /** A schema for undeclared keys, `true` (anything), or undefined (none). */
  readonly additionalProperties: SchemaNode | true | undefined;
  readonly items: SchemaNode | undefined;
  /** True when the node declares `default` (which may be `null`). */
  readonly hasDefault: boolean;
  readonly default: unknown;
  readonly enum: readonly unknown[] | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMaximum: boolean;
  readonly minimum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly multipleOf: number | undefined;
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly pattern: { readonly source: string; readonly re: RegExp | undefined } | undefined;
  readonly maxItems: number | undefined;
  readonly minItems: number | undefined;
  readonly uniqueItems: boolean;
  readonly maxProperties: number | undefined;
  readonly minProperties: number | undefined;
  readonly required: readonly string[];
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  readonly listType: 'atomic' | 'set' | 'map' | undefined;
  readonly listMapKeys: readonly string[];
  readonly mapType: 'granular' | 'atomic' | undefined;
  readonly validations: readonly ValidationRule[];
}

function isObj(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(o: JsonObject, k: string): number | undefined {
  const v = o[k];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function str(o: JsonObject, k: string): string {
  const v = o[k];
  return typeof v === 'string' ? v : '';
}

/**
 * Compiles a pattern as kube's Go regexp would match it, as far as ECMAScript can: the `u` flag
 * (code points, strict escapes); a pattern JS cannot compile is kept with `re` undefined (the CRD
 * check reports it; values are then not checked against it).
 */
export function compilePattern(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'u');
  } catch {
    try {
      return new RegExp(source);
    } catch {
      return undefined;
    }
  }
}

function rules(v: unknown): ValidationRule[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isObj).map((r) => ({
    rule: str(r, 'rule'),
    message: str(r, 'message'),
    messageExpression: str(r, 'messageExpression'),
    reason: str(r, 'reason'),
    fieldPath: str(r, 'fieldPath'),
    optionalOldSelf: r['optionalOldSelf'] === true,
  }));
}

const EMPTY: ReadonlyMap<string, SchemaNode> = new Map();

/** Compiles one schema node (and its children) from the CRD's JSON. */
export function compileNode(raw: JsonObject): SchemaNode {
  const props = isObj(raw['properties']) ? raw['properties'] : undefined;
  const properties = new Map<string, SchemaNode>();
  if (props !== undefined)
    for (const [k, v] of Object.entries(props)) if (isObj(v)) properties.set(k, compileNode(v));
  const ap = raw['additionalProperties'];
  const additionalProperties: SchemaNode | true | undefined = isObj(ap)
    ? compileNode(ap)
    : ap === true
      ? true
      : undefined;
  const items = isObj(raw['items']) ? compileNode(raw['items']) : undefined;
  const list = (k: string): SchemaNode[] =>
    Array.isArray(raw[k]) ? (raw[k] as unknown[]).filter(isObj).map(compileNode) : [];
  const pattern = typeof raw['pattern'] === 'string' ? raw['pattern'] : undefined;
  const listType = str(raw, 'x-kubernetes-list-type');
  const mapType = str(raw, 'x-kubernetes-map-type');
  return {
    type: str(raw, 'type'),
    nullable: raw['nullable'] === true,
    intOrString: raw['x-kubernetes-int-or-string'] === true,
    preserveUnknownFields: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: raw['x-kubernetes-embedded-resource'] === true,
    format: str(raw, 'format'),
    properties: properties.size === 0 ? EMPTY : properties,
    additionalProperties,
    items,
    hasDefault: 'default' in raw,
    default: raw['default'],
    enum: Array.isArray(raw['enum']) ? (raw['enum'] as unknown[]) : undefined,
    maximum: num(raw, 'maximum'),
    exclusiveMaximum: raw['exclusiveMaximum'] === true,
    minimum: num(raw, 'minimum'),
    exclusiveMinimum: raw['exclusiveMinimum'] === true,
    multipleOf: num(raw, 'multipleOf'),
    maxLength: num(raw, 'maxLength'),
    minLength: num(raw, 'minLength'),
    pattern: pattern === undefined ? undefined : { source: pattern, re: compilePattern(pattern) },
    maxItems: num(raw, 'maxItems'),
    minItems: num(raw, 'minItems'),
    uniqueItems: raw['uniqueItems'] === true,
    maxProperties: num(raw, 'maxProperties'),
    minProperties: num(raw, 'minProperties'),
    required: Array.isArray(raw['required'])
      ? (raw['required'] as unknown[]).filter((s): s is string => typeof s === 'string')
      : [],
    allOf: list('allOf'),
    anyOf: list('anyOf'),
    oneOf: list('oneOf'),
    not: isObj(raw['not']) ? compileNode(raw['not']) : undefined,
    listType: listType === 'atomic' || listType === 'set' || listType === 'map' ? listType : undefined,
    listMapKeys: Array.isArray(raw['x-kubernetes-list-map-keys'])
      ? (raw['x-kubernetes-list-map-keys'] as unknown[]).filter((s): s is string => typeof s === 'string')
      : [],
    mapType: mapType === 'granular' || mapType === 'atomic' ? mapType : undefined,
    validations: rules(raw['x-kubernetes-validations']),
  };
}

/** The node a value of property `key` of an object of `node` is checked with, if any. */
export function propertyNode(node: SchemaNode, key: string): SchemaNode | undefined {
  const p = node.properties.get(key);
  if (p !== undefined) return p;
  return node.additionalProperties === true ? undefined : node.additionalProperties;
}

/** A plain JSON object (not null, not an array). */
export function isJsonMap(v: unknown): v is JsonObject {
  return isObj(v);
}
