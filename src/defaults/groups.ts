/**
 * Defaults of the named API groups outside apps and batch: networking, rbac, storage,
 * scheduling, autoscaling, admissionregistration, apiextensions and discovery, as their
 * `SetDefaults_<Kind>` functions apply them.
 */
import { isObject } from '../validation/json.js';
import {
  defaultNonZero,
  defaultPointer,
  defaultString,
  eachObject,
  ensureObject,
  nonEmpty,
  objectAt,
  type JsonObject,
} from './mutate.js';
import { canonicalizeQuantity } from './resources.js';

/** networking/v1 NetworkPolicy: policyTypes [Ingress] (+ Egress with egress rules); port protocol TCP. */
export function defaultNetworkPolicy(np: JsonObject): void {
  const spec = ensureObject(np, 'spec');
  if (spec === undefined) return;
  for (const dir of ['ingress', 'egress']) {
    eachObject(spec, dir, (rule) =>
      eachObject(rule, 'ports', (port) => defaultPointer(port, 'protocol', 'TCP')),
    );
  }
  if (!nonEmpty(spec, 'policyTypes')) {
    spec['policyTypes'] = nonEmpty(spec, 'egress') ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

/** networking/v1 IngressClass: parameters scope Cluster. */
export function defaultIngressClass(ic: JsonObject): void {
  const params = objectAt(objectAt(ic, 'spec'), 'parameters');
  if (params !== undefined) defaultPointer(params, 'scope', 'Cluster');
}

function defaultSubjects(binding: JsonObject): void {
  eachObject(binding, 'subjects', (s) => {
    const g = s['apiGroup'];
    if (g !== undefined && g !== null && g !== '') return;
    // kube defaults ServiceAccount subjects to apiGroup "" and omits it (omitempty) on output; an
    // explicit "" would make every client-side re-apply see a change.
    if (s['kind'] === 'ServiceAccount') delete s['apiGroup'];
    else if (s['kind'] === 'User' || s['kind'] === 'Group') s['apiGroup'] = 'rbac.authorization.k8s.io';
  });
}

/** rbac/v1 RoleBinding and ClusterRoleBinding: roleRef apiGroup and subject apiGroups by kind. */
export function defaultRoleBinding(rb: JsonObject): void {
  const roleRef = ensureObject(rb, 'roleRef');
  if (roleRef !== undefined) defaultString(roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  defaultSubjects(rb);
}

/** storage/v1 StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate. */
export function defaultStorageClass(sc: JsonObject): void {
  defaultPointer(sc, 'reclaimPolicy', 'Delete');
  defaultPointer(sc, 'volumeBindingMode', 'Immediate');
}

/** storage/v1 CSIDriver: the spec's boolean switches, fsGroupPolicy and lifecycle modes. */
export function defaultCSIDriver(d: JsonObject): void {
  const spec = ensureObject(d, 'spec');
  if (spec === undefined) return;
  defaultPointer(spec, 'attachRequired', true);
  defaultPointer(spec, 'podInfoOnMount', false);
  defaultPointer(spec, 'storageCapacity', false);
  defaultPointer(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!nonEmpty(spec, 'volumeLifecycleModes')) spec['volumeLifecycleModes'] = ['Persistent'];
  defaultPointer(spec, 'requiresRepublish', false);
  defaultPointer(spec, 'seLinuxMount', false);
}

/** flowcontrol/v1 FlowSchema: matchingPrecedence 1000. */
export function defaultFlowSchema(fs: JsonObject): void {
  const spec = objectAt(fs, 'spec');
  if (spec !== undefined) defaultNonZero(spec, 'matchingPrecedence', 1000);
}

/**
 * flowcontrol/v1 PriorityLevelConfiguration: a Limited level's nominalConcurrencyShares 30 and
 * lendablePercent 0, and its queuing (when given) 64 queues, hand size 8, queue length limit 50;
 * an Exempt level's shares and lendable percent 0.
 */
export function defaultPriorityLevelConfiguration(plc: JsonObject): void {
  const spec = objectAt(plc, 'spec');
  const limited = objectAt(spec, 'limited');
  if (limited !== undefined) {
    defaultPointer(limited, 'nominalConcurrencyShares', 30);
    defaultPointer(limited, 'lendablePercent', 0);
    const queuing = objectAt(objectAt(limited, 'limitResponse'), 'queuing');
    if (queuing !== undefined) {
      defaultNonZero(queuing, 'queues', 64);
      defaultNonZero(queuing, 'handSize', 8);
      defaultNonZero(queuing, 'queueLengthLimit', 50);
    }
  }
  const exempt = objectAt(spec, 'exempt');
  if (exempt !== undefined) {
    defaultPointer(exempt, 'nominalConcurrencyShares', 0);
    defaultPointer(exempt, 'lendablePercent', 0);
  }
}

/** apiregistration/v1 APIService: the service's port 443. */
export function defaultAPIService(svc: JsonObject): void {
  const service = objectAt(objectAt(svc, 'spec'), 'service');
  if (service !== undefined) defaultPointer(service, 'port', 443);
}

/** scheduling/v1 PriorityClass: preemptionPolicy PreemptLowerPriority. */
export function defaultPriorityClass(pc: JsonObject): void {
  defaultPointer(pc, 'preemptionPolicy', 'PreemptLowerPriority');
}

/** The autoscaling/v1 annotation that carries the metrics v1 cannot express. */
const V1_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';

/**
 * autoscaling/v1 HorizontalPodAutoscaler: minReplicas 1, and a CPU target of 80% when it names
 * no metric at all: kube answers with the object read back from its autoscaling/v2 storage, whose
 * defaults add that metric, and shows it in v1 as `targetCPUUtilizationPercentage`.
 */
function defaultHPAv1(hpa: JsonObject, spec: JsonObject): void {
  defaultPointer(spec, 'minReplicas', 1);
  const annotations = objectAt(objectAt(hpa, 'metadata'), 'annotations');
  if (annotations?.[V1_METRICS_ANNOTATION] === undefined)
    defaultPointer(spec, 'targetCPUUtilizationPercentage', 80);
}

function scalingRules(from: unknown, defaults: JsonObject): JsonObject {
  const out: JsonObject = { ...defaults };
  if (!isObject(from)) return out;
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (from[k] !== undefined && from[k] !== null) out[k] = from[k];
  }
  return out;
}

/**
 * autoscaling HorizontalPodAutoscaler. v2 (any apiVersion other than `autoscaling/v1`):
 * minReplicas 1, a CPU 80% average-utilization metric when none is given, and complete
 * scale-up/scale-down rules once `behavior` is present. v1: minReplicas 1.
 */
export function defaultHPA(hpa: JsonObject): void {
  const spec = ensureObject(hpa, 'spec');
  if (spec === undefined) return;
  if (hpa['apiVersion'] === 'autoscaling/v1') {
    defaultHPAv1(hpa, spec);
    return;
  }
  defaultPointer(spec, 'minReplicas', 1);
  if (!nonEmpty(spec, 'metrics')) {
    spec['metrics'] = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ];
  }
  eachObject(spec, 'metrics', (metric) => {
    for (const source of ['resource', 'containerResource', 'object', 'pods', 'external']) {
      const target = objectAt(objectAt(metric, source), 'target');
      canonicalizeQuantity(target, 'value');
      canonicalizeQuantity(target, 'averageValue');
    }
  });
  const behavior = objectAt(spec, 'behavior');
  if (behavior !== undefined) {
    behavior['scaleUp'] = scalingRules(behavior['scaleUp'], {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    behavior['scaleDown'] = scalingRules(behavior['scaleDown'], {
      selectPolicy: 'Max',
      policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    });
  }
}

function defaultServiceReference(clientConfig: JsonObject | undefined): void {
  const service = objectAt(clientConfig, 'service');
  if (service !== undefined) defaultPointer(service, 'port', 443);
}

/**
 * admissionregistration/v1 webhook configurations: failurePolicy Fail, matchPolicy Equivalent,
 * empty namespace and object selectors, timeoutSeconds 10, rule scope `*`, service port 443, and
 * reinvocationPolicy Never for mutating webhooks. `sideEffects` and `admissionReviewVersions`
 * have no default in v1 (they are required).
 */
export function defaultWebhookConfiguration(cfg: JsonObject, mutating: boolean): void {
  eachObject(cfg, 'webhooks', (w) => {
    defaultPointer(w, 'failurePolicy', 'Fail');
    defaultPointer(w, 'matchPolicy', 'Equivalent');
    defaultPointer(w, 'namespaceSelector', {});
    defaultPointer(w, 'objectSelector', {});
    defaultPointer(w, 'timeoutSeconds', 10);
    if (mutating) defaultPointer(w, 'reinvocationPolicy', 'Never');
    eachObject(w, 'rules', (rule) => defaultPointer(rule, 'scope', '*'));
    defaultServiceReference(objectAt(w, 'clientConfig'));
  });
}

function defaultMatchResources(m: JsonObject | undefined): void {
  if (m === undefined) return;
  defaultPointer(m, 'matchPolicy', 'Equivalent');
  defaultPointer(m, 'namespaceSelector', {});
  defaultPointer(m, 'objectSelector', {});
  eachObject(m, 'resourceRules', (rule) => defaultPointer(rule, 'scope', '*'));
  eachObject(m, 'excludeResourceRules', (rule) => defaultPointer(rule, 'scope', '*'));
}

/**
 * admissionregistration/v1 ValidatingAdmissionPolicy: failurePolicy Fail; its matchConstraints
 * matchPolicy Equivalent, empty namespace and object selectors, rule scope `*`.
 */
export function defaultValidatingAdmissionPolicy(p: JsonObject): void {
  const spec = objectAt(p, 'spec');
  if (spec === undefined) return;
  defaultPointer(spec, 'failurePolicy', 'Fail');
  defaultMatchResources(objectAt(spec, 'matchConstraints'));
}

/** admissionregistration/v1 ValidatingAdmissionPolicyBinding: its matchResources as a policy's. */
export function defaultValidatingAdmissionPolicyBinding(b: JsonObject): void {
  defaultMatchResources(objectAt(objectAt(b, 'spec'), 'matchResources'));
}

/**
 * apiextensions/v1 CustomResourceDefinition: singular name (lower-case kind), listKind
 * (`<Kind>List`), conversion strategy None, webhook service port 443.
 */
export function defaultCRD(crd: JsonObject): void {
  const spec = ensureObject(crd, 'spec');
  if (spec === undefined) return;
  const names = ensureObject(spec, 'names');
  if (names !== undefined) {
    const kind = typeof names['kind'] === 'string' ? names['kind'] : '';
    defaultString(names, 'singular', kind.toLowerCase());
    if (kind !== '') defaultString(names, 'listKind', `${kind}List`);
    if (names['singular'] === '') delete names['singular'];
  }
  defaultPointer(spec, 'conversion', { strategy: 'None' });
  const webhook = objectAt(objectAt(spec, 'conversion'), 'webhook');
  defaultServiceReference(objectAt(webhook, 'clientConfig'));
}

/** discovery/v1 EndpointSlice: port name `""` and protocol TCP. */
export function defaultEndpointSlice(es: JsonObject): void {
  eachObject(es, 'ports', (port) => {
    defaultPointer(port, 'name', '');
    defaultPointer(port, 'protocol', 'TCP');
  });
}
