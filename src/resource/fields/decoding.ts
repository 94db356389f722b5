/**
 * What kube-apiserver's typed JSON decoder (Go's `encoding/json` into the kind's structs) makes
 * of an object, found in one walk over it with the kind's schema:
 *
 * - fields the schema does not declare, which the decoder drops (and field validation reports).
 *   Paths are kube's: keys joined by `.`, list items `[i]`, map entries `[key]`; untyped values
 *   (RawExtension, JSON) are not descended;
 * - the first value of the wrong JSON type in document order (a number where a string belongs,
 *   an object for a list, a fraction for an int32, bad base64 for bytes, ...), which the decoder
 *   refuses with Go's `json: cannot unmarshal object into Go struct field ConfigMap.data of type
 *   string`. An object stored with such a value could not be read by any typed client. `null`
 *   is taken anywhere (Go leaves the zero value); a `null` map entry or list item of a string,
 *   number or boolean type becomes that zero value (`""`, 0, false), as Go stores it;
 * - a null or empty map or list where Go's `omitempty` drops it, which is removed (what the
 *   field manager records and what is stored are Go's).
 */
import type { LeafType, StructType, TypeNode } from '../../apply/index.js';
import { isJsonObject, type JsonObject } from '../../api/object.js';
import { base64Length } from '../../validation/core/config.js';
import { goTimeParseError } from '../../api/go-time.js';

/**
 * Whose words a refusal is in: Go's JSON decoder (`json`: bodies, merge and JSON patches), or
 * apimachinery's unstructured converter (`unstructured`: a strategic merge patch's result, which
 * kube converts from a map: `cannot convert int64 to string`, `cannot restore struct from: string`).
 */
export type DecodeDialect = 'json' | 'unstructured';

/** What the decoder would do with an object (see the module comment). */
export interface DecodeReport {
  /** Paths of the fields the schema does not declare, in document order; removed from the object. */
  readonly unknown: string[];
  /** Go's error for the first value of the wrong type; undefined when every value fits. */
  typeError: string | undefined;
  readonly dialect: DecodeDialect;
}

/**
 * Go's error context: the struct whose field is being decoded, and the JSON names of the struct
 * fields down to it (a stack the walk pushes and pops).
 */
