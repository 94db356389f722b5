/**
 * The write path's object rules, in kube-apiserver's order (see src/validation/index.ts):
 *
 * - create: kube's field defaults (src/defaults, what kube does on decode); then the server-owned
 *   metadata (kube's `FillObjectMetaSystemFields` and `BeforeCreate`): new `uid` (random UUID),
 *   `creationTimestamp` (RFC 3339 seconds, UTC), deletion fields cleared, `generation` 1 for kinds
 *   that track it, `status` dropped for kinds with a status subresource (unless the kind keeps
 *   it); then the kind's strategy preparation (src/defaults/prepare.ts: pod status, namespace
 *   finalizers, Service IPs, ...); then {@link validateForWrite}.
 * - update: defaults; then `uid` (if the new object has none), `creationTimestamp`,
 *   `deletionTimestamp`, `deletionGracePeriodSeconds` and `generation` from the stored object,
 *   `status` too for kinds with a status subresource; then the strategy's update preparation;
 *   `generation` +1 when anything outside metadata and status changed; then
 *   {@link validateForWrite} with the stored object (immutable fields, no finalizer added once
 *   deletion started, ...).
 *
 * The name from `generateName` is the create handler's (it retries on collisions).
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from './context.js';
import { invalid } from '../api/errors.js';
import type { KindStrategy } from '../kinds/index.js';
import type { FieldError } from '../validation/index.js';
import { jsonEqual, rfc3339Seconds, type KubeObject } from '../api/object.js';
import type { UserInfo } from '../api/user.js';

/** Kube's name generator alphabet (no vowels, no confusable characters). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Kube's random suffix length. */
const SUFFIX_LENGTH = 5;
/** Kube's `maxGeneratedNameLength`: a generated name stays a valid subdomain/label. */
const MAX_GENERATED_NAME_LENGTH = 63 - SUFFIX_LENGTH;

/** `generateName` plus a random 5-character suffix (the prefix is cut to keep the name ≤ 63). */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix.slice(0, MAX_GENERATED_NAME_LENGTH)}${suffix}`;
}

/** True when the type has a status subresource: main-resource writes leave `status` alone. */
export function hasStatusSubresource(type: ResourceType): boolean {
  return type.subresources.includes('status');
}

/** The fields of an object that are neither metadata nor status (what generation tracks). */
function specPart(obj: KubeObject): Record<string, unknown> {
  const { kind: _k, apiVersion: _a, metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

/**
 * Defaults an object about to be created, fills its server-owned metadata and applies the
 * kind's create-time preparation. Mutates `obj`. Does not validate (see {@link validateForWrite}).
 * `user` is the requester, which some kinds record (a CertificateSigningRequest's spec); the
 * preparation's warnings are added to `warnings`.
 * @returns The preparation's field errors (a Service IP family it cannot serve, ...), for
 *   {@link validateForWrite} to report with the validation's.
 */
export function prepareForCreate(
  ctx: ResourceContext,
  type: ResourceType,
  strategy: KindStrategy,
  obj: KubeObject,
  user?: UserInfo,
  warnings?: string[],
): FieldError[] {
  strategy.default(obj);
  const meta = obj.metadata;
  meta.uid = randomUUID();
  meta.creationTimestamp = rfc3339Seconds(ctx.now());
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.resourceVersion;
  delete meta.selfLink;
  if (strategy.tracksGeneration) meta.generation = 1;
  if (hasStatusSubresource(type) && !strategy.keepStatusOnCreate) delete obj['status'];
  return strategy.prepareForCreate(obj, {
    serviceIPFamilies: ctx.serviceIPFamilies,
    ...(user === undefined ? {} : { user }),
    ...(warnings === undefined ? {} : { warnings }),
  });
}

/**
 * Defaults `obj` (the new state of a main-resource update), carries server-owned metadata (and
 * status) over from `old`, applies the kind's update-time preparation and bumps the generation
 * when the spec changed. Mutates `obj`, never `old`. Does not validate.
 * @returns The preparation's field errors, for {@link validateForWrite}.
 */
export function prepareForUpdate(
  type: ResourceType,
  strategy: KindStrategy,
  obj: KubeObject,
  old: KubeObject,
  serviceIPFamilies: readonly ('IPv4' | 'IPv6')[] = ['IPv4'],
): FieldError[] {
  strategy.default(obj);
  const meta = obj.metadata;
  const oldMeta = old.metadata;
  // A changed uid is left for validation to refuse (metadata.uid is immutable).
  if (meta.uid === undefined || meta.uid === null || meta.uid === '') meta.uid = oldMeta.uid ?? '';
  copyField(meta, oldMeta, 'creationTimestamp');
  copyField(meta, oldMeta, 'deletionTimestamp');
  copyField(meta, oldMeta, 'deletionGracePeriodSeconds');
  copyField(meta, oldMeta, 'generation');
  delete meta.selfLink;
  if (hasStatusSubresource(type)) {
    if (old['status'] === undefined) delete obj['status'];
    else obj['status'] = structuredClone(old['status']);
  }
  const errs = strategy.prepareForUpdate(obj, old, { serviceIPFamilies });
  countGeneration(strategy, obj, old);
  return errs;
}

/**
 * Counts a change of `obj`'s spec from `old` in `metadata.generation`, for kinds that track it
 * (kube's strategies bump it on a spec change, the pod's ephemeralcontainers subresource too).
 */
export function countGeneration(strategy: KindStrategy, obj: KubeObject, old: KubeObject): void {
  if (!strategy.tracksGeneration || jsonEqual(specPart(obj), specPart(old))) return;
  const previous = old.metadata.generation;
  obj.metadata.generation = (typeof previous === 'number' ? previous : 0) + 1;
}

function copyField(meta: KubeObject['metadata'], oldMeta: KubeObject['metadata'], field: string): void {
  const v = oldMeta[field];
  if (v === undefined || v === null) delete meta[field];
  else meta[field] = v;
}

/**
 * Validates the object about to be written as kube-apiserver validates its kind (metadata, then
 * the kind's own rules; with `old`, the update rules too: immutable fields, metadata update
 * rules) and throws the 422 `Invalid` (one cause per field error) if anything fails, `extra`
 * (the preparation's errors) first. Kinds without rules (custom resources) get metadata
 * validation only.
 * @throws ApiError 422 `Invalid`.
 */
export function validateForWrite(
  type: ResourceType,
  strategy: KindStrategy,
  obj: KubeObject,
  old: KubeObject | undefined,
  extra: readonly FieldError[] = [],
  subresource?: string,
): void {
  const errs = strategy.validate(obj, old, subresource);
  if (errs.length > 0 || extra.length > 0) {
    throw invalid(type.kind, type.group, obj.metadata.name ?? '', [...extra, ...errs]);
  }
}
