/**
 * The subset of kubectl's JSONPath that CRD printer columns and scale paths use: a path of
 * fields and indexes relative to the object root (`.spec.replicas`, `.status.conditions[0].type`,
 * `.metadata.labels['app.kubernetes.io/name']`, `.spec.items[*].name`), optionally in braces.
 * kube-apiserver evaluates `additionalPrinterColumns[].jsonPath` the same way (client-go's
 * jsonpath with the path wrapped in `{...}`).
 */

/** One step of a path. */
type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' };

/** A path that does not parse. */
export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

/**
 * Parses a path.
 * @throws JsonPathError for syntax this subset does not know.
 */
export function parseJsonPath(path: string): readonly Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1).trim();
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '.') {
      let j = i + 1;
      while (j < p.length && p[j] !== '.' && p[j] !== '[') j++;
      const name = p.slice(i + 1, j);
      if (name === '') throw new JsonPathError(`invalid JSONPath ${JSON.stringify(path)}`);
      steps.push(name === '*' ? { kind: 'all' } : { kind: 'field', name });
      i = j;
    } else if (c === '[') {
      const end = p.indexOf(']', i);
      if (end < 0) throw new JsonPathError(`unclosed [ in JSONPath ${JSON.stringify(path)}`);
      const inner = p.slice(i + 1, end).trim();
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else throw new JsonPathError(`unsupported JSONPath ${JSON.stringify(path)}`);
      i = end + 1;
    } else {
      throw new JsonPathError(`invalid JSONPath ${JSON.stringify(path)}`);
    }
  }
  return steps;
}

/** Every value `steps` reach in `root` (empty when the path leads nowhere). */
export function evaluateJsonPath(root: unknown, steps: readonly Step[]): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (step.kind === 'field') {
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, step.name)) {
          next.push((v as Record<string, unknown>)[step.name]);
        }
      } else if (step.kind === 'index') {
        if (Array.isArray(v)) {
          const at = step.index < 0 ? v.length + step.index : step.index;
          if (at >= 0 && at < v.length) next.push((v as unknown[])[at]);
        }
      } else if (Array.isArray(v)) {
        for (const item of v as unknown[]) next.push(item);
      } else if (v !== null && typeof v === 'object') {
        for (const item of Object.values(v as Record<string, unknown>)) next.push(item);
      }
    }
    current = next;
  }
  return current;
}
