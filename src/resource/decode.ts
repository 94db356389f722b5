/**
 * Turning a request body into an object of the target's kind, with kube's 400s: a body that is
 * not a JSON object, a `kind`/`apiVersion` of another type, a `metadata` of the wrong shape, a
 * name or namespace that disagrees with the URL. Missing `kind`/`apiVersion` take the endpoint's,
 * as kube's decoder defaults them.
 */
import { ApiError, badRequest } from '../api/errors.js';
import { errorValue } from '../schema/messages.js';
import type { ResourceType } from '../registry/types.js';
import { isJsonObject, type KubeObject } from '../api/object.js';
import { checkMetaShape, MetaShapeError } from './meta-shape.js';

/** Kube's message when the body's namespace disagrees with the URL's. */
export const NAMESPACE_MISMATCH =
  'the namespace of the provided object does not match the namespace sent on the request';

/** What a body was: a whole object (create, update) or the result of a patch. */
export type BodyRole = 'object' | 'patch';

/**
 * Kube's answer to an object its typed decoder refuses with `detail` (Go's error): a 400 for a
 * body that is an object; for a patched object, a 422 on the field `patch` showing `shown()`
 * (the patched JSON, or a strategic merge patch in Go's `%v`: kube's
 * `field.Invalid(field.NewPath("patch"), ..., err)` in a kindless Invalid).
 */
export function decodingError(
  type: Pick<ResourceType, 'kind' | 'version'>,
  role: BodyRole,
  shown: () => string,
  detail: string,
): ApiError {
  if (role === 'object') {
    return badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${detail}`,
    );
  }
  const message = `Invalid value: ${errorValue(shown())}: ${detail}`;
  return new ApiError('Invalid', ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
  });
}

/**
 * `body` as an object of `type`. The body is used in place (it is the request's own parse).
 * @throws ApiError 400 for anything that is not an object of `type`; metadata of the wrong shape
 *   as {@link decodingError} for the `role`.
 */
export function decodeObject(
  body: unknown,
  type: Pick<ResourceType, 'kind' | 'apiVersion' | 'version'>,
  role: BodyRole = 'object',
): KubeObject {
  if (!isJsonObject(body)) {
    throw badRequest(`the body of the request must be a JSON object of kind ${type.kind}`);
  }
  const { kind, apiVersion } = body;
  if (kind !== undefined && kind !== '' && typeof kind !== 'string')
    throw badRequest('kind must be a string');
  if (apiVersion !== undefined && apiVersion !== '' && typeof apiVersion !== 'string') {
    throw badRequest('apiVersion must be a string');
  }
  if (typeof apiVersion === 'string' && apiVersion !== '' && apiVersion !== type.apiVersion) {
    throw badRequest(
      `the API version in the data (${apiVersion}) does not match the expected API version (${type.apiVersion})`,
    );
  }
  if (typeof kind === 'string' && kind !== '' && kind !== type.kind) {
    throw badRequest(
      `${kind} in version "${apiVersion ?? type.apiVersion}" cannot be handled as a ${type.kind}: the kind in the data (${kind}) does not match the expected kind (${type.kind})`,
    );
  }
  const metadata = body['metadata'] ?? {};
  if (!isJsonObject(metadata)) throw badRequest('metadata must be an object');
  const obj = body as KubeObject;
  obj.kind = type.kind;
  obj.apiVersion = type.apiVersion;
  obj.metadata = metadata;
  try {
    checkMetaShape(obj.metadata);
  } catch (err) {
    if (err instanceof MetaShapeError)
      throw decodingError(type, role, () => JSON.stringify(obj), err.message);
    throw err;
  }
  return obj;
}

/**
 * Reconciles the object's namespace with the URL's: namespaced kinds take the URL namespace when
 * the body has none and reject a different one (400); cluster-scoped kinds drop any namespace.
 */
export function bindNamespace(
  obj: KubeObject,
  type: Pick<ResourceType, 'namespaced'>,
  urlNamespace: string | undefined,
): void {
  const ns = obj.metadata.namespace;
  if (!type.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  if (ns === undefined || ns === null || ns === '') obj.metadata.namespace = urlNamespace ?? '';
  else if (ns !== urlNamespace) throw badRequest(NAMESPACE_MISMATCH);
}

/** A PUT's body must name the object of the URL (400 otherwise, as kube's `checkName`). */
export function checkName(obj: KubeObject, urlName: string): void {
  const name = obj.metadata.name ?? '';
  if (name === '') {
    throw badRequest(
      `the name of the object (${urlName} based on URL) was undeterminable: name must be provided`,
    );
  }
  if (name !== urlName) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${urlName})`);
  }
}
