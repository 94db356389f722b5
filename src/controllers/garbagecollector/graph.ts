/**
 * The owner graph, as kube's GraphBuilder keeps it: one node per object UID seen by any monitor,
 * linked to its owners (by the UIDs in its owner references) and its dependents. An owner not yet
 * seen is a virtual node whose existence the collector verifies. The graph turns object changes
 * into work:
 * - an object deleted: its dependents are checked (their owner may be gone: Background), and an
 *   owner waiting for it (foreground) is checked again;
 * - an object gets `deletionTimestamp` with the `orphan` finalizer: orphan its dependents;
 * - with `foregroundDeletion`: it is deleting its dependents; they and it are checked;
 * - an owner reference removed or unblocked: the owner waiting in the foreground is checked;
 * - a new object: checked when an owner is unknown or already waiting.
 * Handlers run on one thread, so the graph is changed by one writer at a time, as kube's single
 * processGraphChanges loop.
 */
import type { ObjectMeta, OwnerReference } from '../../api/types/meta-v1.js';

/** The API identity of a node. */
export interface NodeIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
}

/** One object (or a virtual owner) in the graph. */
export interface GraphNode {
  readonly uid: string;
  identity: NodeIdentity;
  owners: readonly OwnerReference[];
  /** Made on the first dependent: most objects (every pod) never have one. */
  dependents?: Set<GraphNode>;
  /** Not seen by a monitor yet: only referenced. */
  virtual: boolean;
  beingDeleted: boolean;
  /** Being deleted with `foregroundDeletion`: waits for its blocking dependents. */
  deletingDependents: boolean;
}

/** What the graph asks the collector to do. */
export interface GraphWork {
  attemptToDelete(uid: string): void;
  attemptToOrphan(uid: string): void;
}

export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

function has(meta: ObjectMeta, finalizer: string): boolean {
  return meta.finalizers?.includes(finalizer) === true;
}

/** The graph. */
export class OwnerGraph {
  readonly #nodes = new Map<string, GraphNode>();

  constructor(
    private readonly work: GraphWork,
    /** Whether objects of `apiVersion`/`kind` are namespaced (undefined: unknown kind). */
    private readonly namespaced: (apiVersion: string, kind: string) => boolean | undefined,
  ) {}

  get(uid: string): GraphNode | undefined {
    return this.#nodes.get(uid);
  }

  get size(): number {
    return this.#nodes.size;
  }

  /** A monitor saw `meta` (added or updated) of an object of `apiVersion`/`kind`. */
  observe(apiVersion: string, kind: string, meta: ObjectMeta, old?: ObjectMeta): void {
    const uid = meta.uid ?? '';
    if (uid === '') return;
    const identity: NodeIdentity = {
      apiVersion,
      kind,
      name: meta.name ?? '',
      namespace: meta.namespace ?? '',
    };
    const owners = meta.ownerReferences ?? [];
    let node = this.#nodes.get(uid);
    if (node === undefined) {
      node = {
        uid,
        identity,
        owners: [],
        virtual: false,
        beingDeleted: false,
        deletingDependents: false,
      };
      this.#nodes.set(uid, node);
      this.#link(node, owners);
      node.owners = owners;
    } else {
      node.virtual = false;
      node.identity = identity;
      const before = new Map(node.owners.map((r) => [r.uid ?? '', r]));
      const after = new Map(owners.map((r) => [r.uid ?? '', r]));
      const added = owners.filter((r) => !before.has(r.uid ?? ''));
      for (const [ownerUid, ref] of before) {
        const next = after.get(ownerUid);
        const owner = this.#nodes.get(ownerUid);
        if (next === undefined) owner?.dependents?.delete(node);
        // A foreground owner may have been waiting for this reference to go or stop blocking.
        const unblocked = ref.blockOwnerDeletion === true && next?.blockOwnerDeletion !== true;
        if (unblocked && owner?.deletingDependents === true) this.work.attemptToDelete(owner.uid);
      }
      this.#link(node, added);
      node.owners = owners;
    }
    const deleting = meta.deletionTimestamp !== undefined;
    node.beingDeleted = deleting;
    if (deleting && has(meta, ORPHAN_FINALIZER)) this.work.attemptToOrphan(uid);
    if (deleting && has(meta, FOREGROUND_FINALIZER)) {
      const starts = !node.deletingDependents || old === undefined;
      node.deletingDependents = true;
      if (starts) for (const dep of node.dependents ?? []) this.work.attemptToDelete(dep.uid);
      this.work.attemptToDelete(uid);
    } else {
      node.deletingDependents = false;
    }
  }

  /** A monitor saw the object with `uid` deleted (or the collector found it gone). */
  remove(uid: string): void {
    const node = this.#nodes.get(uid);
    if (node === undefined) return;
    this.#nodes.delete(uid);
    for (const ref of node.owners) {
      const owner = this.#nodes.get(ref.uid ?? '');
      if (owner === undefined) continue;
      owner.dependents?.delete(node);
      if (owner.deletingDependents) this.work.attemptToDelete(owner.uid);
      if (owner.virtual && (owner.dependents?.size ?? 0) === 0) this.#nodes.delete(owner.uid);
    }
    for (const dep of node.dependents ?? []) this.work.attemptToDelete(dep.uid);
  }

  /** Links `node` under each owner of `refs`, creating virtual owners to verify. */
  #link(node: GraphNode, refs: readonly OwnerReference[]): void {
    for (const ref of refs) {
      const ownerUid = ref.uid ?? '';
      let owner = this.#nodes.get(ownerUid);
      if (owner === undefined) {
        const apiVersion = ref.apiVersion ?? '';
        const kind = ref.kind ?? '';
        const ns = this.namespaced(apiVersion, kind) === false ? '' : node.identity.namespace;
        owner = {
          uid: ownerUid,
          identity: { apiVersion, kind, name: ref.name ?? '', namespace: ns },
          owners: [],
          virtual: true,
          beingDeleted: false,
          deletingDependents: false,
        };
        this.#nodes.set(ownerUid, owner);
        this.work.attemptToDelete(ownerUid);
      } else if (owner.deletingDependents || owner.virtual) {
        this.work.attemptToDelete(node.uid);
      } else if (owner.identity.namespace !== '' && owner.identity.namespace !== node.identity.namespace) {
        // A namespaced owner in another namespace is, for this dependent, absent.
        this.work.attemptToDelete(node.uid);
      }
      (owner.dependents ??= new Set()).add(node);
    }
  }
}
