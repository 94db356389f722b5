/**
 * What differs between kinds in the generic resource handler's bookkeeping, in one table:
 * generation tracking, status on create, create-on-update, graceful deletion and what a delete
 * returns. Everything else is generic. A kind's field defaults, strategy preparation and
 * validation are not here: they are kube's per-kind tables in src/defaults and src/validation,
 * which every write runs (src/resource/metadata.ts).
 *
 * Facts follow kube-apiserver's per-kind strategies (`pkg/registry/<group>/<kind>/strategy.go`
 * and `storage/storage.go`).
 */
import type { ResourceType } from '../registry/types.js';
import { isJsonObject, type KubeObject } from '../api/object.js';

/** One kind's deviations from the generic behaviour. Every field is optional. */
export interface KindRule {
  /** `metadata.generation` is 1 on create and +1 on each change outside metadata and status. */
  readonly tracksGeneration?: boolean;
  /** Keep a client-set `status` on create (kinds with a status subresource drop it otherwise). */
  readonly keepStatusOnCreate?: boolean;
  /** PUT of a missing object creates it. */
  readonly allowCreateOnUpdate?: boolean;
  /** PUT without `metadata.resourceVersion` is refused (422) instead of applied unconditionally. */
  readonly requireResourceVersionOnUpdate?: boolean;
  /** DELETE answers with the object; otherwise with a `Status` of `Success`. */
  readonly returnDeletedObject?: boolean;
  /**
   * The grace period a DELETE gets (seconds); 0 or undefined: no graceful deletion. `requested`
   * is the client's `gracePeriodSeconds`.
   */
  readonly gracePeriodSeconds?: (obj: KubeObject, requested: number | undefined) => number;
  /** Extra condition for removing an object whose last finalizer an update removed. */
  readonly canDeleteOnUpdate?: (obj: KubeObject) => boolean;
  /**
   * The user-set metadata fields a `status` write keeps from the stored object (kube's status
   * strategies: most take labels, annotations, finalizers and owner references from the request;
   * some call `ResetObjectMetaForStatus` or keep the whole metadata).
   */
  readonly statusKeepsMetadata?: readonly string[];
}

/** The rule of a type, with its key. */
export type ResolvedRule = KindRule & { readonly key: string };

/** `Kind` for the core group, `Kind.group` otherwise: the key of {@link KIND_RULES}. */
export function ruleKey(type: Pick<ResourceType, 'group' | 'kind'>): string {
  return type.group === '' ? type.kind : `${type.kind}.${type.group}`;
}

/** The finalizer kube-apiserver's namespace controller owns. */
export const NAMESPACE_FINALIZER = 'kubernetes';

// Namespace status and finalizers on create, and spec.finalizers kept on update, are the
// strategy preparation of src/defaults/prepare.ts; what stays here is deletion.
const namespaceRule: KindRule = {
  returnDeletedObject: true,
  canDeleteOnUpdate(obj) {
    const s = obj['spec'];
    return !isJsonObject(s) || !Array.isArray(s['finalizers']) || s['finalizers'].length === 0;
  },
};

const podRule: KindRule = {
  returnDeletedObject: true,
  gracePeriodSeconds(obj, requested) {
    const s = isJsonObject(obj['spec']) ? obj['spec'] : {};
    const status = isJsonObject(obj['status']) ? obj['status'] : {};
    // Kube deletes at once what no kubelet runs: unscheduled pods and finished ones.
    if (typeof s['nodeName'] !== 'string' || s['nodeName'] === '') return 0;
    if (status['phase'] === 'Succeeded' || status['phase'] === 'Failed') return 0;
    if (requested !== undefined) return Math.max(requested, 0);
    const configured = s['terminationGracePeriodSeconds'];
    return typeof configured === 'number' && configured >= 0 ? configured : 30;
  },
};

const createOnUpdate: KindRule = { allowCreateOnUpdate: true };
/** kube's `ResetObjectMetaForStatus`: a status write changes no user-set metadata. */
const STATUS_RESETS_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;
const generation: KindRule = { tracksGeneration: true };

