/**
 * update (PUT on an item, and the write half of patch, status, scale and finalize): one loop
 * that reads the current object, builds the new one, checks the resourceVersion precondition,
 * applies the server's metadata rules, validates, and writes with a compare on the mod revision.
 *
 * - A `metadata.resourceVersion` in the new object must equal the current one (409 otherwise,
 *   with kube's message); without one the update is unconditional (unless the kind requires it).
 * - The attempts run in the object store's `guaranteedUpdate` (cached-store.ts): the first may
 *   start from the watch cache's copy (no storage read), as kube's GuaranteedUpdate does; the
 *   write's compare on the mod revision catches a stale copy.
 *   Anything that fails on a cached copy (a lost race, a resourceVersion precondition, an
 *   error of the build or validation, an update that seems to change nothing) is retried once
 *   from storage before it counts.
 * - A lost race with another writer (the store's compare fails) rebuilds on the object the failed
 *   compare found (its transaction read it: no second read, as in kube); a pinned
 *   resourceVersion then turns into the 409, an unpinned one simply applies to the newer object.
 * - An update that removes the last finalizer of an object being deleted deletes it.
 * - An update that changes nothing is not written (the resourceVersion stays).
 * - Admission: the mutating plugins see the merged, defaulted object before the strategy's
 *   preparation; the validating ones see it after validation, before the write.
 * - managedFields: a non-apply write records its manager's `Update` entry (field-manager.ts)
 *   after defaulting, before validation; an apply's build has computed them already.
 * - Dry run: every step runs, nothing is written; the reply is the object that would have been
 *   stored, with the current resourceVersion.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { ApiError, invalid, methodNotAllowed, notFound } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { KindStrategy } from '../kinds/index.js';
import { qualified, type ResourceContext, type ResourceReply, type Target } from './context.js';
import { createObject } from './create.js';
import { bindNamespace, checkName, decodeObject } from './decode.js';
import { validateFields } from './field-validation.js';
import { invalid as fieldInvalid } from '../validation/field-error.js';
import { objectKey } from './keys.js';
import { countGeneration, prepareForUpdate, validateForWrite } from './metadata.js';
import {
  cloneJson,
  isJsonObject,
  membersEqual,
  withResourceVersion,
  type JsonObject,
  type KubeObject,
} from '../api/object.js';
import { RACED, racedWith, type WriteOutcome } from './object-store.js';
import { answerAsRead, staleConflict, updateOptions } from './store-ops.js';
import { serverWrite, type WriteOptions } from './write-options.js';
import { admissionAttributes } from './admission.js';

/** Attempts before a write that keeps losing races gives up with a 409. */
const MAX_ATTEMPTS = 16;

/**
 * Which part of the object a write may change: all but status (`main`), status, a namespace's
 * `spec.finalizers` (`finalize`), a pod's `spec.ephemeralContainers` (`ephemeralcontainers`), a
 * pod's containers' `resources` and `resizePolicy` (`resize`).
 */
export type UpdatePart = 'main' | (typeof PARTS)[number];

const PARTS = ['status', 'finalize', 'ephemeralcontainers', 'resize'] as const;

/** The part a write through `subresource` (undefined: the main resource) may change. */
export function partOf(subresource: string | undefined): UpdatePart {
  return PARTS.find((p) => p === subresource) ?? 'main';
}

/** The parts that change the spec, and so count in `metadata.generation`, beside `main`. */
const SPEC_PARTS: ReadonlySet<UpdatePart> = new Set(['ephemeralcontainers', 'resize']);