interface GoContext {
  readonly struct: string;
  readonly fields: string[];
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Go's `reflect.Type.String()` of a message: package and name (`v1.PodSpec`). */
function goTypeName(message: string): string {
  const parts = message.split('.');
  return parts.slice(-2).join('.');
}

/** Go's name of the type a value of `t` decodes into. */
function goType(t: TypeNode): string {
  switch (t.kind) {
    case 'leaf':
      return t.decodes?.goType ?? 'interface {}';
    case 'struct':
      return goTypeName(t.name);
    case 'map':
      return `map[string]${goType(t.element)}`;
    case 'list':
      return `[]${goType(t.element)}`;
  }
}

/** How Go's `UnmarshalTypeError` names a JSON value (a number as `number`; its literal is added where Go adds it). */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

function unmarshalError(value: string, at: GoContext, type: string): string {
  const where = at.fields.length === 0 ? 'Go value' : `Go struct field ${at.struct}.${at.fields.join('.')}`;
  return `json: cannot unmarshal ${value} into ${where} of type ${type}`;
}

/** Kube's error for a Quantity that is neither a string nor a number. */
const QUANTITY_FORMAT =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Go's zero value of a plain scalar leaf; undefined for the others. */
function zeroOf(leaf: LeafType): string | number | boolean | undefined {
  switch (leaf.decodes?.accepts) {
    case 'string':
    case 'base64':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return undefined;
  }
}

/** Go's error for a scalar value `leaf` does not take, or undefined. */
function leafError(value: unknown, leaf: LeafType, at: GoContext): string | undefined {
  const d = leaf.decodes;
  if (d === undefined) return undefined;
  const refuse = (what: string): string => unmarshalError(what, at, d.goType);
  const integer = (): string | undefined => {
    if (typeof value !== 'number') return refuse(jsonKind(value));
    const inRange = Number.isInteger(value) && value >= (d.min ?? -Infinity) && value <= (d.max ?? Infinity);
    return inRange ? undefined : refuse(`number ${String(value)}`);
  };
  switch (d.accepts) {
    case 'string':
      return typeof value === 'string' ? undefined : refuse(jsonKind(value));
    case 'base64': {
      if (typeof value !== 'string') return refuse(jsonKind(value));
      const decoded = base64Length(value);
      // Go's base64 error, without the JSON context.
      return 'badAt' in decoded ? `illegal base64 data at input byte ${decoded.badAt}` : undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : refuse(jsonKind(value));
    case 'number':
      return typeof value === 'number' ? undefined : refuse(jsonKind(value));
    case 'integer':
      return integer();
    case 'intOrString':
      return typeof value === 'string' ? undefined : integer();
    case 'quantity':
      return typeof value === 'string' || typeof value === 'number' ? undefined : QUANTITY_FORMAT;
    case 'time':
    case 'microTime':
      if (typeof value !== 'string') return refuse(jsonKind(value));
      return goTimeParseError(value, d.accepts === 'microTime');
  }
}

/** Go's `reflect.Kind` of a value as kube's unstructured maps hold it. */
function unstructuredKind(value: unknown): string {
  if (Array.isArray(value)) return 'slice';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'map' : typeof value;
}

/** The unstructured converter's error for a scalar value `leaf` does not take, or undefined. */
function convertLeafError(value: unknown, leaf: LeafType, at: GoContext): string | undefined {
  const d = leaf.decodes;
  if (d === undefined) return undefined;
  const kind = unstructuredKind(value);
  switch (d.accepts) {
    case 'string':
    case 'time':
    case 'microTime':
      // Times convert as the string they hold, then parse it.
      if (typeof value === 'string') return d.accepts === 'string' ? undefined : leafError(value, leaf, at);
      return kind === 'int64' ? 'cannot convert int64 to string' : 'unrecognized type: string';
    case 'base64':
      return typeof value === 'string' ? leafError(value, leaf, at) : `cannot restore slice from ${kind}`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'unrecognized type: bool';
    case 'integer':
      if (kind === 'int64') return undefined;
      return kind === 'float64' ? `cannot convert float64 to ${d.goType}` : `unrecognized type: ${d.goType}`;
    case 'number':
      return typeof value === 'number' ? undefined : `unrecognized type: ${d.goType}`;
    default:
      // IntOrString and Quantity convert through their own JSON decoding.
      return leafError(value, leaf, at);
  }
}

/** The error for a value that is not the map, list or object `t` is. */
function shapeError(value: unknown, t: TypeNode, at: GoContext, report: DecodeReport): string {
  if (report.dialect === 'json') return unmarshalError(jsonKind(value), at, goType(t));
  const kind = unstructuredKind(value);
  if (t.kind === 'struct') return `cannot restore struct from: ${kind}`;
  return `cannot restore ${t.kind === 'map' ? 'map' : 'slice'} from ${kind}`;
}

function scalarError(
  value: unknown,
  leaf: LeafType,
  at: GoContext,
  report: DecodeReport,
): string | undefined {
  return report.dialect === 'json' ? leafError(value, leaf, at) : convertLeafError(value, leaf, at);
}

function walk(value: unknown, t: TypeNode, path: string, at: GoContext, report: DecodeReport): void {
  if (value === null) return;
  switch (t.kind) {
    case 'leaf':
      if (report.typeError === undefined) report.typeError = scalarError(value, t, at, report);
      return;
    case 'struct':
      if (isJsonObject(value)) walkStruct(value, t, path, at, report);
      else report.typeError ??= shapeError(value, t, at, report);
      return;
    case 'map':
      if (!isJsonObject(value)) {
        report.typeError ??= shapeError(value, t, at, report);
        return;
      }
      if (t.element.kind === 'leaf') {
        // Leaves hold no unknown fields: only their types are checked, up to the first error.
        for (const k in value) {
          const v = value[k];
          if (v === null) {
            const zero = zeroOf(t.element);
            if (zero !== undefined) value[k] = zero;
          } else if (report.typeError === undefined) report.typeError = scalarError(v, t.element, at, report);
        }
        return;
      }
      for (const k of Object.keys(value)) walk(value[k], t.element, `${path}[${k}]`, at, report);
      return;
    case 'list':
      if (!Array.isArray(value)) {
        report.typeError ??= shapeError(value, t, at, report);
        return;
      }
      if (t.element.kind === 'leaf') {
        for (let i = 0; i < value.length; i++) {
          const v: unknown = value[i];
          if (v === null) {
            const zero = zeroOf(t.element);
            if (zero !== undefined) value[i] = zero;
          } else if (report.typeError === undefined) report.typeError = scalarError(v, t.element, at, report);
        }
        return;
      }
      for (let i = 0; i < value.length; i++) walk(value[i], t.element, `${path}[${i}]`, at, report);
      return;
  }
}

function walkStruct(obj: JsonObject, t: StructType, path: string, at: GoContext, report: DecodeReport): void {
  const here: GoContext = { struct: t.name.slice(t.name.lastIndexOf('.') + 1), fields: at.fields };
  for (const key of Object.keys(obj)) {
    const ft = t.field(key);
    if (ft === undefined) {
      report.unknown.push(join(path, key));
      delete obj[key];
      continue;
    }
    const value = obj[key];
    here.fields.push(key);
    walk(value, ft, join(path, key), here, report);
    here.fields.pop();
    if (goOmits(value, ft, t, key)) delete obj[key];
  }
}

/**
 * True when Go's JSON of the decoded object would not show `value` at field `key` of `t`: a
 * null, empty map or empty list decodes into an empty one, which `omitempty` drops; the typed
 * object kube's field manager records has no such field either. `managedFields` is kept: an
 * empty list there asks for the entries to be reset. (Zero scalars, which Go also drops where
 * they are not pointers, stay: objects converted from another version carry them, and the
 * update checks compare JSON, where an absent field is not the zero one.)
 */
function goOmits(value: unknown, ft: TypeNode, t: StructType, key: string): boolean {
  if (ft.kind !== 'map' && ft.kind !== 'list') return false;
  const empty =
    value === null ||
    (Array.isArray(value) ? value.length === 0 : isJsonObject(value) && Object.keys(value).length === 0);
  return empty && key !== 'managedFields' && t.omitsEmpty(key);
}

/**
 * Removes from `obj` (in place) every field `type` does not declare, and finds the first value
 * Go's decoder would refuse.
 * @example checkDecoding({ spec: { replicas: 1, foo: 2 } }, deploymentType).unknown // ['spec.foo']
 */
export function checkDecoding(
  obj: JsonObject,
  type: StructType,
  dialect: DecodeDialect = 'json',
): DecodeReport {
  const report: DecodeReport = { unknown: [], typeError: undefined, dialect };
  walkStruct(obj, type, '', { struct: '', fields: [] }, report);
  return report;
}

/**
 * Removes from `obj` (in place, recursively through its structs and lists of structs) what Go's
 * JSON of it as `type` would not show: see {@link goOmits}. For values already checked
 * otherwise, such as a custom resource's `metadata`, which kube converts through the typed
 * ObjectMeta.
 */
export function dropGoOmitted(obj: JsonObject, type: StructType): void {
  for (const key of Object.keys(obj)) {
    const ft = type.field(key);
    if (ft === undefined) continue;
    const value = obj[key];
    if (goOmits(value, ft, type, key)) delete obj[key];
    else if (ft.kind === 'struct' && isJsonObject(value)) dropGoOmitted(value, ft);
    else if (ft.kind === 'list' && ft.element.kind === 'struct' && Array.isArray(value)) {
      for (const item of value) if (isJsonObject(item)) dropGoOmitted(item, ft.element);
    }
  }
}
