/**
 * create (POST on a collection): decode, admit (namespace lifecycle), default, mutating
 * admission, fill server metadata, record the writer's managedFields entry, validate, validating
 * admission, store. `generateName` picks a
 * random suffix and retries up to 8 times on a name collision, as kube-apiserver does. Nothing is
 * stored when any step fails. A dry run runs every step, checks that the name is free, and
 * answers the object that would have been stored, without a resourceVersion (as kube does).
 */
import { AlreadyExistsError, UnavailableError } from '../../storage/errors.js';
import { alreadyExists, ApiError, internalError, methodNotAllowed } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { bindNamespace, decodeObject } from './decode.js';
import { validateFields } from './field-validation.js';
import { objectKey } from './keys.js';
import { generateName, prepareForCreate, validateForWrite } from './metadata.js';
import { admitCreateInNamespace } from './namespace-lifecycle.js';
import { cloneJson, decodeStored, withResourceVersion, type KubeObject } from '../api/object.js';
import { leaseFor } from './store-ops.js';
import { admissionAttributes } from './admission.js';
import { serverWrite, type WriteOptions } from './write-options.js';

/** Kube's `maxNameGenerationCreateAttempts`. */
const MAX_GENERATE_ATTEMPTS = 8;

/** The outcome of a stored create: the object's wire bytes at its new revision. */
export interface Created {
  /** The new revision; 0 for a dry run. */
  readonly revision: bigint;
  /** The object as a read gives it (its stored form, as kube answers). */
  readonly body: Buffer;
  /** The object as written, before the storage encoding's round trip. */
  readonly obj: KubeObject;
}

/** How a create is made. */
export interface CreateOptions {
  /** The request's modifying options; default: a write by the server itself. */
  readonly write?: WriteOptions;
  /** True when `obj` carries managedFields an apply computed (no Update entry then). */
  readonly applied?: boolean;
}

/**
 * Creates `obj` (already decoded and bound to its namespace) as a new object of `type`.
 * Mutates `obj` (server metadata, defaults).
 * @throws ApiError 404/403 (namespace), 422 (validation), 409 (name taken).
 */
export async function createObject(
  ctx: ResourceContext,
  type: ResourceType,
  obj: KubeObject,
  options: CreateOptions = {},
): Promise<Created> {
  const write = options.write ?? serverWrite();
  if (typeof obj.metadata.resourceVersion === 'string' && obj.metadata.resourceVersion !== '') {
    // kube's storage layer refuses this as an internal error.
    throw internalError('resourceVersion should not be set on objects to be created');
  }
  const strategy = ctx.strategies.of(type);
  const generate = (obj.metadata.name ?? '') === '' && (obj.metadata.generateName ?? '') !== '';
  const namespace = type.namespaced ? (obj.metadata.namespace ?? '') : undefined;
  if (namespace !== undefined && namespace !== '' && ctx.namespaceLifecycle) {
    await admitCreateInNamespace(ctx, type, namespace, obj.metadata.name ?? '');
  }
  const admission = admissionAttributes({
    operation: 'CREATE',
    type,
    subresource: undefined,
    namespace,
    name: obj.metadata.name ?? '',
    object: obj,
    oldObject: undefined,
    requester: write,
  });
  // As in kube's create handler: the decoded object is defaulted, its fields are recorded for
  // the request's manager, and only then do the mutating plugins run (what they add, and what
  // the kind's preparation adds, is nobody's).
  strategy.default(obj);
  if (options.applied !== true) ctx.fields.trackUpdate(type, undefined, undefined, obj, write, ctx.now());
  await ctx.admission.admit(admission);
  // A generated name may be taken: each retry starts again from the object as admitted. The
  // first attempt uses `obj` itself, so only a retry pays for a second copy.
  const template = generate ? cloneJson(obj) : obj;
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt > 1 ? cloneJson(template) : obj;
    if (generate) candidate.metadata.name = generateName(candidate.metadata.generateName ?? '');
    // Warnings once (a retry with another generated name would repeat them).
    const warnings = attempt === 1 ? write.warnings : undefined;
    const prepared = prepareForCreate(ctx, type, strategy, candidate, write.user, warnings);
    validateForWrite(type, strategy, candidate, undefined, prepared);
    // kube's WarningsOnCreate, once too.
    if (warnings !== undefined) warnings.push(...strategy.warnings(candidate, undefined));
    await ctx.admission.validate(generate ? { ...admission, object: candidate } : admission);
    const name = candidate.metadata.name ?? '';
    // Allocations (Service IPs and ports) fill the object before it is encoded.
    const pending = await ctx.writeHooks?.beginCreate(ctx, type, candidate, write.dryRun);
    const bytes = ctx.encode(candidate);
    try {
      if (write.dryRun) {
        const { kv } = await ctx.store.get(objectKey(type, namespace, name));
        if (kv !== undefined) throw new AlreadyExistsError(objectKey(type, namespace, name), kv);
        return { revision: 0n, body: Buffer.from(ctx.storedForm(bytes)), obj: candidate };
      }
      const lease = await leaseFor(ctx, type);
      let written;
      try {
        written = await ctx.store.create(
          objectKey(type, namespace, name),
          bytes,
          lease === undefined ? {} : { lease },
        );
      } catch (err) {
        // An unavailable store leaves the create's outcome unknown (etcd may have committed it):
        // the allocations stay, as freeing an IP the stored object holds would hand it out twice.
        // An unused one is freed by the repair at the next server start.
        if (!(err instanceof UnavailableError)) await pending?.rollback();
        throw err;
      }
      await pending?.commit();
      candidate.metadata.resourceVersion = String(written.revision);
      return {
        revision: written.revision,
        body: withResourceVersion(written.kv.value, written.revision),
        obj: candidate,
      };
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      if (generate && attempt < MAX_GENERATE_ATTEMPTS) continue;
      const apiErr = alreadyExists(qualified(type, name));
      const current = err.current ?? (await ctx.store.get(objectKey(type, namespace, name))).kv;
      if (
        current !== undefined &&
        decodeStored(current.value, current.modRevision).metadata.deletionTimestamp
      ) {
        // kube's wording for a name held by an object that finalizers keep alive.
        throw new ApiError(apiErr.reason, `object is being deleted: ${apiErr.message}`, apiErr.details);
      }
      throw apiErr;
    }
  }
}

/** POST `{collection}`: 201 with the created object. */
export async function createResource(
  ctx: ResourceContext,
  target: Target,
  body: unknown,
  write: WriteOptions = serverWrite(),
): Promise<ResourceReply> {
  const { type } = target;
  if (type.namespaced && target.namespace === undefined) {
    throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  }
  const obj = decodeObject(body, type);
  bindNamespace(obj, type, target.namespace);
  validateFields(ctx, type, obj, write, 'object');
  const created = await createObject(ctx, type, obj, { write });
  return { code: 201, body: created.body };
}