/** What {@link applyUpdate} writes: which object, which part, how to build the new state. */
export interface UpdatePlan {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly part: UpdatePart;
  /**
   * Builds the requested object from a private copy of the current one (undefined when the
   * object does not exist and `allowCreate`). Called again after a lost race. Throws ApiErrors.
   */
  readonly build: (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>;
  /** Create the object when it does not exist (PUT on kinds that allow it). */
  readonly allowCreate: boolean;
  /** The request's modifying options (manager, dry run); default: a write by the server itself. */
  readonly write?: WriteOptions;
  /** The subresource written (`status`, `scale`, `finalize`), for managedFields entries. */
  readonly subresource?: string;
  /** True when `build` returns managedFields already computed (server-side apply). */
  readonly applied?: boolean;
}

/** The outcome of {@link applyUpdate}: the reply and the object as it now is. */
export interface Updated extends ResourceReply {
  readonly obj: KubeObject;
  /** True when the update removed the object (last finalizer gone while deleting). */
  readonly deleted: boolean;
}

function checkResourceVersion(type: ResourceType, requested: KubeObject, current: KubeObject): void {
  const rv = requested.metadata.resourceVersion;
  const name = current.metadata.name ?? '';
  // Every served kind allows unconditional updates (kube's `AllowUnconditionalUpdate`).
  if (rv === undefined || rv === null || rv === '') return;
  if (typeof rv !== 'string' || !/^[0-9]+$/.test(rv)) {
    throw invalid(type.kind, type.group, name, [
      fieldInvalid('metadata.resourceVersion', rv, 'must be a valid resource version'),
    ]);
  }
  if (rv !== current.metadata.resourceVersion) throw staleConflict(type, name);
}

/**
 * A write through a subresource (`status`, ...) that names another uid than the object's is
 * refused, as kube's update validation refuses it for every part: a writer that names the
 * object it means (the node agent's status of a pod, by uid) never lands on a new object that
 * took the same name. A write through the main resource meets the same rule in validation.
 */
function checkUid(type: ResourceType, requested: KubeObject, current: KubeObject): void {
  const uid = requested.metadata.uid;
  if (uid === undefined || uid === null || uid === '' || uid === current.metadata.uid) return;
  throw invalid(type.kind, type.group, current.metadata.name ?? '', [
    fieldInvalid('metadata.uid', uid, 'field is immutable'),
  ]);
}

/**
 * The metadata a `status` write takes from the request (kube's status strategies keep the
 * request's object metadata, then reset the kind's sealed fields; server-owned fields come from
 * the stored object as on any update).
 */
const STATUS_USER_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/** The object to store for `part`, from the requested one and the current one. */
function merge(
  part: UpdatePart,
  requested: KubeObject,
  current: KubeObject,
  strategy: KindStrategy,
): KubeObject {
  if (part === 'main') return requested;
  const next = cloneJson(current);
  if (part === 'status') {
    if (requested['status'] === undefined) delete next['status'];
    else next['status'] = requested['status'];
    const kept = strategy.statusKeepsMetadata;
    for (const field of STATUS_USER_METADATA) {
      if (kept.includes(field)) continue;
      const from: Record<string, unknown> = requested.metadata;
      const to: Record<string, unknown> = next.metadata;
      const value = from[field];
      if (value === undefined || value === null) delete to[field];
      else to[field] = value;
    }
    if (requested.metadata.managedFields !== undefined)
      next.metadata.managedFields = requested.metadata.managedFields;
    return next;
  }
  const spec = isJsonObject(next['spec']) ? next['spec'] : (next['spec'] = {});
  const requestedSpec = isJsonObject(requested['spec']) ? requested['spec'] : {};
  if (part === 'resize') {
    mergeResize(spec, requestedSpec);
  } else {
    // finalize: only spec.finalizers (kube's namespaces/finalize); ephemeralcontainers: only
    // spec.ephemeralContainers (kube's dropNonEphemeralContainerUpdates).
    const field = part === 'finalize' ? 'finalizers' : 'ephemeralContainers';
    if (requestedSpec[field] === undefined) delete spec[field];
    else spec[field] = requestedSpec[field];
  }
  if (part !== 'finalize' && requested.metadata.managedFields !== undefined)
    next.metadata.managedFields = requested.metadata.managedFields;
  return next;
}

/**
 * A resize takes only each container's and init container's `resources` and `resizePolicy` from
 * the request (kube's dropNonResizeUpdates). When the request adds, removes, renames or reorders
 * containers, its container lists are taken whole, for validation to refuse.
 */
function mergeResize(spec: JsonObject, requestedSpec: JsonObject): void {
  const lists = ['containers', 'initContainers'] as const;
  const reshaped = lists.some((k) => {
    const now = Array.isArray(requestedSpec[k]) ? requestedSpec[k] : [];
    const before = Array.isArray(spec[k]) ? spec[k] : [];
    return now.length !== before.length || now.some((c, i) => nameOf(c) !== nameOf(before[i]));
  });
  for (const k of lists) {
    const now: unknown = requestedSpec[k];
    const before: unknown = spec[k];
    if (reshaped) {
      if (now === undefined) delete spec[k];
      else spec[k] = now;
      continue;
    }
    if (!Array.isArray(now) || !Array.isArray(before)) continue;
    spec[k] = before.map((c: unknown, i) => {
      const from: unknown = now[i];
      if (!isJsonObject(c) || !isJsonObject(from)) return c;
      const merged: JsonObject = { ...c };
      for (const field of ['resources', 'resizePolicy']) {
        if (from[field] === undefined) delete merged[field];
        else merged[field] = from[field];
      }
      return merged;
    });
  }
}

function nameOf(container: unknown): unknown {
  return isJsonObject(container) ? container['name'] : undefined;
}

/**
 * True when `next` would store what `current` holds: the same JSON apart from the
 * resourceVersion (which is not stored) and key order (which a client may change).
 */
function sameContent(next: KubeObject, current: KubeObject): boolean {
  return (
    membersEqual(next, current, 'metadata') &&
    membersEqual(next.metadata, current.metadata, 'resourceVersion')
  );
}

/**
 * The object to store from the current one: the plan's build, the resourceVersion
 * precondition, the part's merge, admission, preparation, managedFields and validation.
 */
async function buildNext(
  ctx: ResourceContext,
  plan: UpdatePlan,
  write: WriteOptions,
  strategy: KindStrategy,
  current: KubeObject,
): Promise<KubeObject> {
  const { type, part } = plan;
  const requested = await plan.build(cloneJson(current));
  checkResourceVersion(type, requested, current);
  if (part !== 'main') checkUid(type, requested, current);
  const next = merge(part, requested, current, strategy);
  const admission = admissionAttributes({
    operation: 'UPDATE',
    type,
    subresource: plan.subresource,
    namespace: plan.namespace,
    name: plan.name,
    object: next,
    oldObject: current,
    requester: write,
  });
  // As in kube's update handler: fields are recorded on the defaulted request, before the
  // mutating plugins and the kind's preparation.
  strategy.default(next);
  if (plan.applied !== true) ctx.fields.trackUpdate(type, plan.subresource, current, next, write, ctx.now());
  await ctx.admission.admit(admission);
  const prepared =
    part === 'main' ? prepareForUpdate(type, strategy, next, current, ctx.serviceIPFamilies) : [];
  if (part === 'status') strategy.prepareForStatusUpdate(next, current);
  if (SPEC_PARTS.has(part)) countGeneration(strategy, next, current);
  validateForWrite(type, strategy, next, current, prepared, plan.subresource);
  if (part === 'main') write.warnings.push(...strategy.warnings(next, current));
  await ctx.admission.validate(admission);
  return next;
}

/** Runs an update plan to completion (see the module comment). */
export async function applyUpdate(ctx: ResourceContext, plan: UpdatePlan): Promise<Updated> {
  const { type, namespace, name } = plan;
  const strategy = ctx.strategies.of(type);
  const key = objectKey(type, namespace, name);
  const write = plan.write ?? serverWrite();
  return ctx.objects.guaranteedUpdate<Updated>(
    type,
    key,
    { dryRun: write.dryRun },
    async (stored, attempt): Promise<WriteOutcome<Updated>> => {
      if (stored === undefined) {
        if (!plan.allowCreate) throw notFound(qualified(type, name));
        const fresh = await plan.build(undefined);
        delete fresh.metadata.resourceVersion;
        try {
          const created = await createObject(ctx, type, fresh, { write, applied: plan.applied === true });
          return { done: { code: 201, body: created.body, obj: created.obj, deleted: false } };
        } catch (err) {
          // Created by someone else meanwhile: update that one instead.
          if (err instanceof ApiError && err.reason === 'AlreadyExists' && attempt < MAX_ATTEMPTS)
            return RACED;
          throw err;
        }
      }
      const { kv, obj: current } = stored;
      let next: KubeObject;
      try {
        next = await buildNext(ctx, plan, write, strategy, current);
      } catch (err) {
        return { rejected: err };
      }

      const meta = current.metadata;
      const removable =
        meta.deletionTimestamp &&
        (next.metadata.finalizers ?? []).length === 0 &&
        (meta.deletionGracePeriodSeconds ?? 0) === 0 &&
        strategy.canDeleteOnUpdate(next);
      const pending = removable
        ? undefined
        : await ctx.writeHooks?.beginUpdate(ctx, type, next, current, write.dryRun);
      try {
        if (write.dryRun) {
          next.metadata.resourceVersion = String(kv.modRevision);
          return {
            done: {
              code: 200,
              body: answerAsRead(ctx, next, kv.modRevision),
              obj: next,
              deleted: removable === true,
            },
          };
        }
        if (removable) {
          await ctx.store.delete(key, { ifModRevision: kv.modRevision });
          await ctx.writeHooks?.afterDelete(ctx, type, current);
          next.metadata.resourceVersion = String(kv.modRevision);
          return {
            done: { code: 200, body: answerAsRead(ctx, next, kv.modRevision), obj: next, deleted: true },
          };
        }
        if (sameContent(next, current)) {
          await pending?.rollback();
          const body = (): Buffer => withResourceVersion(kv.value, kv.modRevision);
          return { unchanged: () => ({ code: 200, body: body(), obj: current, deleted: false }) };
        }
        const bytes = ctx.encode(next);
        const written = await ctx.store.update(key, bytes, await updateOptions(ctx, type, kv));
        await pending?.commit();
        next.metadata.resourceVersion = String(written.revision);
        const body = withResourceVersion(written.kv.value, written.revision);
        return { done: { code: 200, body, obj: next, deleted: false } };
      } catch (err) {
        await pending?.rollback();
        const raced = err instanceof ConflictError || err instanceof NotFoundError;
        if (!raced) throw err;
        if (attempt >= MAX_ATTEMPTS) throw staleConflict(type, name);
        return racedWith(err);
      }
    },
  );
}

/**
 * PUT on an item, or on a subresource that writes part of it (`status`, `finalize`,
 * `ephemeralcontainers`, `resize`: the part is the target's, {@link partOf}).
 */
export async function updateResource(
  ctx: ResourceContext,
  target: Target,
  body: unknown,
  write: WriteOptions = serverWrite(),
): Promise<ResourceReply> {
  const { type } = target;
  const name = target.name ?? '';
  if (type.namespaced && target.namespace === undefined)
    throw methodNotAllowed('the server does not allow this method on the requested resource');
  const requested = decodeObject(body, type);
  checkName(requested, name);
  bindNamespace(requested, type, target.namespace);
  validateFields(ctx, type, requested, write, 'object');
  const part = partOf(target.subresource);
  return applyUpdate(ctx, {
    type,
    namespace: target.namespace,
    name,
    part,
    allowCreate: part === 'main' && ctx.strategies.of(type).createOnUpdate,
    write,
    ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
    build: () => cloneJson(requested),
  });
}
