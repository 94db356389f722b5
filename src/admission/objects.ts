/**
 * How admission plugins read (and, for ResourceQuota, write) other objects: kube's plugins use
 * informer listers with a live fallback; here the wiring (src/server/admission.ts) answers from
 * the watch caches when they are ready and from storage otherwise. The resource handler's layer
 * sits above admission, so plugins see only this interface.
 */
import type { KubeObject } from '../api/object.js';

/** A kind by API group and kind name (`''` for core). */
export interface KindRef {
  readonly group: string;
  readonly kind: string;
}

/** Reads and compare-and-swap writes of objects, for admission plugins. */
export interface AdmissionObjects {
  /**
   * The object, or undefined when it does not exist (or the kind is not served). The objects
   * {@link get} and {@link list} give are shared between requests and frozen: copy before
   * changing or handing on anything of them.
   */
  get(kind: KindRef, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  /** Every object of `kind` in `namespace` (undefined: every namespace / cluster-scoped). */
  list(kind: KindRef, namespace: string | undefined): Promise<KubeObject[]>;
  /** Like {@link list} but read from storage (consistent), not from a cache. */
  listLive(kind: KindRef, namespace: string | undefined): Promise<KubeObject[]>;
  /**
   * Replaces `obj` in storage when it is unchanged since its `metadata.resourceVersion`
   * (kube's optimistic concurrency); returns the stored object, or undefined on a conflict.
   */
  replace(kind: KindRef, obj: KubeObject): Promise<KubeObject | undefined>;
  /** The kind served as `plural` in `group`, or undefined. */
  resolve(group: string, plural: string): (KindRef & { readonly plural: string }) | undefined;
  /** Creates `obj` unless it exists; returns false when it existed. */
  createIfMissing(kind: KindRef, obj: KubeObject): Promise<boolean>;
}

/** Kinds the plugins read. */
export const KINDS = {
  namespace: { group: '', kind: 'Namespace' },
  pod: { group: '', kind: 'Pod' },
  node: { group: '', kind: 'Node' },
  resourceQuota: { group: '', kind: 'ResourceQuota' },
  limitRange: { group: '', kind: 'LimitRange' },
  pvc: { group: '', kind: 'PersistentVolumeClaim' },
  pv: { group: '', kind: 'PersistentVolume' },
  priorityClass: { group: 'scheduling.k8s.io', kind: 'PriorityClass' },
  storageClass: { group: 'storage.k8s.io', kind: 'StorageClass' },
  ingressClass: { group: 'networking.k8s.io', kind: 'IngressClass' },
  runtimeClass: { group: 'node.k8s.io', kind: 'RuntimeClass' },
} as const satisfies Record<string, KindRef>;
