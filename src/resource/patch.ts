/**
 * patch (PATCH on an item or its status): the patch applies to the current object as the client
 * last saw it (with its resourceVersion), and the result is written like a PUT (update.ts), so
 * every rule of update holds. A patch that sets `metadata.resourceVersion` is a precondition;
 * without one, a lost race reapplies the patch to the newer object. Patch types by media type:
 *
 * - `application/json-patch+json`: RFC 6902 (malformed: 400; an operation that fails: 422);
 * - `application/merge-patch+json`: RFC 7386;
 * - `application/strategic-merge-patch+json`: strategic merge patch, merge keys from the schema;
 * - `application/apply-patch+yaml`: server-side apply (apply.ts).
 *
 * Non-apply patches record an `Update` entry of the request's manager in managedFields.
 */
import { ApiError, badRequest } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { bindNamespace, checkName, decodeObject } from './decode.js';
import type { KubeObject } from '../api/object.js';
import { applyJsonPatch, JsonPatchApplyError, JsonPatchFormatError } from '../api/json-patch.js';
import { applyMergePatch } from './patch/merge-patch.js';
import { applyStrategicMergePatch, StrategicMergePatchError } from './patch/strategic-merge.js';
import { applyUpdate, partOf } from './update.js';
import { applyResource } from './apply.js';
import { duplicateProblems, report, unknownProblems } from './field-validation.js';
import { serverWrite, type WriteOptions } from './write-options.js';

/** The patch formats, named after kube's `types.PatchType`. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** A parsed PATCH body. */
export interface PatchBody {
  readonly patchType: PatchType;
  readonly patch: unknown;
}

/**
 * Kube's 415 for a PATCH with a media type it does not take as a patch; `strategic` false for
 * kinds without a schema (custom resources), which take no strategic merge patch.
 */
export function unsupportedPatchType(strategic = true): ApiError {
  const accepted = [
    'application/json-patch+json',
    'application/merge-patch+json',
    ...(strategic ? ['application/strategic-merge-patch+json'] : []),
    'application/apply-patch+yaml',
  ].join(', ');
  return new ApiError(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
  );
}

/**
 * `current` with `body` applied, as a JSON value (not yet checked to be an object of the kind).
 * @throws ApiError 400 for a malformed patch, 422 for a JSON patch operation that fails.
 */
export function applyPatch(
  ctx: ResourceContext,
  messageType: string | undefined,
  current: unknown,
  body: PatchBody,
): unknown {
  try {
    switch (body.patchType) {
      case 'json':
        return applyJsonPatch(current, body.patch);
      case 'merge':
        return applyMergePatch(current, body.patch);
      case 'strategic':
        // kube serves strategic merge patch for built-in kinds only (custom resources: 415).
        if (messageType === undefined || !ctx.fields.describes(messageType))
          throw unsupportedPatchType(false);
        return applyStrategicMergePatch(current, body.patch, messageType, ctx.patchSchema);
      case 'apply':
        // Apply is not a patch of the current object (apply.ts merges by ownership).
        throw unsupportedPatchType();
    }
  } catch (err) {
    if (err instanceof JsonPatchFormatError || err instanceof StrategicMergePatchError)
      throw badRequest(err.message);
    // kube's generic 422: its message and empty details, the library's reason left out.
    if (err instanceof JsonPatchApplyError)
      throw new ApiError(
        'Invalid',
        'the server rejected our request due to an error in our request',
        {},
        { cause: err },
      );
    throw err;
  }
}

/** The patched object, checked to be an object of `type` named as the URL says. */
function patched(
  ctx: ResourceContext,
  type: ResourceType,
  target: Target,
  current: KubeObject,
  body: PatchBody,
): KubeObject {
  if (body.patchType === 'merge' || body.patchType === 'strategic') {
    if (typeof body.patch !== 'object' || body.patch === null || Array.isArray(body.patch)) {
      throw badRequest('the patch must be a JSON object');
    }
  }
  const obj = decodeObject(applyPatch(ctx, type.messageType, current, body), type, 'patch');
  checkName(obj, target.name ?? '');
  bindNamespace(obj, type, target.namespace);
  return obj;
}

/** PATCH on an item, or on a subresource that writes part of it (the target's, {@link partOf}). */
export async function patchResource(
  ctx: ResourceContext,
  target: Target,
  body: PatchBody,
  write: WriteOptions = serverWrite(),
): Promise<ResourceReply> {
  const { type } = target;
  if (body.patchType === 'apply') return applyResource(ctx, target, body.patch, write);
  let reported = false;
  return applyUpdate(ctx, {
    type,
    namespace: target.namespace,
    name: target.name ?? '',
    part: partOf(target.subresource),
    allowCreate: false,
    write,
    ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
    build: (current) => {
      // allowCreate is false: applyUpdate never asks for a build without a current object.
      if (current === undefined) throw new Error('patch without a current object');
      const obj = patched(ctx, type, target, current, body);
      // Unknown fields can only come from the patch; they are dropped on every attempt and
      // reported once (a lost race rebuilds).
      const problems = unknownProblems(
        ctx,
        type,
        obj,
        'patch',
        body.patchType === 'strategic' ? body.patch : undefined,
      );
      if (!reported) {
        // Marked after the report: a Strict refusal must refuse again when a build is retried.
        report(type, 'patch', [...problems, ...duplicateProblems(write)], write);
        reported = true;
      }
      return obj;
    },
  });
}
