/**
 * The checks kube makes on a CustomResourceDefinition's schemas before storing it (beyond the
 * names/versions rules in src/validation/apiextensions.ts): structural schema rules (types set,
 * no properties together with additionalProperties, value validations free of structure inside
 * allOf/anyOf/oneOf/not, metadata only with name/generateName), list and map types, patterns that
 * compile, defaults that validate against their schema, and `x-kubernetes-validations` rules that
 * compile, fit the cost budget (per rule and per CRD) and have valid reasons.
 */
import type { JsonObject } from '../api/object.js';
import { costErrorMessage, PER_CRD_COST_LIMIT, PER_EXPRESSION_COST_LIMIT } from '../cel/index.js';
import { forbidden, required, type FieldError } from '../validation/field-error.js';
import { maxSize } from './cel-types.js';
import { compileNodeRules, fieldPathError } from './cel-rules.js';
import { pruneValue } from './pruning.js';
import { invalidValue, unsupportedValue } from './messages.js';
import { compileNode, compilePattern, isJsonMap, type SchemaNode } from './node.js';
import { validateValue } from './values.js';
import { validateListTypes } from './list-types.js';

type Level = 'root' | 'field' | 'item' | 'additional';

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
/** What a value validation nested in allOf/anyOf/oneOf/not must not carry, and kube's words. */
const NESTED_FORBIDDEN: readonly (readonly [string, string])[] = [
  ['type', 'must be empty to be structural'],
  ['additionalProperties', 'must be undefined to be structural'],
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['nullable', 'must be false to be structural'],
  ['externalDocs', 'must be undefined to be structural'],
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];

/** kube's int-or-string exception: `anyOf: [{type: integer}, {type: string}]`. */
function isIntOrStringAnyOf(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 2) return false;
  const [a, b] = list as unknown[];
  const only = (x: unknown, t: string): boolean =>
    isJsonMap(x) && x['type'] === t && Object.keys(x).length === 1;
  return only(a, 'integer') && only(b, 'string');
}

function goRule(r: JsonObject): string {
  const s = (k: string): string => JSON.stringify(typeof r[k] === 'string' ? r[k] : '');
  const reason =
    typeof r['reason'] === 'string'
      ? `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(r['reason'])})`
      : '(*apiextensions.FieldValueErrorReason)(nil)';
  const opt =
    typeof r['optionalOldSelf'] === 'boolean' ? `(*bool)(${String(r['optionalOldSelf'])})` : '(*bool)(nil)';
  return `apiextensions.ValidationRule{Rule:${s('rule')}, Message:${s('message')}, MessageExpression:${s('messageExpression')}, Reason:${reason}, FieldPath:${s('fieldPath')}, OptionalOldSelf:${opt}}`;
}

class Checker {
  readonly errs: FieldError[] = [];
  totalCost = 0;

