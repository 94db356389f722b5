/**
 * Defaults of the core/v1 kinds other than Pods and pod-template holders: Service, Secret
 * (including the `stringData` merge of its decoding), Namespace, PersistentVolume(Claim),
 * Endpoints, LimitRange, ResourceQuota, Node.
 */
import { isObject } from '../validation/json.js';
import {
  defaultPointer,
  defaultString,
  eachObject,
  ensureObject,
  objectAt,
  type JsonObject,
} from './mutate.js';
import { defaultClaimSpec } from './pod.js';
import { defaultResourceList } from './resources.js';
import { externallyAccessible } from '../validation/core/facts.js';

/**
 * core/v1 Service (`SetDefaults_Service`): sessionAffinity None (dropping any affinity config)
 * or ClientIP with a 10800 s timeout, type ClusterIP, port protocol TCP, targetPort = port,
 * externalTrafficPolicy Cluster when externally accessible, internalTrafficPolicy Cluster for
 * ClusterIP/NodePort/LoadBalancer, allocateLoadBalancerNodePorts true and ingress ipMode VIP for
 * LoadBalancer.
 *
 * Not here, as in kube: IP families, cluster IPs and node ports (see `prepareForCreate` and the
 * allocator).
 */
export function defaultService(svc: JsonObject): void {
  const spec = ensureObject(svc, 'spec');
  if (spec === undefined) return;
  defaultString(spec, 'sessionAffinity', 'None');
  if (spec['sessionAffinity'] === 'None') {
    delete spec['sessionAffinityConfig'];
  } else if (spec['sessionAffinity'] === 'ClientIP') {
    const timeout = objectAt(objectAt(spec, 'sessionAffinityConfig'), 'clientIP')?.['timeoutSeconds'];
    if (timeout === undefined || timeout === null) {
      spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: 10800 } };
    }
  }
  defaultString(spec, 'type', 'ClusterIP');
  eachObject(spec, 'ports', (port) => {
    defaultString(port, 'protocol', 'TCP');
    const target = port['targetPort'];
    if (target === undefined || target === null || target === 0 || target === '') {
      if (port['port'] !== undefined) port['targetPort'] = port['port'];
    }
  });
  if (externallyAccessible(spec)) defaultString(spec, 'externalTrafficPolicy', 'Cluster');
  const t = spec['type'];
  if (t === 'NodePort' || t === 'LoadBalancer' || t === 'ClusterIP') {
    defaultPointer(spec, 'internalTrafficPolicy', 'Cluster');
  }
  if (t === 'LoadBalancer') {
    defaultPointer(spec, 'allocateLoadBalancerNodePorts', true);
    eachObject(objectAt(objectAt(svc, 'status'), 'loadBalancer'), 'ingress', (ing) => {
      if (typeof ing['ip'] === 'string' && ing['ip'] !== '') defaultPointer(ing, 'ipMode', 'VIP');
    });
  }
}

/**
 * core/v1 Secret: `stringData` entries are base64-encoded into `data` (overwriting) and
 * `stringData` is dropped, as kube's v1 decoding does; type defaults to Opaque.
 */
export function defaultSecret(secret: JsonObject): void {
  const stringData = secret['stringData'];
  if (isObject(stringData)) {
    const data = ensureObject(secret, 'data');
    if (data !== undefined) {
      for (const [k, v] of Object.entries(stringData)) {
        if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
      }
    }
  }
  if (stringData !== undefined) delete secret['stringData'];
  defaultString(secret, 'type', 'Opaque');
}

/**
 * core/v1 Namespace: the `kubernetes.io/metadata.name` label equal to the name (when the name
 * is known; `prepareForCreate` covers generated names) and status phase Active.
 */
export function defaultNamespace(ns: JsonObject): void {
  const meta = objectAt(ns, 'metadata');
  const name = meta?.['name'];
  if (meta !== undefined && typeof name === 'string' && name !== '') {
    const labels = ensureObject(meta, 'labels');
    if (labels !== undefined) labels['kubernetes.io/metadata.name'] = name;
  }
  const status = ensureObject(ns, 'status');
  if (status !== undefined) defaultString(status, 'phase', 'Active');
}

