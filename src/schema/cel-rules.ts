/**
 * `x-kubernetes-validations`: each rule compiled once per schema against `self` (and `oldSelf`)
 * typed from the node, then evaluated on every write at every value the node applies to.
 * Transition rules (those that mention `oldSelf`) run only when the old object has a correlated
 * value (object properties, map values and list-map items by key), unless `optionalOldSelf`.
 * Failures are reported as kube does: `Invalid value: "object": <message>` (or `failed rule:
 * <rule>`), with `reason` choosing Forbidden/Required/Duplicate and `fieldPath` the field.
 */
import { jsonEqual } from '../api/object.js';
import {
  actualSizes,
  celOptional,
  CelEnvironment,
  RUNTIME_COST_BUDGET,
  type CelProgram,
} from '../cel/index.js';
import type { FieldError } from '../validation/field-error.js';
import { celTypesOf, sizeOracle, toCel } from './cel-types.js';
import { duplicateValue, invalidValue } from './messages.js';
import { isJsonMap, type SchemaNode, type ValidationRule } from './node.js';
import { childPath, itemPath } from './values.js';

/** One rule, compiled (or its compile error). */
export interface CompiledRule {
  readonly rule: ValidationRule;
  readonly program: CelProgram | undefined;
  readonly messageProgram: CelProgram | undefined;
  /** `compilation failed: ...` detail, or the cost estimate over the limit. */
  readonly error: string | undefined;
  readonly costExceeded: number | undefined;
  readonly transition: boolean;
}

const OLD_SELF = /\boldSelf\b/;

/** Compiles the rules of one node. */
export function compileNodeRules(node: SchemaNode, resourceRoot: boolean): CompiledRule[] {
  if (node.validations.length === 0) return [];
  const types = celTypesOf(node, resourceRoot);
  // The cost limit is checked by the CRD checks, times the node's cardinality (as kube does).
  const plain = new CelEnvironment({
    objectTypes: types.objectTypes,
    variables: { self: types.selfType, oldSelf: types.selfType },
    costLimit: Infinity,
  });
  // optionalOldSelf rules see oldSelf as optional<T>: none on create, of(old) on update.
  let optional: CelEnvironment | undefined;
  const sizes = sizeOracle(node);
  return node.validations.map((rule) => {
    const env = rule.optionalOldSelf
      ? (optional ??= new CelEnvironment({
          objectTypes: types.objectTypes,
          variables: { self: types.selfType, oldSelf: `optional<${types.selfType}>` },
          costLimit: Infinity,
        }))
      : plain;
    const c = env.compile(rule.rule, sizes);
    let messageProgram: CelProgram | undefined;
    let error: string | undefined;
    let costExceeded: number | undefined;
    if (!c.ok) {
      if (c.costExceeded !== undefined) costExceeded = c.costExceeded;
      else error = `compilation failed: ${c.message}`;
    } else if (c.program.outputType !== 'bool') {
      error = 'compilation failed: ERROR: <input>: cel expression must evaluate to a bool';
    }
    if (rule.messageExpression !== '') {
      const m = env.compile(rule.messageExpression, sizes);
      if (m.ok && m.program.outputType === 'string') messageProgram = m.program;
      else if (!m.ok || m.program.outputType !== 'string') {
        error ??= m.ok
          ? 'messageExpression compilation failed: ERROR: <input>: must evaluate to string'
          : `messageExpression compilation failed: ${m.message}`;
      }
    }
    return {
      rule,
      program: c.ok ? c.program : undefined,
      messageProgram,
      error,
      costExceeded,
      transition: OLD_SELF.test(rule.rule),
    };
  });
}

/** All rules of a schema, ready to validate objects. */
export interface CompiledRules {
  validate(obj: unknown, old: unknown): FieldError[];
}

/**
 * A rule's `fieldPath` (`.a.b`, `['c']`) walked through `node`: kube's field path suffix
 * (properties as `.a`, map keys as `[c]`), or why it names no field.
 */
export function resolveFieldPath(
  node: SchemaNode,
  fieldPath: string,
): { readonly path: string } | { readonly error: string } {
  const tokens = fieldPath.match(/\.[^.[\]]+|\['(?:[^'\\]|\\.)*'\]|./g) ?? [];
  let cur: SchemaNode | undefined = node;
  let out = '';
  for (const t of tokens) {
    let name: string;
    if (t.startsWith('.')) name = t.slice(1);
    else if (t.startsWith("['")) name = t.slice(2, -2).replace(/\\(.)/g, '$1');
    else return { error: `expected [ or . but got: ${t}` };
    if (cur !== undefined && cur.properties.size > 0) {
      cur = cur.properties.get(name);
      if (cur === undefined) return { error: 'does not refer to a valid field' };
      out += `.${name}`;
    } else if (cur?.additionalProperties !== undefined && cur.additionalProperties !== true) {
      cur = cur.additionalProperties;
      out += `[${name}]`;
    } else {
      return { error: 'does not refer to a valid field' };
    }
  }
  return { path: out };
}

/** Why a rule's `fieldPath` does not name a field of `node`, if it does not. */
export function fieldPathError(node: SchemaNode, fieldPath: string): string | undefined {
  const r = resolveFieldPath(node, fieldPath);
  return 'error' in r ? r.error : undefined;
}