  /** Structural checks of one raw schema node. */
  structural(raw: JsonObject, path: string, level: Level, nested: boolean): void {
    const type = typeof raw['type'] === 'string' ? raw['type'] : '';
    const intOrString = raw['x-kubernetes-int-or-string'] === true;
    const preserve = raw['x-kubernetes-preserve-unknown-fields'] === true;
    if (nested) {
      for (const [k, msg] of NESTED_FORBIDDEN) {
        const v = raw[k];
        const set = v !== undefined && v !== false && v !== '' && !(Array.isArray(v) && v.length === 0);
        if (set) this.errs.push(forbidden(`${path}.${k}`, msg));
      }
      if (isJsonMap(raw['properties']) && 'metadata' in raw['properties'])
        this.errs.push(
          forbidden(`${path}.properties[metadata]`, 'must not be specified in a nested context'),
        );
    } else if (raw['x-kubernetes-embedded-resource'] === true && type !== 'object') {
      if (type === '')
        this.errs.push(required(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
      else
        this.errs.push(
          invalidValue(`${path}.type`, type, 'must be object if x-kubernetes-embedded-resource is true'),
        );
    } else if (type === '' && !intOrString && !preserve) {
      const detail =
        level === 'root'
          ? 'must not be empty at the root'
          : level === 'item'
            ? 'must not be empty for specified array items'
            : 'must not be empty for specified object fields';
      this.errs.push(required(`${path}.type`, detail));
    }
    if (!nested && intOrString && type !== '' && type !== 'string' && type !== 'integer')
      this.errs.push(
        invalidValue(`${path}.type`, type, 'must be empty if x-kubernetes-int-or-string is true'),
      );
    const props = isJsonMap(raw['properties']) ? raw['properties'] : undefined;
    const ap = raw['additionalProperties'];
    if (props !== undefined && Object.keys(props).length > 0 && ap !== undefined && !nested)
      this.errs.push(
        forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'),
      );
    if (ap !== undefined && level === 'root' && !nested)
      this.errs.push(forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (!nested && intOrString && preserve)
      this.errs.push(
        invalidValue(
          `${path}.x-kubernetes-preserve-unknown-fields`,
          true,
          'must be false if x-kubernetes-int-or-string is true',
        ),
      );
    if (
      !nested &&
      raw['x-kubernetes-embedded-resource'] === true &&
      !preserve &&
      (props === undefined || Object.keys(props).length === 0)
    )
      this.errs.push(
        required(
          `${path}.properties`,
          'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
        ),
      );
    if (ap === false && !nested)
      this.errs.push(
        forbidden(`${path}.additionalProperties`, 'additionalProperties cannot be set to false'),
      );
    if (raw['uniqueItems'] === true)
      this.errs.push(
        forbidden(
          `${path}.uniqueItems`,
          'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
        ),
      );
    if (typeof raw['pattern'] === 'string' && compilePattern(raw['pattern']) === undefined)
      this.errs.push(
        invalidValue(`${path}.pattern`, raw['pattern'], "must be a valid regular expression, but isn't"),
      );
    if ('$ref' in raw) this.errs.push(forbidden(`${path}.$ref`, '$ref is not supported'));
    if (!nested) this.listAndMapTypes(raw, path, type);
    if (level === 'root' && props !== undefined && isJsonMap(props['metadata']))
      this.rootMetadata(props['metadata'], `${path}.properties[metadata]`);
    if (props !== undefined)
      for (const [k, v] of Object.entries(props))
        if (isJsonMap(v)) this.structural(v, `${path}.properties[${k}]`, 'field', nested);
    if (isJsonMap(ap)) this.structural(ap, `${path}.additionalProperties`, 'additional', nested);
    if (isJsonMap(raw['items'])) this.structural(raw['items'], `${path}.items`, 'item', nested);
    else if (Array.isArray(raw['items']))
      this.errs.push(forbidden(`${path}.items`, 'items must be a schema object and not an array'));
    else if (type === 'array' && !nested) this.errs.push(required(`${path}.items`, 'must be specified'));
    for (const c of ['allOf', 'anyOf', 'oneOf']) {
      const list = raw[c];
      if (c === 'anyOf' && isIntOrStringAnyOf(list)) continue;
      if (!Array.isArray(list)) continue;
      list.forEach((s, i) => {
        if (!isJsonMap(s)) return;
        if (c === 'allOf' && i === 0 && isIntOrStringAnyOf(s['anyOf'])) {
          const { anyOf: _skip, ...rest } = s;
          void _skip;
          this.structural(rest, `${path}.${c}[${i}]`, level, true);
        } else this.structural(s, `${path}.${c}[${i}]`, level, true);
      });
    }
    if (isJsonMap(raw['not'])) this.structural(raw['not'], `${path}.not`, level, true);
  }

  listAndMapTypes(raw: JsonObject, path: string, type: string): void {
    const lt = raw['x-kubernetes-list-type'];
    const keys = raw['x-kubernetes-list-map-keys'];
    if (lt !== undefined) {
      if (lt !== 'atomic' && lt !== 'set' && lt !== 'map')
        this.errs.push(unsupportedValue(`${path}.x-kubernetes-list-type`, lt, ['atomic', 'set', 'map']));
      else if (type !== 'array')
        this.errs.push(
          invalidValue(`${path}.type`, type, 'must be array if x-kubernetes-list-type is specified'),
        );
    }
    if (lt === 'map') {
      if (!Array.isArray(keys) || keys.length === 0)
        this.errs.push(
          required(
            `${path}.x-kubernetes-list-map-keys`,
            'must not be empty if x-kubernetes-list-type is map',
          ),
        );
      else {
        const items = isJsonMap(raw['items']) ? raw['items'] : {};
        const iprops = isJsonMap(items['properties']) ? items['properties'] : {};
        const req = Array.isArray(items['required']) ? items['required'] : [];
        keys.forEach((k, i) => {
          const p = typeof k === 'string' ? iprops[k] : undefined;
          if (!isJsonMap(p)) {
            this.errs.push(
              invalidValue(
                `${path}.x-kubernetes-list-map-keys[${i}]`,
                k,
                'entries must all be names of item properties',
              ),
            );
          } else if (!req.includes(k) && !('default' in p)) {
            this.errs.push(
              required(`${path}.items.required`, `all map keys must be required or have a default value`),
            );
          }
        });
      }
    } else if (keys !== undefined && Array.isArray(keys) && keys.length > 0) {
      this.errs.push(
        forbidden(`${path}.x-kubernetes-list-map-keys`, 'must be empty if x-kubernetes-list-type is not map'),
      );
    }
    const mt = raw['x-kubernetes-map-type'];
    if (mt !== undefined) {
      if (mt !== 'granular' && mt !== 'atomic')
        this.errs.push(unsupportedValue(`${path}.x-kubernetes-map-type`, mt, ['granular', 'atomic']));
      else if (type !== 'object')
        this.errs.push(
          invalidValue(`${path}.type`, type, 'must be object if x-kubernetes-map-type is specified'),
        );
    }
  }

  rootMetadata(meta: JsonObject, path: string): void {
    const props = isJsonMap(meta['properties']) ? meta['properties'] : {};
    const allowed = Object.keys(meta).every((k) => k === 'type' || k === 'properties');
    const onlyNames = Object.keys(props).every((k) => k === 'name' || k === 'generateName');
    if (!allowed || !onlyNames)
      this.errs.push(
        forbidden(
          path,
          'must not specify anything other than name and generateName, but metadata is implicitly specified',
        ),
      );
  }

  /** Defaults validate (after pruning) against their node. */
  defaults(node: SchemaNode, raw: JsonObject, path: string, valuePath: string): void {
    if ('default' in raw) {
      const d = structuredClone(raw['default']);
      if (d === null && !node.nullable) {
        this.errs.push(invalidValue(`${path}.default`, null, 'must not be null for non-nullable'));
      } else {
        const pruned: string[] = [];
        pruneValue(d, node, node.embeddedResource, valuePath, pruned);
        if (pruned.length > 0)
          this.errs.push(
            invalidValue(
              `${path}.default`,
              raw['default'],
              `must not have unknown fields: ${pruned.join(', ')}`,
            ),
          );
        const errs: FieldError[] = [];
        validateValue(node, d, valuePath, errs);
        validateListTypes(node, d, valuePath, errs);
        for (const e of errs) this.errs.push({ ...e, field: `${path}.default.${e.field}` });
      }
    }
    const props = isJsonMap(raw['properties']) ? raw['properties'] : {};
    for (const [k, p] of node.properties) {
      const r = props[k];
      if (isJsonMap(r))
        this.defaults(p, r, `${path}.properties[${k}]`, valuePath === '' ? k : `${valuePath}.${k}`);
    }
    const ap = raw['additionalProperties'];
    if (node.additionalProperties !== undefined && node.additionalProperties !== true && isJsonMap(ap))
      this.defaults(node.additionalProperties, ap, `${path}.additionalProperties`, `${valuePath}[*]`);
    if (node.items !== undefined && isJsonMap(raw['items']))
      this.defaults(node.items, raw['items'], `${path}.items`, `${valuePath}[*]`);
  }

  /** CEL rules: compile, reasons, cost per rule and in total (times the node's cardinality). */
  rules(node: SchemaNode, raw: JsonObject, path: string, root: boolean, cardinality: number): void {
    if (node.validations.length > 0) {
      const list = Array.isArray(raw['x-kubernetes-validations']) ? raw['x-kubernetes-validations'] : [];
      compileNodeRules(node, root).forEach((c, i) => {
        const rp = `${path}.x-kubernetes-validations[${i}]`;
        const rawRule = isJsonMap(list[i]) ? list[i] : {};
        if (c.rule.rule.trim() === '') this.errs.push(required(`${rp}.rule`, ''));
        else if (c.costExceeded !== undefined) {
          this.errs.push(
            forbidden(
              `${rp}.rule`,
              costErrorMessage('estimated rule cost', PER_EXPRESSION_COST_LIMIT, c.costExceeded),
            ),
          );
          this.totalCost += c.costExceeded * cardinality;
        } else if (c.error !== undefined) {
          const field = c.error.startsWith('messageExpression') ? `${rp}.messageExpression` : `${rp}.rule`;
          this.errs.push({
            field,
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${goRule(rawRule)}: ${c.error}`,
          });
        } else if (c.program !== undefined) {
          // kube: a rule's cost is its estimate times how often it can run (the node's cardinality).
          const cost = c.program.estimatedCost * cardinality;
          if (cost > PER_EXPRESSION_COST_LIMIT)
            this.errs.push(
              forbidden(
                `${rp}.rule`,
                costErrorMessage('estimated rule cost', PER_EXPRESSION_COST_LIMIT, cost),
              ),
            );
          this.totalCost += cost;
        }
        if (c.rule.reason !== '' && !REASONS.includes(c.rule.reason))
          this.errs.push(unsupportedValue(`${rp}.reason`, c.rule.reason, REASONS));
        if (c.rule.fieldPath !== '') {
          const bad = fieldPathError(node, c.rule.fieldPath);
          if (bad !== undefined)
            this.errs.push(
              invalidValue(`${rp}.fieldPath`, c.rule.fieldPath, `fieldPath must be a valid path: ${bad}`),
            );
        }
        if (c.rule.message.includes('\n'))
          this.errs.push(
            invalidValue(`${rp}.message`, c.rule.message, 'message must not contain line breaks'),
          );
      });
    }
    const props = isJsonMap(raw['properties']) ? raw['properties'] : {};
    for (const [k, p] of node.properties) {
      const r = props[k];
      if (isJsonMap(r)) this.rules(p, r, `${path}.properties[${k}]`, false, cardinality);
    }
    const size = maxSize(node) ?? 1;
    const ap = raw['additionalProperties'];
    if (node.additionalProperties !== undefined && node.additionalProperties !== true && isJsonMap(ap))
      this.rules(node.additionalProperties, ap, `${path}.additionalProperties`, false, cardinality * size);
    if (node.items !== undefined && isJsonMap(raw['items']))
      this.rules(node.items, raw['items'], `${path}.items`, false, cardinality * size);
  }
}

/** Checks one `openAPIV3Schema` at `path` (e.g. `spec.versions[0].schema.openAPIV3Schema`). */
export function checkSchema(schema: JsonObject, path: string): FieldError[] {
  const c = new Checker();
  c.structural(schema, path, 'root', false);
  if (c.errs.length > 0) {
    // kube sorts the structural errors by their text (map iteration order is random in Go).
    const text = (e: FieldError): string => `${e.field}: ${e.message}`;
    return c.errs.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  }
  const node = compileNode(schema);
  c.defaults(node, schema, path, '');
  c.rules(node, schema, path, true, 1);
  if (c.totalCost > PER_CRD_COST_LIMIT) {
    c.errs.push(
      forbidden(
        path,
        costErrorMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          PER_CRD_COST_LIMIT,
          c.totalCost,
        ),
      ),
    );
  }
  return c.errs;
}

/** The schema checks of a whole CustomResourceDefinition (every version's schema). */
export function checkCRDSchemas(crd: JsonObject): FieldError[] {
  const spec = isJsonMap(crd['spec']) ? crd['spec'] : {};
  const versions = Array.isArray(spec['versions']) ? spec['versions'] : [];
  const errs: FieldError[] = [];
  versions.forEach((v, i) => {
    if (!isJsonMap(v) || !isJsonMap(v['schema'])) return;
    const s = v['schema']['openAPIV3Schema'];
    if (!isJsonMap(s) || s['type'] !== 'object') return; // reported by validateCRD
    errs.push(...checkSchema(s, `spec.versions[${i}].schema.openAPIV3Schema`));
  });
  return errs;
}