/** core/v1 PersistentVolume: phase Pending, reclaim policy Retain, volume mode Filesystem. */
export function defaultPersistentVolume(pv: JsonObject): void {
  const spec = ensureObject(pv, 'spec');
  if (spec !== undefined) {
    defaultString(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    defaultPointer(spec, 'volumeMode', 'Filesystem');
    defaultResourceList(spec, 'capacity');
    const hostPath = objectAt(spec, 'hostPath');
    if (hostPath !== undefined) defaultPointer(hostPath, 'type', '');
  }
  const status = ensureObject(pv, 'status');
  if (status !== undefined) defaultString(status, 'phase', 'Pending');
}

/** core/v1 PersistentVolumeClaim: phase Pending, volume mode Filesystem. */
export function defaultPersistentVolumeClaim(pvc: JsonObject): void {
  const spec = ensureObject(pvc, 'spec');
  if (spec !== undefined) defaultClaimSpec(spec);
  const status = ensureObject(pvc, 'status');
  if (status !== undefined) {
    defaultString(status, 'phase', 'Pending');
    defaultResourceList(status, 'capacity');
  }
}

/** core/v1 Endpoints: port protocol TCP. */
export function defaultEndpoints(ep: JsonObject): void {
  eachObject(ep, 'subsets', (subset) => {
    eachObject(subset, 'ports', (port) => defaultString(port, 'protocol', 'TCP'));
  });
}

/**
 * core/v1 LimitRange: for Container limits, `default` falls back to `max` and
 * `defaultRequest` to `default`, then to `min`.
 */
export function defaultLimitRange(lr: JsonObject): void {
  eachObject(objectAt(lr, 'spec'), 'limits', (item) => {
    for (const k of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'])
      defaultResourceList(item, k);
    if (item['type'] !== 'Container') return;
    const def = ensureObject(item, 'default');
    const defReq = ensureObject(item, 'defaultRequest');
    if (def === undefined || defReq === undefined) return;
    for (const [k, v] of Object.entries(objectAt(item, 'max') ?? {})) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
    for (const [k, v] of Object.entries(objectAt(item, 'min') ?? {})) if (!(k in defReq)) defReq[k] = v;
    // Empty maps are omitted when kube serialises them.
    if (Object.keys(def).length === 0) delete item['default'];
    if (Object.keys(defReq).length === 0) delete item['defaultRequest'];
  });
}

/** core/v1 ResourceQuota: quantities rounded and canonical. */
export function defaultResourceQuota(rq: JsonObject): void {
  defaultResourceList(objectAt(rq, 'spec'), 'hard');
  const status = objectAt(rq, 'status');
  defaultResourceList(status, 'hard');
  defaultResourceList(status, 'used');
}

/** core/v1 Node: podCIDR and podCIDRs kept together, as kube's conversion does; allocatable defaults to capacity. */
export function defaultNode(node: JsonObject): void {
  // kube's NodeSpec conversion: podCIDRs starts from podCIDR when empty; podCIDR is podCIDRs[0].
  const spec = objectAt(node, 'spec');
  const cidrs = spec?.['podCIDRs'];
  if (spec !== undefined && Array.isArray(cidrs) && cidrs.length > 0) {
    if (typeof cidrs[0] === 'string') spec['podCIDR'] = cidrs[0];
  } else if (spec !== undefined && typeof spec['podCIDR'] === 'string' && spec['podCIDR'] !== '') {
    spec['podCIDRs'] = [spec['podCIDR']];
  }
  const status = objectAt(node, 'status');
  if (status === undefined) return;
  defaultResourceList(status, 'capacity');
  const capacity = objectAt(status, 'capacity');
  if (capacity !== undefined && (status['allocatable'] === undefined || status['allocatable'] === null)) {
    status['allocatable'] = { ...capacity };
  }
  defaultResourceList(status, 'allocatable');
}
