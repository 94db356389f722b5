/**
 * DELETE of a namespace, as kube-apiserver's namespace storage does it: the first request marks
 * the namespace (`deletionTimestamp`, `status.phase: Terminating`) and returns it; the namespace
 * controller (src/controllers/namespace/, in the controller manager) then deletes the content, removes the `kubernetes`
 * entry of `spec.finalizers`, and the namespace goes away. A DELETE while `spec.finalizers` is
 * non-empty returns the namespace unchanged; once it is empty, the generic delete applies
 * (metadata finalizers still hold it). `default`, `kube-system` and `kube-public` are refused.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { notFound } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { qualified, type ResourceContext, type ResourceReply } from './context.js';
import { checkPreconditions, deleteObject, type DeleteOptions } from './delete.js';
import { objectKey } from './keys.js';
import { admitNamespaceDelete } from './namespace-lifecycle.js';
import { encodeForStorage, isJsonObject, rfc3339Seconds, withResourceVersion } from '../api/object.js';
import { answerAsRead, readObject, staleConflict } from './store-ops.js';

const MAX_ATTEMPTS = 16;

/** True for the core Namespace type (its DELETE takes this path). */
export function isNamespaceType(type: ResourceType): boolean {
  return type.group === '' && type.kind === 'Namespace';
}

/** DELETE `/api/v1/namespaces/{name}`: see the module comment. @throws ApiError 403, 404, 409. */
export async function deleteNamespace(
  ctx: ResourceContext,
  type: ResourceType,
  name: string,
  options: DeleteOptions,
): Promise<ResourceReply> {
  if (ctx.namespaceLifecycle) admitNamespaceDelete(name);
  const key = objectKey(type, undefined, name);
  for (let attempt = 1; ; attempt++) {
    const stored = await readObject(ctx, type, undefined, name);
    if (stored === undefined) throw notFound(qualified(type, name));
    const { kv, obj } = stored;
    checkPreconditions(type, obj, options);
    const spec = isJsonObject(obj['spec']) ? obj['spec'] : {};
    const specFinalizers = Array.isArray(spec['finalizers']) ? spec['finalizers'] : [];
    if (obj.metadata.deletionTimestamp) {
      if (specFinalizers.length > 0)
        return { code: 200, body: withResourceVersion(kv.value, kv.modRevision) };
      return deleteObject(ctx, type, undefined, name, options);
    }
    obj.metadata.deletionTimestamp = rfc3339Seconds(ctx.now());
    obj['status'] = { ...(isJsonObject(obj['status']) ? obj['status'] : {}), phase: 'Terminating' };
    if (options.dryRun === true) {
      return { code: 200, body: answerAsRead(ctx, obj, kv.modRevision) };
    }
    const bytes = encodeForStorage(obj);
    try {
      // Before the write: a create racing this DELETE must read storage, not the cache.
      ctx.namespaceAdmission.deleted(name);
      const written = await ctx.store.update(key, bytes, { ifModRevision: kv.modRevision });
      return { code: 200, body: withResourceVersion(written.kv.value, written.revision) };
    } catch (err) {
      if (err instanceof NotFoundError) throw notFound(qualified(type, name));
      if (!(err instanceof ConflictError)) throw err;
      if (attempt >= MAX_ATTEMPTS) throw staleConflict(type, name);
    }
  }
}
