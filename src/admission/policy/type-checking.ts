/**
 * Type checking of a policy against the kinds it matches (kube's `TypeChecker`): the kinds its
 * `matchConstraints.resourceRules` name exactly (no wildcards, at most 10), each kind's schema as
 * CEL types for `object` and `oldObject`, and every validation's `expression` and
 * `messageExpression` compiled against each kind. What does not compile becomes a status
 * warning, one per field, kube's text: `apps/v1, Kind=Deployment: compilation failed: ...`.
 *
 * The CEL types come from the built-in kinds' message schemas (src/registry/generated): lists,
 * maps, nested messages; times are timestamps, int-or-string and quantities `dyn`, and
 * `metadata` is left `dyn` (kube types only part of it at a resource's root), so a warning is
 * never raised for what kube accepts there.
 */
import type { CelObjectType } from '../../cel/index.js';
import type { Registry } from '../../registry/types.js';
import { isScalarType, specialWireType, type FieldSchema, type SchemaSet } from '../../registry/schema.js';
import type { ExpressionCache } from './cel.js';
import type { PolicySpec } from './spec.js';

/** kube's bound on the kinds one policy is checked against. */
const MAX_TYPES = 10;

/** A kind and its CEL types. */
interface CheckedKind {
  /** `apps/v1, Kind=Deployment` (`/v1, Kind=ConfigMap` for the core group). */
  readonly gvk: string;
  readonly rootType: string;
  readonly objectTypes: readonly CelObjectType[];
}

function scalarType(t: string): string {
  switch (t) {
    case 'double':
    case 'float':
      return 'double';
    case 'bool':
      return 'bool';
    case 'string':
      return 'string';
    case 'bytes':
      return 'bytes';
    default:
      return 'int';
  }
}

/** CEL object types of a message and everything it holds (nested types first). */
function messageCelTypes(
  schemas: SchemaSet,
  messageType: string,
): { readonly rootType: string; readonly objectTypes: CelObjectType[] } {
  const objectTypes: CelObjectType[] = [];
  const done = new Set<string>();
  const inProgress = new Set<string>();
  const typeName = (name: string): string => `capstan.${name}`;
  const valueType = (t: string): string => {
    if (isScalarType(t)) return scalarType(t);
    switch (specialWireType(t)) {
      case 'time':
      case 'microTime':
        return 'google.protobuf.Timestamp';
      case 'duration':
        return 'string';
      case 'stringList':
        return 'list<string>';
      case undefined:
        break;
      default:
        return 'dyn';
    }
    // A recursive type (JSONSchemaProps) is dyn where it recurs.
    if (inProgress.has(t)) return 'dyn';
    visit(t);
    return typeName(t);
  };
  const fieldType = (f: FieldSchema): string => {
    const v = valueType(f.type);
    if (f.label === 'repeated') return `list<${v}>`;
    if (f.label === 'map') return `map<string, ${v}>`;
    return v;
  };
  const visit = (name: string, root = false): void => {
    if (done.has(name)) return;
    inProgress.add(name);
    const fields: Record<string, string> = {};
    if (root) {
      fields['apiVersion'] = 'string';
      fields['kind'] = 'string';
    }
    for (const [json, ref] of schemas.jsonView(name)) {
      fields[json] = root && json === 'metadata' ? 'dyn' : fieldType(ref.field);
    }
    inProgress.delete(name);
    done.add(name);
    objectTypes.push({ name: typeName(name), fields });
  };
  visit(messageType, true);
  return { rootType: typeName(messageType), objectTypes };
}

/** The kinds a policy is type checked against, sorted as kube sorts them. */
function kindsOf(policy: PolicySpec, registry: Registry): { gvk: string; messageType: string }[] {
  const out = new Map<string, { gvk: string; messageType: string; key: string }>();
  for (const rule of policy.matchConstraints.rules) {
    const wild = (l: readonly string[]): boolean => l.length === 0 || l.some((x) => x.includes('*'));
    if (wild(rule.apiGroups) || wild(rule.apiVersions) || wild(rule.resources)) continue;
    for (const group of [...rule.apiGroups].sort()) {
      for (const version of [...rule.apiVersions].sort()) {
        for (const resource of [...rule.resources].sort()) {
          if (resource.includes('/')) continue;
          const t = registry.byResource(group, version, resource);
          if (t === undefined || t.virtual === true) continue;
          const gvk = `${group}/${version}, Kind=${t.kind}`;
          out.set(gvk, { gvk, messageType: t.messageType, key: `${group}\0${version}\0${t.kind}` });
          if (out.size === MAX_TYPES) break;
        }
      }
    }
  }
  return [...out.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * kube's type-checking warnings of `policy`: per validation expression and messageExpression,
 * the compile errors against each matched kind (none when every kind accepts it).
 */
export function typeCheckingWarnings(
  cache: ExpressionCache,
  policy: PolicySpec,
  registry: Registry,
  schemas: SchemaSet,
): { fieldRef: string; warning: string }[] {
  const kinds: CheckedKind[] = [];
  for (const k of kindsOf(policy, registry)) {
    try {
      kinds.push({ gvk: k.gvk, ...messageCelTypes(schemas, k.messageType) });
    } catch {
      // No schema for the kind: kube skips it too.
    }
  }
  if (kinds.length === 0) return [];
  const params = policy.paramKind !== undefined;
  const out: { fieldRef: string; warning: string }[] = [];
  const check = (fieldRef: string, expression: string): void => {
    const issues: string[] = [];
    for (const kind of kinds) {
      const objectType = { name: kind.rootType, objectTypes: kind.objectTypes };
      try {
        const variables = cache.compiler.variableTypes(policy.variables, params, objectType).types;
        const c = cache.compiler.compile(
          expression,
          { params, authorizer: true, objectType, ...(policy.variables.length === 0 ? {} : { variables }) },
          'any',
        );
        if (c.error !== undefined) issues.push(`${kind.gvk}: ${c.error}\n`);
      } catch {
        // A schema CEL cannot declare: the kind is not checked.
      }
    }
    if (issues.length > 0) out.push({ fieldRef, warning: issues.join('\n') });
  };
  policy.validations.forEach((v, i) => {
    check(`spec.validations[${i}].expression`, v.expression);
    if (v.messageExpression !== '') check(`spec.validations[${i}].messageExpression`, v.messageExpression);
  });
  return out;
}
