/**
 * get (GET on an item): the stored bytes with the resourceVersion spliced in, no parse.
 * `resourceVersion` unset or `0` reads the latest; `N` means "not older than N", which the latest
 * satisfies unless N is ahead of the store (then kube's 504 `Too large resource version`).
 */
import { notFound, tooLargeResourceVersion } from '../http/errors.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { objectKey } from './keys.js';
import { withResourceVersion } from './object.js';
import { param, revisionParam, type Query } from './query.js';

/** GET an item: 200 with the object, 404 when absent, 504 for a resourceVersion ahead of the store. */
export async function getResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
): Promise<ResourceReply> {
  const { type } = target;
  const name = target.name ?? '';
  const minRevision = revisionParam(param(query, 'resourceVersion'));
  const { kv, revision } = await ctx.store.get(objectKey(type, target.namespace, name));
  if (minRevision !== undefined && minRevision > revision)
    throw tooLargeResourceVersion(minRevision, revision);
  if (kv === undefined) throw notFound(qualified(type, name));
  return { code: 200, body: withResourceVersion(kv.value, kv.modRevision) };
}
