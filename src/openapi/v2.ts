/**
 * The Swagger 2.0 document kube-apiserver serves at `/openapi/v2`: every served type's paths and
 * every definition they reach, in one document. kubectl decodes it (as protobuf) for client-side
 * validation, for `explain --output=plaintext-openapiv2` and, before 1.31, for the patch
 * metadata of client-side apply (`consumes` of the PATCH operation and the merge keys).
 */
import type { Registry } from '../registry/types.js';
import type { DefinitionBuilder } from './definitions.js';
import { definitionName, gvkJson } from './names.js';
import {
  discoveryPath,
  groupDiscoveryPath,
  resourcePaths,
  rootDiscoveryPaths,
  type OperationSpec,
  type PathSpec,
} from './operations.js';
import { collectPaths, renderPathItem } from './paths.js';
import type { Json, JsonObject } from './types.js';

/** `info` of the document. */
export interface DocumentInfo {
  readonly title: string;
  readonly version: string;
}

function renderOperation(o: OperationSpec, defs: Pick<DefinitionBuilder, 'ref'>): JsonObject {
  const parameters: Json[] = [];
  if (o.body !== undefined) {
    parameters.push({
      in: 'body',
      name: 'body',
      ...(o.body.required ? { required: true } : {}),
      schema: { $ref: defs.ref(o.body.type, 'v2') },
    });
  }
  for (const q of o.query) parameters.push({ in: 'query', name: q.name, type: q.type, uniqueItems: true });
  const responses: JsonObject = {};
  for (const r of o.responses) {
    responses[r.code] =
      r.type === undefined
        ? { description: r.description }
        : { description: r.description, schema: { $ref: defs.ref(r.type, 'v2') } };
  }
  return {
    consumes: [...(o.body?.mediaTypes ?? o.consumes ?? ['*/*'])],
    description: o.description,
    operationId: o.operationId,
    ...(parameters.length > 0 ? { parameters } : {}),
    produces: [...o.produces],
    responses,
    schemes: ['https'],
    tags: [o.tag],
    ...(o.action === undefined ? {} : { 'x-kubernetes-action': o.action }),
    ...(o.gvk === undefined ? {} : { 'x-kubernetes-group-version-kind': gvkJson(o.gvk) }),
  };
}

/** One path item of the v2 document. */
export function renderV2Path(p: PathSpec, defs: Pick<DefinitionBuilder, 'ref'>): JsonObject {
  return renderPathItem(p, (o) => renderOperation(o, defs), { type: 'string', uniqueItems: true });
}

/**
 * Builds the v2 document of every type in `registry`.
 * @throws SchemaError `UNKNOWN_MESSAGE` when a served type reaches a message missing from the
 *   schemas (the schema drift test keeps that from shipping).
 */
export function buildV2Document(registry: Registry, defs: DefinitionBuilder, info: DocumentInfo): JsonObject {
  const groupVersions = new Map(registry.all().map((t) => [`${t.group}/${t.version}`, t]));
  const { paths, types } = collectPaths(
    [
      ...rootDiscoveryPaths(),
      ...[...new Set(registry.all().map((t) => t.group))]
        .filter((g) => g !== '')
        .map((g) => groupDiscoveryPath(g)),
      ...[...groupVersions.values()].map((t) => discoveryPath(t.group, t.version)),
      ...registry.all().flatMap((t) => resourcePaths(t)),
    ],
    (p) => renderV2Path(p, defs),
  );
  const definitions: JsonObject = {};
  for (const type of defs.closure(types)) definitions[definitionName(type)] = defs.definition(type, 'v2');
  return { swagger: '2.0', info: { title: info.title, version: info.version }, paths, definitions };
}
