/**
 * get (GET on an item): the stored bytes with the resourceVersion spliced in, no parse.
 *
 * resourceVersion (the spec's Get row): unset = Most Recent, a consistent read from storage;
 * `0` = Any, served from the type's watch cache when it is ready; `N` = Not older than N, served
 * from the cache once it reached N (from storage while the cache warms). A version the server
 * has not reached after a short wait is kube's 504 `Too large resource version` (Retry-After 1).
 */
import { notFound, tooLargeResourceVersion } from '../api/errors.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { requireRevision } from './freshness.js';
import { objectKey } from './keys.js';
import { withResourceVersion } from '../api/object.js';
import { param, revisionParam, type Query } from './query.js';

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** GET an item: 200 with the object, 404 when absent, 504 for a resourceVersion ahead of the server. */
export async function getResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
): Promise<ResourceReply> {
  const { type } = target;
  const name = target.name ?? '';
  const key = objectKey(type, target.namespace, name);
  const minRevision = revisionParam(param(query, 'resourceVersion'));
  if (minRevision !== undefined) {
    const cache = ctx.watchCaches?.for(type);
    if (cache?.ready === true) {
      if (!(await cache.waitFresh(minRevision, ctx.freshnessTimeoutMs))) {
        if (cache.ready) throw tooLargeResourceVersion(minRevision, cache.revision);
      } else {
        const version = cache.get(key);
        if (version === undefined) throw notFound(qualified(type, name));
        return { code: 200, body: asBuffer(cache.json(version)) };
      }
    }
  }
  await requireRevision(ctx, minRevision);
  const { kv } = await ctx.store.get(key);
  if (kv === undefined) throw notFound(qualified(type, name));
  return { code: 200, body: withResourceVersion(kv.value, kv.modRevision) };
}
