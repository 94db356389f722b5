/**
 * What an admission plugin sees and does: kube's `admission.Attributes` and its mutation and
 * validation interfaces, in the shapes the resource handler has at hand.
 *
 * The resource handler (src/resource/create.ts, update.ts, delete.ts) runs the chain at kube's
 * points: mutating admission on the decoded, defaulted object before the strategy's preparation;
 * validating admission after the strategy's validation, right before the store write. A plugin
 * refuses a request by throwing an `ApiError` (kube's 403 `Forbidden` for most refusals).
 */
import type { JsonObject, KubeObject } from '../api/object.js';
import type { UserInfo } from '../api/user.js';
import type { ResourceType } from '../registry/types.js';

/** kube's `admission.Operation`. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** One request as admission sees it (kube's `admission.Attributes`). */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  /** The resource type addressed (group, version, kind, plural). */
  readonly type: ResourceType;
  /** `status`, `scale`, `finalize`, ... or undefined for the main resource. */
  readonly subresource: string | undefined;
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  /** May be `''` on create with `generateName`. */
  readonly name: string;
  /**
   * The object being written (CREATE, UPDATE): mutating plugins change it in place. Undefined
   * for DELETE and CONNECT.
   */
  readonly object: KubeObject | undefined;
  /** The stored object (UPDATE, DELETE). */
  readonly oldObject: KubeObject | undefined;
  /** The request's CreateOptions / UpdateOptions / DeleteOptions as kube sends them to webhooks. */
  readonly options: JsonObject;
  readonly dryRun: boolean;
  readonly user: UserInfo;
  /** Adds a `Warning` header to the reply. */
  warn(message: string): void;
  /**
   * Records an audit annotation (`<plugin>.admission.k8s.io/...` keys by convention); the
   * later value of a key wins.
   */
  annotate(key: string, value: string): void;
}

/**
 * One admission plugin. Mutating plugins implement `admit`, validating ones `validate`; some do
 * both (kube's LimitRanger, ServiceAccount). Each method is called only for requests its plugin
 * `handles`.
 */
export interface AdmissionPlugin {
  /** kube's plugin name (`NamespaceLifecycle`, `PodSecurity`, `MutatingAdmissionWebhook`, ...). */
  readonly name: string;
  /** True when the plugin has something to do for this request (cheap; no I/O). */
  handles(attrs: AdmissionAttributes): boolean;
  /** Mutating phase: may change `attrs.object`; throws ApiError to refuse. */
  admit?(attrs: AdmissionAttributes): Promise<void> | void;
  /** Validating phase: must not change anything; throws ApiError to refuse. */
  validate?(attrs: AdmissionAttributes): Promise<void> | void;
}
