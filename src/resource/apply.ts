/**
 * Server-side apply (PATCH with `application/apply-patch+yaml`) of an item or its `status`: the
 * applied configuration is merged into the stored object by field ownership (src/apply through
 * field-manager.ts), then written like any update (update.ts): defaulted, validated, guarded by
 * the mod revision. In kube-apiserver's order:
 *
 * - the configuration must be an object of the endpoint's kind, and the object it makes must be
 *   named as the URL (400 otherwise; a configuration without a name keeps the live object's);
 * - an object that does not exist is created by the apply (201), except through `status`;
 * - conflicts with other managers are 409s unless `force`; nothing is written then;
 * - an apply that changes nothing writes nothing (no new revision, same resourceVersion);
 * - a lost race reapplies to the newer object; a `metadata.resourceVersion` in the
 *   configuration pins the version (409 when stale).
 */
import { badRequest } from '../api/errors.js';
import type { JsonMap } from '../apply/value.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { bindNamespace, checkName, decodeObject } from './decode.js';
import { duplicateProblems, report } from './field-validation.js';
import { isJsonObject } from '../api/object.js';
import { applyUpdate, partOf } from './update.js';
import type { WriteOptions } from './write-options.js';

/**
 * The configuration of an apply request, checked to name the URL's object.
 * @throws ApiError 400.
 */
function configOf(body: unknown, target: Target): JsonMap {
  if (!isJsonObject(body)) throw badRequest('the body of an apply patch must be an object');
  const meta = isJsonObject(body['metadata']) ? body['metadata'] : {};
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const urlName = target.name ?? '';
  // A configuration without a name takes the live object's; the merged object is checked.
  if (name !== '' && name !== urlName) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${urlName})`);
  }
  const ns = meta['namespace'];
  if (target.type.namespaced && typeof ns === 'string' && ns !== '' && ns !== target.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return body as JsonMap;
}

/** PATCH `application/apply-patch+yaml` on an item (`target.subresource` undefined) or its status. */
export async function applyResource(
  ctx: ResourceContext,
  target: Target,
  body: unknown,
  write: WriteOptions,
): Promise<ResourceReply> {
  const { type } = target;
  const config = configOf(body, target);
  // Unknown fields are always errors of apply (the library's); repeated keys follow the mode.
  report(type, 'patch', duplicateProblems(write), write);
  const subresource = target.subresource;
  const updated = await applyUpdate(ctx, {
    type,
    namespace: target.namespace,
    name: target.name ?? '',
    part: partOf(subresource),
    allowCreate: subresource === undefined,
    write,
    ...(subresource === undefined ? {} : { subresource }),
    applied: true,
    build: (current) => {
      const { object } = ctx.fields.apply({
        type,
        subresource,
        live: current,
        config,
        write,
        now: ctx.now(),
      });
      const obj = decodeObject(object, type);
      checkName(obj, target.name ?? '');
      bindNamespace(obj, type, target.namespace);
      return obj;
    },
  });
  return { code: updated.code, body: updated.body };
}
