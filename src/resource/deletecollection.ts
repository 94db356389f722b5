/**
 * deletecollection (DELETE on a collection): lists the selected objects at one revision, under
 * the request's list options as a list reads them (with `limit`, one page only, whose continue
 * token the answer carries), and deletes each by the rules of a single delete (finalizers and
 * grace periods respected; objects already gone are skipped). Like kube-apiserver, it is not
 * atomic, and the reply is the list of the objects selected, as they were before the deletion.
 */
import { ApiError } from '../api/errors.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { deleteObject, type DeleteOptions } from './delete.js';
import { listBody } from './list.js';
import { decodeStored } from '../api/object.js';
import type { Query } from './query.js';
import { readCollectionRequest } from './list-options.js';
import { planList } from './read-plan.js';

/** Every this many deletions, yield to the event loop so other requests are served. */
const YIELD_EVERY = 200;

/**
 * DELETE `{collection}`: see the module comment.
 * @throws ApiError as a list of the collection (bad options or selectors, 410, 504).
 */
export async function deleteCollection(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  options: DeleteOptions,
): Promise<ResourceReply> {
  const selectable = ctx.strategies.find(target.type)?.selectableFields;
  const request = readCollectionRequest(query, target.type, selectable, false);
  const page = await ctx.objects.page(target, request.selection, planList(request.options));
  let n = 0;
  for (const kv of page.items) {
    const obj = decodeStored(kv.value, kv.modRevision);
    try {
      await deleteObject(ctx, target.type, obj.metadata.namespace, obj.metadata.name ?? '', options);
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
    }
    if (++n % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return {
    code: 200,
    body: listBody(target.type.listKind, target.type.apiVersion, page),
  };
}
