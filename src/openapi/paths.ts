/**
 * Rendering a document's `paths` from the flavour-neutral operation model, and collecting the
 * message types the operations' bodies reference (the roots of the document's definitions).
 */
import type { OperationSpec, PathSpec } from './operations.js';
import type { JsonObject } from './types.js';

/** Message types an operation's bodies reference. */
export function operationTypes(o: OperationSpec): string[] {
  const out: string[] = [];
  if (o.body !== undefined) out.push(o.body.type);
  for (const r of o.responses) if (r.type !== undefined) out.push(r.type);
  return out;
}

/** Renders the paths of `specs` (sorted, as kube's JSON is) and collects the types they use. */
export function collectPaths(
  specs: readonly PathSpec[],
  render: (p: PathSpec) => JsonObject,
): { paths: JsonObject; types: Set<string> } {
  const sorted = [...specs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const paths: JsonObject = {};
  const types = new Set<string>();
  for (const p of sorted) {
    paths[p.path] = render(p);
    for (const o of p.operations) for (const t of operationTypes(o)) types.add(t);
  }
  return { paths, types };
}

/**
 * One path item: each operation under its method, then the path's parameters: its path
 * parameters and `pretty` (src/http/pretty.ts). v2 and v3 differ only in how an operation and a
 * string parameter are written.
 */
export function renderPathItem(
  p: PathSpec,
  renderOperation: (o: OperationSpec) => JsonObject,
  stringSchema: JsonObject,
): JsonObject {
  const item: JsonObject = {};
  for (const o of p.operations) item[o.method] = renderOperation(o);
  item['parameters'] = [
    ...p.pathParams.map((pp) => ({
      description: pp.description,
      in: 'path',
      name: pp.name,
      required: true,
      ...stringSchema,
    })),
    // Every resource path takes `pretty`; like the other query parameters, without a description.
    { in: 'query', name: 'pretty', ...stringSchema },
  ];
  return item;
}
