/**
 * The OpenAPI 3.0 documents kube-apiserver serves per group version at `/openapi/v3/api/v1` and
 * `/openapi/v3/apis/<group>/<version>`: that group version's paths and the schemas they reach.
 * kubectl 1.27+ reads them for `explain` (the schema whose `x-kubernetes-group-version-kind`
 * matches, found through the GVK on the resource's operations), for field-validation detection
 * (parameters of the PATCH operation) and, from 1.31 (or with KUBECTL_OPENAPIV3_PATCH), for the
 * patch metadata of client-side apply (`requestBody.content` of PATCH must list
 * `application/strategic-merge-patch+json`).
 */
import type { Registry } from '../registry/types.js';
import type { DefinitionBuilder } from './definitions.js';
import { definitionName, groupVersionPath, gvkJson } from './names.js';
import { discoveryPath, resourcePaths, type OperationSpec, type PathSpec } from './operations.js';
import { collectPaths, renderPathItem } from './paths.js';
import type { Json, JsonObject } from './types.js';

/** kube's v3 documents carry this `info`; the server version is in `/version`. */
const V3_INFO: JsonObject = { title: 'Kubernetes', version: 'unversioned' };

function content(mediaTypes: readonly string[], ref: string): JsonObject {
  const out: JsonObject = {};
  // Keys in code-point order, as kube's encoder writes a map.
  for (const mt of [...mediaTypes].sort()) out[mt] = { schema: { $ref: ref } };
  return out;
}

function renderOperation(o: OperationSpec, defs: Pick<DefinitionBuilder, 'ref'>): JsonObject {
  const responses: JsonObject = {};
  for (const r of o.responses) {
    responses[r.code] =
      r.type === undefined
        ? { description: r.description }
        : { content: content(o.produces, defs.ref(r.type, 'v3')), description: r.description };
  }
  const parameters: Json[] = o.query.map((q) => ({
    in: 'query',
    name: q.name,
    schema: { type: q.type, uniqueItems: true },
  }));
  return {
    description: o.description,
    operationId: o.operationId,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(o.body === undefined
      ? {}
      : { requestBody: { content: content(o.body.mediaTypes, defs.ref(o.body.type, 'v3')) } }),
    responses,
    tags: [o.tag],
    ...(o.action === undefined ? {} : { 'x-kubernetes-action': o.action }),
    ...(o.gvk === undefined ? {} : { 'x-kubernetes-group-version-kind': gvkJson(o.gvk) }),
  };
}

/** One path item of a v3 document. */
export function renderPath(p: PathSpec, defs: Pick<DefinitionBuilder, 'ref'>): JsonObject {
  return renderPathItem(p, (o) => renderOperation(o, defs), {
    schema: { type: 'string', uniqueItems: true },
  });
}

/**
 * The v3 documents of every served group version, keyed by their `/openapi/v3` root key
 * (`api/v1`, `apis/apps/v1`, ...), in sorted key order.
 * @throws SchemaError `UNKNOWN_MESSAGE` as {@link buildV2Document} does.
 */
export function buildV3Documents(registry: Registry, defs: DefinitionBuilder): Map<string, JsonObject> {
  const byGv = new Map<string, PathSpec[]>();
  for (const t of registry.all()) {
    const key = groupVersionPath(t.group, t.version);
    let list = byGv.get(key);
    if (list === undefined) byGv.set(key, (list = [discoveryPath(t.group, t.version)]));
    list.push(...resourcePaths(t));
  }
  const out = new Map<string, JsonObject>();
  for (const key of [...byGv.keys()].sort()) {
    const { paths, types } = collectPaths(byGv.get(key) ?? [], (p) => renderPath(p, defs));
    const schemas: JsonObject = {};
    for (const type of defs.closure(types)) schemas[definitionName(type)] = defs.definition(type, 'v3');
    out.set(key, { components: { schemas }, info: V3_INFO, openapi: '3.0.0', paths });
  }
  return out;
}
