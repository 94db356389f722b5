/**
 * list (GET on a collection without `watch`): the object store (`ctx.objects`) reads the
 * collection under the spec's resourceVersion rules (read-plan.ts); this module renders it.
 * The body is streamed from item bytes (list-body.ts).
 */
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { partsStream } from './list-body.js';
import { withResourceVersion } from '../api/object.js';
import { readCollectionRequest } from './list-options.js';
import { planList } from './read-plan.js';
import type { Query } from './query.js';
import type { ListPage } from './object-store.js';
import { pageMeta } from './storage-pages.js';
import { jsonList, JsonRepresentation } from '../representation/json.js';
import type { ListMetaValues, ObjectSource, Representation } from '../representation/types.js';

/** The JSON of a list of `kind` from stored items, as one buffer (deletecollection's answer). */
export function listBody(listKind: string, apiVersion: string, page: ListPage): Buffer {
  const items = page.items.map((kv) => withResourceVersion(kv.value, kv.modRevision));
  return jsonList(apiVersion, listKind, pageMeta(page), items);
}

/**
 * A list answer in `rep`: streamed from parts when the form offers them (JSON and protobuf, from
 * each version's cached or stored bytes), else built whole (Table, YAML, metadata-only).
 */
function renderFromSources(
  rep: Representation,
  meta: ListMetaValues,
  sources: Iterable<ObjectSource>,
): ResourceReply {
  const body = rep.listParts ? partsStream(rep.listParts(meta, sources)) : rep.list(meta, [...sources]);
  return { code: 200, body, contentType: rep.contentType };
}

/** GET `{collection}`: the list, in `rep` (default JSON). */
export async function listResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  rep: Representation = new JsonRepresentation(target.type),
): Promise<ResourceReply> {
  const selectable = ctx.strategies.find(target.type)?.selectableFields;
  const { options, selection } = readCollectionRequest(query, target.type, selectable, false);
  const { meta, sources } = await ctx.objects.collection(target, selection, planList(options));
  return renderFromSources(rep, meta, sources);
}
