/**
 * Controller references and claiming, as kube's `ControllerRefManager`: an owner claims the
 * objects its selector matches that no other controller owns (adoption, a patch adding its
 * controller reference), and lets go of the objects it owns that no longer match (release, a
 * patch removing it). An owner being deleted adopts nothing and releases nothing; before the
 * first adoption of a sync, `canAdopt` re-reads the owner from the server (a cache may not yet
 * show its deletion). {@link claimByPatch} (and {@link claimPods}) is the claim every workload
 * controller makes: strategic-merge patches on the objects, the owner re-read through its client.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { ObjectMeta, OwnerReference } from '../../api/types/meta-v1.js';
import { isNotFound, isInvalid, type PatchOptions } from '../../client/index.js';

/** What an owner needs to be referenced. */
export interface OwnerIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
}

/** The controller reference of `meta`, if any. */
export function controllerRefOf(meta: ObjectMeta): OwnerReference | undefined {
  return meta.ownerReferences?.find((r) => r.controller === true);
}

/** A controller reference to `owner` (`controller` and `blockOwnerDeletion` true, as kube's). */
export function newControllerRef(owner: OwnerIdentity): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A strategic-merge patch that adds `ref` to the object with `uid` (fails if the UID changed). */
export function adoptPatch(ref: OwnerReference, uid: string): unknown {
  return { metadata: { ownerReferences: [ref], uid } };
}

/** A strategic-merge patch that removes the owner reference with `ownerUid`. */
export function releasePatch(ownerUid: string, uid: string): unknown {
  return { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid } };
}

/** How one owner claims. */
export interface Claimer<T extends { metadata: ObjectMeta }> {
  readonly owner: OwnerIdentity;
  /** The owner's selector matches `obj`. */
  matches(obj: T): boolean;
  /** Patches `obj` to carry the owner's controller reference. */
  adopt(obj: T): Promise<void>;
  /** Patches the owner's reference out of `obj`. */
  release(obj: T): Promise<void>;
  /** Rejects when the owner may not adopt (deleted, or replaced by a new UID), fresh from the server. */
  canAdopt(): Promise<void>;
}

/**
 * The objects `claimer.owner` controls after adopting and releasing. Failures to adopt or
 * release one object are collected; the first is thrown after all were tried (the sync is then
 * retried), but objects already claimed are still what the caller should act on next time.
 */
export async function claim<T extends { metadata: ObjectMeta }>(
  objs: readonly T[],
  claimer: Claimer<T>,
): Promise<T[]> {
  const ownerUid = claimer.owner.metadata.uid ?? '';
  const ownerDeleting = claimer.owner.metadata.deletionTimestamp !== undefined;
  const claimed: T[] = [];
  const errors: unknown[] = [];
  let adoptable: Promise<void> | undefined;
  for (const obj of objs) {
    const ref = controllerRefOf(obj.metadata);
    if (ref !== undefined) {
      if (ref.uid !== ownerUid) continue; // another controller's
      if (claimer.matches(obj) || ownerDeleting) {
        claimed.push(obj);
        continue;
      }
      try {
        await claimer.release(obj);
      } catch (err) {
        if (!isNotFound(err) && !isInvalid(err)) errors.push(err);
      }
      continue;
    }
    if (ownerDeleting || !claimer.matches(obj) || obj.metadata.deletionTimestamp !== undefined) continue;
    try {
      await (adoptable ??= claimer.canAdopt());
      await claimer.adopt(obj);
      claimed.push(obj);
    } catch (err) {
      if (!isNotFound(err)) errors.push(err);
      if (
        adoptable !== undefined &&
        (await adoptable.then(
          () => false,
          () => true,
        ))
      )
        break;
    }
  }
  if (errors.length > 0) throw errors[0];
  return claimed;
}

/** The clients a claim by patch uses (any `ResourceClient` of the claimed and the owner's kinds). */
export interface ClaimClients {
  /** Patches the claimed objects. */
  readonly objects: { patch(name: string, patch: unknown, opts: PatchOptions): Promise<unknown> };
  /** Reads the owner fresh from the server. */
  readonly owners: {
    get(name: string, opts: { namespace?: string }): Promise<{ readonly metadata: ObjectMeta }>;
  };
}

/**
 * {@link claim} as the workload controllers make it: `owner` (in its namespace) claims the
 * `candidates` `matches` selects, adopting and releasing them with strategic-merge patches of
 * its controller reference; before adopting it re-reads itself and refuses, with kube's
 * messages, when it is gone, replaced (a new UID) or being deleted.
 */
export function claimByPatch<T extends { metadata: ObjectMeta }>(
  owner: OwnerIdentity,
  candidates: readonly T[],
  matches: (obj: T) => boolean,
  clients: ClaimClients,
): Promise<T[]> {
  const namespace = owner.metadata.namespace ?? '';
  const name = owner.metadata.name ?? '';
  const ref = newControllerRef(owner);
  const patch = async (obj: T, body: unknown): Promise<void> => {
    await clients.objects.patch(obj.metadata.name ?? '', body, { namespace, type: 'strategic' });
  };
  return claim(candidates, {
    owner,
    matches,
    adopt: (obj) => patch(obj, adoptPatch(ref, obj.metadata.uid ?? '')),
    release: (obj) => patch(obj, releasePatch(ref.uid ?? '', obj.metadata.uid ?? '')),
    canAdopt: async () => {
      const fresh = await clients.owners.get(name, { namespace });
      const key = `${namespace}/${name}`;
      if (fresh.metadata.uid !== owner.metadata.uid) {
        throw new Error(
          `original ${key} is gone: got uid ${fresh.metadata.uid ?? ''}, wanted ${owner.metadata.uid ?? ''}`,
        );
      }
      if (fresh.metadata.deletionTimestamp !== undefined) {
        throw new Error(`${key} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
      }
    },
  });
}

/** {@link claimByPatch} for pods (ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets, Jobs). */
export function claimPods(
  owner: OwnerIdentity,
  pods: readonly Pod[],
  matches: (pod: Pod) => boolean,
  clients: ClaimClients,
): Promise<Pod[]> {
  return claimByPatch(owner, pods, matches, clients);
}
