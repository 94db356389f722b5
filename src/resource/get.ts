/**
 * get (GET on an item): the stored bytes with the resourceVersion spliced in, no parse.
 *
 * resourceVersion (the spec's Get row): unset = Most Recent, a consistent read from storage;
 * `0` = Any, served from the type's watch cache when it is ready; `N` = Not older than N, served
 * from the cache once it reached N (from storage while the cache warms). A version the server
 * has not reached after a short wait is kube's 504 `Too large resource version` (Retry-After 1).
 * Where it is read from is the object store's choice (cached-store.ts).
 */
import { notFound } from '../api/errors.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { objectKey } from './keys.js';
import { param, revisionParam, type Query } from './query.js';

/** GET an item: 200 with the object, 404 when absent, 504 for a resourceVersion ahead of the server. */
export async function getResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
): Promise<ResourceReply> {
  // kube answers a bad version here with a 500; a bad request is a 400 here, in kube's words.
  const minRevision = revisionParam(param(query, 'resourceVersion'), '');
  const name = target.name ?? '';
  const key = objectKey(target.type, target.namespace, name);
  const body = await ctx.objects.item(target.type, key, minRevision);
  if (body === undefined) throw notFound(qualified(target.type, name));
  return { code: 200, body };
}
