/**
 * delete (DELETE on an item) and kube's two-phase deletion:
 *
 * - an object with finalizers gets `deletionTimestamp` (now) and `deletionGracePeriodSeconds` 0
 *   and stays until the last finalizer is removed (see update.ts); the reply is the object;
 * - a kind with graceful deletion (pods) gets `deletionTimestamp` and `deletionGracePeriodSeconds`
 *   written first, as kube's store does: with a grace period (pods on a node) the object stays
 *   until someone deletes it with a zero one; with none (a zero request, an unscheduled or a
 *   finished pod) the object written is then deleted, so watchers see it modified, then deleted;
 * - otherwise the object is removed; the reply is the object for some kinds and a `Status` of
 *   `Success` naming it for the others (kube's `ReturnDeletedObject`); a removed object is
 *   answered at the revision of its deletion, as its DELETED watch event shows it;
 * - deleting an object already being deleted changes nothing (a shorter grace period excepted,
 *   and one whose grace period is over and that waits for no finalizer, which is removed: kube
 *   finishes so a graceful deletion whose second step failed);
 * - preconditions on uid and resourceVersion are 409s when they fail;
 * - namespaces are special (namespace-delete.ts);
 * - a dry run decides and answers the same, and writes nothing.
 *
 * Propagation policies leave the garbage collector's finalizers (`orphan`, `foregroundDeletion`:
 * gc-finalizers.ts), also on an object already being deleted.
 */
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import type { KeyValue } from '../../storage/interface.js';
import { conflict, invalid, notFound } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { qualified, type ResourceContext, type ResourceReply } from './context.js';
import {
  invalid as fieldInvalid,
  notSupported as fieldNotSupported,
  type FieldError,
} from '../validation/field-error.js';
import { objectKey } from './keys.js';
import { isJsonObject, rfc3339Seconds, withResourceVersion, type KubeObject } from '../api/object.js';
import { intParam, param, type Query } from './query.js';
import { racedWith, type WriteOutcome } from './object-store.js';
import { answerAsRead, staleConflict } from './store-ops.js';
import { admissionAttributes, serverRequester, type AdmissionRequester } from './admission.js';
import { finalizersAfterDelete } from './gc-finalizers.js';

/** Attempts before a delete that keeps losing races gives up with a 409. */
const MAX_ATTEMPTS = 16;

/** The parts of kube's DeleteOptions this server acts on. */
export interface DeleteOptions {
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: string;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  /** `dryRun: ["All"]` (body) or `dryRun=All` (query): decide and answer, write nothing. */
  readonly dryRun?: boolean;
  /** Who deletes, for admission (default: the server itself). */
  readonly requester?: Omit<AdmissionRequester, 'dryRun'>;
}

const POLICIES = ['Foreground', 'Background', 'Orphan'];

function invalidOptions(errs: readonly FieldError[]): never {
  throw invalid('DeleteOptions', 'meta.k8s.io', '', errs);
}

/**
 * DeleteOptions from the body (JSON object, may be absent) and the query (`gracePeriodSeconds`,
 * `propagationPolicy`, `orphanDependents`); the body wins where both are given.
 * @throws ApiError 400 for a body that is not an object, 422 for invalid values.
 */
export function parseDeleteOptions(body: unknown, query: Query): DeleteOptions {
  if (body !== undefined && body !== null && !isJsonObject(body))
    invalidOptions([fieldInvalid('body', body, 'must be a DeleteOptions object')]);
  const b = body ?? {};
  const grace =
    typeof b['gracePeriodSeconds'] === 'number'
      ? b['gracePeriodSeconds']
      : intParam(query, 'gracePeriodSeconds');
  let policy =
    typeof b['propagationPolicy'] === 'string' ? b['propagationPolicy'] : param(query, 'propagationPolicy');
  const orphan = b['orphanDependents'] ?? param(query, 'orphanDependents');
  if (orphan !== undefined && policy !== undefined && policy !== '') {
    invalidOptions([
      fieldInvalid(
        'propagationPolicy',
        policy,
        'orphanDependents and deletionPropagation cannot be both set',
      ),
    ]);
  }
  if (orphan === true || orphan === 'true') policy = 'Orphan';
  if (policy === '') policy = undefined;
  if (policy !== undefined && !POLICIES.includes(policy))
    invalidOptions([fieldNotSupported('propagationPolicy', policy, POLICIES)]);
  const dryRun = Array.isArray(b['dryRun']) ? (b['dryRun'] as unknown[]) : queryValues(query, 'dryRun');
  if (dryRun.some((v) => v !== 'All')) invalidOptions([fieldNotSupported('dryRun', dryRun, ['All'])]);
  const pre = isJsonObject(b['preconditions']) ? b['preconditions'] : undefined;
  const preconditions =
    pre === undefined
      ? undefined
      : {
          ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
          ...(typeof pre['resourceVersion'] === 'string' ? { resourceVersion: pre['resourceVersion'] } : {}),
        };
  return {
    ...(grace === undefined ? {} : { gracePeriodSeconds: grace }),
    ...(policy === undefined ? {} : { propagationPolicy: policy }),
    ...(preconditions === undefined ? {} : { preconditions }),
    ...(dryRun.length > 0 ? { dryRun: true } : {}),
  };
}