/** Per-kind rules; kinds not listed behave generically. */
export const KIND_RULES: Readonly<Record<string, KindRule>> = {
  Namespace: namespaceRule,
  // kube's pod status strategy keeps the owner references (old kubelets corrupted them).
  Pod: { ...podRule, statusKeepsMetadata: ['ownerReferences'] },
  Node: { keepStatusOnCreate: true },
  Service: { allowCreateOnUpdate: true, returnDeletedObject: true },
  ServiceAccount: { returnDeletedObject: true },
  PersistentVolume: { returnDeletedObject: true },
  PersistentVolumeClaim: { returnDeletedObject: true },
  ReplicationController: generation,
  Endpoints: createOnUpdate,
  Event: createOnUpdate,
  LimitRange: createOnUpdate,
  'Event.events.k8s.io': createOnUpdate,
  // kube's deployment status strategy keeps the stored labels.
  'Deployment.apps': { tracksGeneration: true, statusKeepsMetadata: ['labels'] },
  'ReplicaSet.apps': generation,
  'StatefulSet.apps': generation,
  'DaemonSet.apps': generation,
  'Job.batch': generation,
  'CronJob.batch': generation,
  'PodDisruptionBudget.policy': generation,
  'Ingress.networking.k8s.io': generation,
  'IngressClass.networking.k8s.io': generation,
  'NetworkPolicy.networking.k8s.io': generation,
  'Lease.coordination.k8s.io': createOnUpdate,
  'RuntimeClass.node.k8s.io': createOnUpdate,
  'Role.rbac.authorization.k8s.io': createOnUpdate,
  'RoleBinding.rbac.authorization.k8s.io': createOnUpdate,
  'ClusterRole.rbac.authorization.k8s.io': createOnUpdate,
  'ClusterRoleBinding.rbac.authorization.k8s.io': createOnUpdate,
  'StorageClass.storage.k8s.io': { returnDeletedObject: true },
  'VolumeAttachment.storage.k8s.io': {
    returnDeletedObject: true,
    statusKeepsMetadata: STATUS_RESETS_METADATA,
  },
  'CustomResourceDefinition.apiextensions.k8s.io': {
    tracksGeneration: true,
    returnDeletedObject: true,
    statusKeepsMetadata: ['labels', 'annotations', 'ownerReferences'],
  },
  'APIService.apiregistration.k8s.io': { statusKeepsMetadata: STATUS_RESETS_METADATA },
  'ServiceCIDR.networking.k8s.io': { statusKeepsMetadata: STATUS_RESETS_METADATA },
  'MutatingWebhookConfiguration.admissionregistration.k8s.io': generation,
  'ValidatingWebhookConfiguration.admissionregistration.k8s.io': generation,
  // Their status strategies keep the whole stored metadata (managedFields aside).
  'FlowSchema.flowcontrol.apiserver.k8s.io': {
    tracksGeneration: true,
    statusKeepsMetadata: STATUS_RESETS_METADATA,
  },
  'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io': {
    tracksGeneration: true,
    statusKeepsMetadata: STATUS_RESETS_METADATA,
  },
};

/** Resolves the rules of resource types, from a table ({@link KIND_RULES} unless given). */
export class KindRules {
  readonly #table: Readonly<Record<string, KindRule>>;
  readonly #cache = new Map<string, ResolvedRule>();

  constructor(table: Readonly<Record<string, KindRule>> = KIND_RULES) {
    this.#table = table;
  }

  /** The rule of `type` (cached). */
  of(type: Pick<ResourceType, 'group' | 'kind'>): ResolvedRule {
    const key = ruleKey(type);
    let rule = this.#cache.get(key);
    if (rule === undefined) {
      rule = { ...(this.#table[key] ?? {}), key };
      this.#cache.set(key, rule);
    }
    return rule;
  }
}
