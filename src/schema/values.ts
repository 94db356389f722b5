/**
 * OpenAPI value validation of a custom resource against its structural schema, with the
 * messages kube-openapi produces and apiextensions turns into field errors
 * (`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`).
 * Validators run in kube-openapi's order: type, allOf/anyOf/oneOf/not, string, format, number,
 * array, enum, object.
 */
import type { FieldError } from '../validation/field-error.js';
import { required } from '../validation/field-error.js';
import { goFloat } from '../api/go-format.js';
import { jsonEqual } from '../api/object.js';
import { matchesFormat } from './formats.js';
import {
  errorValue,
  invalidValue,
  tooLongMax,
  tooManyItems,
  typeInvalid,
  unsupportedValue,
} from './messages.js';
import { isJsonMap, type SchemaNode } from './node.js';

/** The OpenAPI type name of a JSON value, as kube-openapi reports it. */
export function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

function typeMatches(types: readonly string[], actual: string): boolean {
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

/** `spec.items[0]`. */
export function itemPath(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** `spec.x` (root children have no leading dot). */
export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** A bound as kube prints it: integral bounds of integer data as int64, others as float64. */
function bound(limit: number, data: number): string {
  return Number.isInteger(limit) && Number.isInteger(data) ? String(BigInt(limit)) : goFloat(limit);
}

function isMultiple(data: number, factor: number): boolean {
  if (Number.isInteger(data) && Number.isInteger(factor)) return data % factor === 0;
  const q = data / factor;
  return Math.abs(q - Math.round(q)) < 1e-9;
}

/** Validates `value` at `path` against `node`, appending kube's errors to `errs`. */
export function validateValue(node: SchemaNode, value: unknown, path: string, errs: FieldError[]): void {
  const where = `${path} in body`;
  const actual = jsonTypeName(value);
  const types = node.intOrString ? ['integer', 'string'] : node.type === '' ? [] : [node.type];
  if (value === null || value === undefined) {
    if (node.nullable) return;
    if (types.length > 0) {
      errs.push(typeInvalid(path, 'null', `${where} must be of type ${types.join(',')}: "null"`));
      return;
    }
  } else if (types.length > 0 && !typeMatches(types, actual)) {
    errs.push(
      typeInvalid(path, actual, `${where} must be of type ${types.join(',')}: ${JSON.stringify(actual)}`),
    );
    // kube-openapi goes on: the other validators apply by the value's kind (enum still checks).
  }
  validateCombinators(node, value, path, errs);
  if (typeof value === 'string') {
    const runes = [...value].length;
    if (node.maxLength !== undefined && runes > node.maxLength) errs.push(tooLongMax(path, node.maxLength));
    if (node.minLength !== undefined && runes < node.minLength)
      errs.push(invalidValue(path, value, `${where} should be at least ${node.minLength} chars long`));
    if (node.pattern?.re !== undefined && !node.pattern.re.test(value))
      errs.push(invalidValue(path, value, `${where} should match '${node.pattern.source}'`));
    if (node.format !== '' && !matchesFormat(node.format, value))
      errs.push(
        typeInvalid(path, value, `${where} must be of type ${node.format}: ${JSON.stringify(value)}`),
      );
  }
  if (typeof value === 'number') validateNumber(node, value, path, errs);
  if (Array.isArray(value)) {
    if (node.minItems !== undefined && value.length < node.minItems)
      errs.push(invalidValue(path, value.length, `${where} should have at least ${node.minItems} items`));
    if (node.maxItems !== undefined && value.length > node.maxItems)
      errs.push(tooManyItems(path, value.length, node.maxItems));
    if (node.uniqueItems && hasDuplicates(value))
      errs.push(invalidValue(path, '', `${where} shouldn't contain duplicates`));
    if (node.items !== undefined) {
      const items = node.items;
      value.forEach((v, i) => validateValue(items, v, itemPath(path, i), errs));
    }
  }
  if (node.enum !== undefined && !node.enum.some((e) => jsonEqual(e, value))) {
    errs.push(
      unsupportedValue(
        path,
        value,
        node.enum.map((e) => (typeof e === 'string' ? e : errorValue(e))),
      ),
    );
  }
  if (isJsonMap(value)) validateObject(node, value, path, errs);
}

function validateNumber(node: SchemaNode, value: number, path: string, errs: FieldError[]): void {
  const where = `${path} in body`;
  if (node.multipleOf !== undefined && node.multipleOf > 0 && !isMultiple(value, node.multipleOf))
    errs.push(invalidValue(path, value, `${where} should be a multiple of ${bound(node.multipleOf, value)}`));
  if (node.maximum !== undefined) {
    const over = node.exclusiveMaximum ? value >= node.maximum : value > node.maximum;
    if (over) {
      const rel = node.exclusiveMaximum ? 'less than' : 'less than or equal to';
      errs.push(invalidValue(path, value, `${where} should be ${rel} ${bound(node.maximum, value)}`));
    }
  }
  if (node.minimum !== undefined) {
    const under = node.exclusiveMinimum ? value <= node.minimum : value < node.minimum;
    if (under) {
      const rel = node.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      errs.push(invalidValue(path, value, `${where} should be ${rel} ${bound(node.minimum, value)}`));
    }
  }
}

function validateObject(
  node: SchemaNode,
  value: Record<string, unknown>,
  path: string,
  errs: FieldError[],
): void {
  const where = `${path} in body`;
  const keys = Object.keys(value);
  if (node.maxProperties !== undefined && keys.length > node.maxProperties)
    errs.push(tooManyItems(path, keys.length, node.maxProperties));
  if (node.minProperties !== undefined && keys.length < node.minProperties)
    errs.push(
      invalidValue(
        path,
        node.minProperties,
        `${where} should have at least ${node.minProperties} properties`,
      ),
    );
  for (const r of node.required) if (!Object.hasOwn(value, r)) errs.push(required(childPath(path, r)));
  for (const k of keys) {
    const p = node.properties.get(k);
    if (p !== undefined) validateValue(p, value[k], childPath(path, k), errs);
    else if (node.additionalProperties !== undefined && node.additionalProperties !== true)
      validateValue(node.additionalProperties, value[k], childPath(path, k), errs);
  }
}

function validateCombinators(node: SchemaNode, value: unknown, path: string, errs: FieldError[]): void {
  const sub = (s: SchemaNode): FieldError[] => {
    const e: FieldError[] = [];
    validateValue(s, value, path, e);
    return e;
  };
  // These come from go-openapi as plain errors: kube reports them at the root (`<nil>`).
  const generic = (msg: string): FieldError => invalidValue('', '', `${JSON.stringify(path)} ${msg}`);
  if (node.allOf.length > 0) {
    const results = node.allOf.map(sub);
    const validated = results.filter((r) => r.length === 0).length;
    if (validated !== results.length) {
      errs.push(generic(`must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`));
      errs.push(...results.flat());
    }
  }
  if (node.oneOf.length > 0) {
    const results = node.oneOf.map(sub);
    const valid = results.filter((r) => r.length === 0).length;
    if (valid === 0) {
      errs.push(generic('must validate one and only one schema (oneOf). Found none valid'));
      errs.push(...best(results));
    } else if (valid > 1) {
      errs.push(generic(`must validate one and only one schema (oneOf). Found ${valid} valid alternatives`));
    }
  }
  if (node.anyOf.length > 0) {
    const results = node.anyOf.map(sub);
    if (!results.some((r) => r.length === 0)) {
      errs.push(generic('must validate at least one schema (anyOf)'));
      errs.push(...best(results));
    }
  }
  if (node.not !== undefined && sub(node.not).length === 0)
    errs.push(generic('must not validate the schema (not)'));
}

function best(results: FieldError[][]): FieldError[] {
  let out: FieldError[] | undefined;
  for (const r of results) if (out === undefined || r.length < out.length) out = r;
  return out ?? [];
}

function hasDuplicates(list: readonly unknown[]): boolean {
  for (let i = 0; i < list.length; i++)
    for (let j = i + 1; j < list.length; j++) if (jsonEqual(list[i], list[j])) return true;
  return false;
}