function queryValues(query: Query, name: string): readonly string[] {
  const v = query[name];
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

/** @throws ApiError 409 when a precondition does not hold for `obj`. */
export function checkPreconditions(type: ResourceType, obj: KubeObject, options: DeleteOptions): void {
  const name = obj.metadata.name ?? '';
  const pre = options.preconditions;
  if (pre?.uid !== undefined && pre.uid !== obj.metadata.uid) {
    throw conflict(
      qualified(type, name),
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(
      qualified(type, name),
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`,
    );
  }
}

/** The reply for a deleted (or already deleting) object: the object, or a Success Status. */
export function deletedReply(
  type: ResourceType,
  returnObject: boolean,
  body: Buffer | string,
  obj: KubeObject,
): ResourceReply {
  if (returnObject) return { code: 200, body };
  const details = {
    name: obj.metadata.name ?? '',
    ...(type.group === '' ? {} : { group: type.group }),
    kind: type.plural,
    uid: obj.metadata.uid ?? '',
  };
  return {
    code: 200,
    body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }),
  };
}

/** The outcome of {@link deleteObject}. */
export interface Deleted extends ResourceReply {
  /** True when the object is gone; false when it waits for finalizers or a grace period. */
  readonly removed: boolean;
}

/** Marks `obj` as being deleted `grace` seconds from now (kube's `markAsDeleting` for 0). */
function markDeleting(ctx: ResourceContext, obj: KubeObject, grace: number): void {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp && typeof meta.generation === 'number' && meta.generation > 0)
    meta.generation += 1;
  const at = rfc3339Seconds(new Date(ctx.now().getTime() + grace * 1000));
  if (!meta.deletionTimestamp || meta.deletionTimestamp > at) meta.deletionTimestamp = at;
  meta.deletionGracePeriodSeconds = grace;
}

/**
 * Writes `obj`, still present but marked (deleting, or with other finalizers), over the version
 * `kv` it was read at, and answers it as stored; a dry run answers it as a read would show it.
 * @throws ConflictError when `kv` is no longer current.
 */
async function writeMarked(
  ctx: ResourceContext,
  key: string,
  kv: KeyValue,
  obj: KubeObject,
  dryRun: boolean,
): Promise<Deleted> {
  if (dryRun) return { code: 200, body: answerAsRead(ctx, obj, kv.modRevision), removed: false };
  const written = await ctx.store.update(key, ctx.encode(obj), { ifModRevision: kv.modRevision });
  return { code: 200, body: withResourceVersion(written.kv.value, written.revision), removed: false };
}

/**
 * Graceful deletion with no grace period left, kube's two steps: writes `obj` (marked deleting
 * now, with a grace period of 0) over the version `kv`, then deletes the version written, and
 * answers that object at the revision of its deletion (a Status naming it unless
 * `returnObject`); a dry run answers it as a read would show it. If the object is gone between
 * the steps, someone else finished the deletion, which kube also takes as done.
 * @throws ConflictError when `kv`, or the version written, is no longer current (a retry then
 *   finds the object marked with no grace period left, and deletes it).
 */
async function writeMarkedThenDelete(
  ctx: ResourceContext,
  type: ResourceType,
  key: string,
  kv: KeyValue,
  obj: KubeObject,
  dryRun: boolean,
  returnObject: boolean,
): Promise<Deleted> {
  if (dryRun) {
    const body = answerAsRead(ctx, obj, kv.modRevision);
    return { ...deletedReply(type, returnObject, body, obj), removed: true };
  }
  const marked = await ctx.store.update(key, ctx.encode(obj), { ifModRevision: kv.modRevision });
  let revision = marked.revision;
  try {
    revision = (await ctx.store.delete(key, { ifModRevision: marked.revision })).revision;
    await ctx.writeHooks?.afterDelete(ctx, type, obj);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const body = withResourceVersion(marked.kv.value, revision);
  return { ...deletedReply(type, returnObject, body, obj), removed: true };
}

/** The preconditions and the admission of deleting `obj`. @throws ApiError */
async function admitDelete(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  obj: KubeObject,
  options: DeleteOptions,
): Promise<void> {
  checkPreconditions(type, obj, options);
  const admission = admissionAttributes({
    operation: 'DELETE',
    type,
    subresource: undefined,
    namespace,
    name,
    object: undefined,
    oldObject: obj,
    requester: { ...(options.requester ?? serverRequester()), dryRun: options.dryRun === true },
  });
  await ctx.admission.admit(admission);
  await ctx.admission.validate(admission);
}

/** Deletes one object by the rules of the module comment. @throws ApiError 404, 409. */
export async function deleteObject(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  options: DeleteOptions,
): Promise<Deleted> {
  const strategy = ctx.strategies.of(type);
  const key = objectKey(type, namespace, name);
  // As update.ts: the object store may start from the watch cache's copy; whatever is refused or
  // writes nothing on it runs again on storage's copy.
  const dryRun = options.dryRun === true;
  return ctx.objects.guaranteedUpdate<Deleted>(
    type,
    key,
    { dryRun },
    async (stored, attempt): Promise<WriteOutcome<Deleted>> => {
      if (stored === undefined) throw notFound(qualified(type, name));
      const { kv, obj } = stored;
      try {
        await admitDelete(ctx, type, namespace, name, obj, options);
      } catch (err) {
        return { rejected: err };
      }
      const meta = obj.metadata;
      if (!meta.deletionTimestamp) strategy.prepareForDelete?.(obj, ctx.now());
      const gcFinalizers = finalizersAfterDelete(type, meta.finalizers ?? [], options.propagationPolicy);
      if (gcFinalizers !== undefined) {
        if (gcFinalizers.length > 0) meta.finalizers = gcFinalizers;
        else delete meta.finalizers;
      }
      const finalizers = meta.finalizers ?? [];
      const grace = strategy.gracePeriodSeconds(obj, options.gracePeriodSeconds);
      const returnObject = strategy.returnDeletedObject;
      // Whether this delete starts a deletion, or shortens a pending grace period.
      let marks = meta.deletionTimestamp === undefined || meta.deletionTimestamp === '';
      try {
        if (!marks) {
          const pending = meta.deletionGracePeriodSeconds ?? 0;
          marks = options.gracePeriodSeconds !== undefined && grace < pending;
          if (gcFinalizers !== undefined && !marks && finalizers.length > 0) {
            // Only the finalizers change (a second delete with another propagation policy).
            return { done: await writeMarked(ctx, key, kv, obj, dryRun) };
          }
          const over = pending === 0 && finalizers.length === 0;
          if (!marks && !over) {
            const body = (): Buffer => withResourceVersion(kv.value, kv.modRevision);
            return {
              unchanged: () => ({ ...deletedReply(type, returnObject, body(), obj), removed: false }),
            };
          }
        }
        // Past here, an object not being marked is one whose deletion is over: it is removed.
        if (marks && (grace > 0 || finalizers.length > 0)) {
          markDeleting(ctx, obj, grace);
          return { done: await writeMarked(ctx, key, kv, obj, dryRun) };
        }
        if (marks && strategy.gracefulDelete) {
          markDeleting(ctx, obj, 0);
          return { done: await writeMarkedThenDelete(ctx, type, key, kv, obj, dryRun, returnObject) };
        }
        let revision = kv.modRevision;
        if (!dryRun) {
          revision = (await ctx.store.delete(key, { ifModRevision: kv.modRevision })).revision;
          await ctx.writeHooks?.afterDelete(ctx, type, obj);
        }
        const body = withResourceVersion(kv.value, revision);
        return { done: { ...deletedReply(type, returnObject, body, obj), removed: true } };
      } catch (err) {
        if (err instanceof NotFoundError) throw notFound(qualified(type, name));
        if (!(err instanceof ConflictError)) throw err;
        if (attempt >= MAX_ATTEMPTS) throw staleConflict(type, name);
        return racedWith(err);
      }
    },
  );
}