function ruleError(c: CompiledRule, node: SchemaNode, path: string, detail: string): FieldError {
  let field = path;
  if (c.rule.fieldPath !== '') {
    const r = resolveFieldPath(node, c.rule.fieldPath);
    if ('path' in r) field = path === '' ? r.path.replace(/^\./, '') : `${path}${r.path}`;
  }
  // kube 1.33 reports the schema's type as the value (`Invalid value: "object": <detail>`).
  const typeName = node.type;
  switch (c.rule.reason) {
    case 'FieldValueForbidden':
      return { field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
    case 'FieldValueRequired':
      return { field, reason: 'FieldValueRequired', message: `Required value: ${detail}` };
    case 'FieldValueDuplicate':
      return duplicateValue(field, typeName);
    default:
      return invalidValue(field, typeName, detail);
  }
}

/** kube's `ruleErrorString`: the message when set, else the rule, trimmed. */
function ruleErrorString(rule: ValidationRule): string {
  return rule.message.trim() !== '' ? rule.message.trim() : rule.rule.trim();
}

/** cel-go's wording of runtime errors cel-js words differently (`no such key: x`). */
function celGoRuntime(msg: string): string {
  return msg.replace(/^No such key/, 'no such key');
}

/** Compiles every rule under `root`; rules that do not compile are skipped (CRD checks report them). */
export function compileRules(root: SchemaNode, budget = RUNTIME_COST_BUDGET): CompiledRules | undefined {
  const compiled = new Map<SchemaNode, CompiledRule[]>();
  let any = false;
  const visit = (n: SchemaNode, resourceRoot: boolean): void => {
    if (n.validations.length > 0) {
      compiled.set(n, compileNodeRules(n, resourceRoot));
      any = true;
    }
    for (const p of n.properties.values()) visit(p, false);
    if (n.additionalProperties !== undefined && n.additionalProperties !== true)
      visit(n.additionalProperties, false);
    if (n.items !== undefined) visit(n.items, false);
  };
  visit(root, true);
  if (!any) return undefined;
  let remaining = 0;
  let exhausted = false;
  const run = (n: SchemaNode, value: unknown, old: unknown, path: string, errs: FieldError[]): void => {
    if (value === undefined || exhausted) return;
    for (const c of compiled.get(n) ?? []) {
      if (c.program === undefined) continue;
      if (c.transition && old === undefined && !c.rule.optionalOldSelf) continue;
      const self = toCel(value, n);
      const activation: Record<string, unknown> = { self };
      if (c.transition) {
        const oldValue = old === undefined ? undefined : toCel(old, n);
        activation['oldSelf'] = c.rule.optionalOldSelf ? celOptional(oldValue) : oldValue;
      }
      // The cost on this data, estimated before running: a runaway rule is refused, not run.
      remaining -= c.program.costWith(actualSizes(activation));
      if (remaining < 0) {
        exhausted = true;
        errs.push(
          invalidValue(
            path,
            n.type,
            'validation failed due to running out of cost budget, no further validation rules will be run',
          ),
        );
        return;
      }
      const r = c.program.evaluate(activation);
      if (r.error !== undefined) {
        errs.push(
          invalidValue(path, n.type, `${celGoRuntime(r.error)} evaluating rule: ${ruleErrorString(c.rule)}`),
        );
        continue;
      }
      if (r.value === true) continue;
      let message =
        c.rule.message.trim() !== '' ? c.rule.message.trim() : `failed rule: ${c.rule.rule.trim()}`;
      if (c.messageProgram !== undefined) {
        // A messageExpression that fails, is empty or spans lines falls back to the message.
        const m = c.messageProgram.evaluate(activation);
        const text = typeof m.value === 'string' ? m.value.trim() : '';
        if (text !== '' && !text.includes('\n') && text.length <= 5120) message = text;
      }
      errs.push(ruleError(c, n, path, message));
    }
    if (isJsonMap(value)) {
      const o = isJsonMap(old) ? old : undefined;
      for (const [k, v] of Object.entries(value)) {
        const p =
          n.properties.get(k) ?? (n.additionalProperties === true ? undefined : n.additionalProperties);
        if (p !== undefined) run(p, v, o?.[k], childPath(path, k), errs);
      }
    } else if (Array.isArray(value) && n.items !== undefined) {
      const items = n.items;
      const oldList = Array.isArray(old) ? old : undefined;
      value.forEach((v, i) => run(items, v, correlate(n, v, oldList), itemPath(path, i), errs));
    }
  };
  return {
    validate(obj, old) {
      const errs: FieldError[] = [];
      remaining = budget;
      exhausted = false;
      run(root, obj, old, '', errs);
      return errs;
    },
  };
}

/** The old item a new list item correlates with: by key in list-maps, by value in sets. */
function correlate(list: SchemaNode, item: unknown, old: unknown[] | undefined): unknown {
  if (old === undefined) return undefined;
  if (list.listType === 'map' && isJsonMap(item)) {
    return old.find((o) => isJsonMap(o) && list.listMapKeys.every((k) => jsonEqual(o[k], item[k])));
  }
  if (list.listType === 'set') return old.find((o) => jsonEqual(o, item));
  return undefined;
}
