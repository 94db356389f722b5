/**
 * The webhook plugins' view of admissionregistration.k8s.io/v1 webhook configurations: each
 * webhook of a Mutating- or ValidatingWebhookConfiguration, read once from the stored (defaulted,
 * validated) object into a shape with every default filled, and the seam for `matchConditions`
 * (CEL, evaluated by a {@link MatchConditionEvaluator} the wiring gives).
 */
import type { JsonObject, KubeObject } from '../../api/object.js';

/** One `rules[]` entry (kube's `RuleWithOperations`). */
export interface WebhookRule {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  /** `pods`, `pods/status`, `*`, `*\/status`, `pods/*`. */
  readonly resources: readonly string[];
  readonly scope: '*' | 'Cluster' | 'Namespaced';
}

/** `clientConfig.service`. */
export interface WebhookService {
  readonly namespace: string;
  readonly name: string;
  /** Default '' (the root). */
  readonly path: string;
  /** Default 443. */
  readonly port: number;
}

/** `clientConfig`: exactly one of `url` and `service`. */
export interface WebhookClientConfig {
  readonly url: string | undefined;
  readonly service: WebhookService | undefined;
  /** PEM of `caBundle` (decoded from base64); undefined: the system roots. */
  readonly caBundle: string | undefined;
}

/** A named CEL expression of `matchConditions`. */
export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** One webhook of a configuration, every default applied. */
export interface WebhookSpec {
  /** Unique per webhook: `<configuration>/<webhook>/<index>` (kube's accessor UID). */
  readonly uid: string;
  readonly configurationName: string;
  readonly name: string;
  readonly mutating: boolean;
  readonly clientConfig: WebhookClientConfig;
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchPolicy: 'Exact' | 'Equivalent';
  /** A metav1.LabelSelector; `{}` selects everything. */
  readonly namespaceSelector: JsonObject;
  readonly objectSelector: JsonObject;
  /** None, NoneOnDryRun, Some, Unknown ('' when unset). */
  readonly sideEffects: string;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  /** Mutating webhooks only; Never for validating ones. */
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
  readonly matchConditions: readonly MatchCondition[];
}

/** What `matchConditions` expressions see (kube's CEL variables of webhook match conditions). */
export interface MatchConditionInput {
  /** The AdmissionRequest (v1 shape) the webhook would be sent, as `request`. */
  readonly request: JsonObject;
  /** `object` (null for DELETE and CONNECT). */
  readonly object: KubeObject | null;
  /** `oldObject` (null for CREATE and CONNECT). */
  readonly oldObject: KubeObject | null;
}

/**
 * The outcome of a webhook's `matchConditions`: every condition true (`matches`), one false
 * (`failedCondition` names it), or an evaluation error (`error`: the message; the webhook's
 * failurePolicy decides what it means, as in kube).
 */
export type MatchConditionResult =
  | { readonly matches: true }
  | { readonly matches: false; readonly failedCondition: string }
  | { readonly error: string };

/**
 * Evaluates `matchConditions` (CEL). The CEL library (src/cel) provides one; until then the
 * plugins treat every configuration with match conditions as an evaluation error.
 */
export interface MatchConditionEvaluator {
  evaluate(
    webhook: WebhookSpec,
    input: MatchConditionInput,
  ): MatchConditionResult | Promise<MatchConditionResult>;
}
