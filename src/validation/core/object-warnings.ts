/**
 * The warnings kube-apiserver v1.33's strategies give on writes of kinds without a pod template
 * (their `WarningsOnCreate`/`WarningsOnUpdate`): Services, Endpoints, PersistentVolumes,
 * PersistentVolumeClaims, ServiceAccounts, Nodes, NetworkPolicies, StorageClasses and RuntimeClasses on create and on
 * every update of the object (not of its status); Ingresses on create only. As kube's
 * strategies do.
 */
import { arr, obj, objects, str, type JsonObject } from '../json.js';
import { child, index, key } from '../path.js';
import { cidrWarnings, ipWarnings } from './ip-warnings.js';
import {
  claimSpecWarnings,
  DEPRECATED_NODE_LABELS,
  DEPRECATED_VOLUMES,
  nodeSelectorTermWarnings,
} from './pod-warnings.js';

const TOPOLOGY_HINTS_ANNOTATION = 'service.kubernetes.io/topology-aware-hints';
const TOPOLOGY_MODE_ANNOTATION = 'service.kubernetes.io/topology-mode';
const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
const ENFORCE_MOUNTABLE_SECRETS = 'kubernetes.io/enforce-mountable-secrets';
/** The label and value the endpoints controller marks its own Endpoints with. */
const ENDPOINTS_MANAGED_BY = 'endpoints.kubernetes.io/managed-by';
const ENDPOINTS_CONTROLLER = 'endpoint-controller';
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

const annotationsOf = (o: JsonObject | undefined): JsonObject => obj(obj(o, 'metadata'), 'annotations') ?? {};

const strings = (o: JsonObject | undefined, k: string): string[] =>
  (arr(o, k) ?? []).filter((v): v is string => typeof v === 'string');

/** kube's `GetWarningsForService`. */
function serviceWarnings(svc: JsonObject): string[] {
  const out: string[] = [];
  if (Object.hasOwn(annotationsOf(svc), TOPOLOGY_HINTS_ANNOTATION))
    out.push(
      `annotation ${TOPOLOGY_HINTS_ANNOTATION} is deprecated, please use ${TOPOLOGY_MODE_ANNOTATION} instead`,
    );
  const spec = obj(svc, 'spec');
  const clusterIP = str(spec, 'clusterIP');
  // kube's IsServiceIPSet: an IP, not None.
  if (clusterIP !== '' && clusterIP !== 'None')
    strings(spec, 'clusterIPs').forEach((ip, i) => out.push(...ipWarnings(index('spec.clusterIPs', i), ip)));
  const externalIPs = strings(spec, 'externalIPs');
  externalIPs.forEach((ip, i) => out.push(...ipWarnings(index('spec.externalIPs', i), ip)));
  const lbIP = str(spec, 'loadBalancerIP');
  if (lbIP !== '') out.push(...ipWarnings('spec.loadBalancerIP', lbIP));
  strings(spec, 'loadBalancerSourceRanges').forEach((c, i) =>
    out.push(...cidrWarnings(index('spec.loadBalancerSourceRanges', i), c)),
  );
  const type = str(spec, 'type');
  if (type === 'ExternalName' && externalIPs.length > 0)
    out.push('spec.externalIPs is ignored when spec.type is "ExternalName"');
  if (type !== 'ExternalName' && str(spec, 'externalName') !== '')
    out.push('spec.externalName is ignored when spec.type is not "ExternalName"');
  return out;
}

/** kube's endpointsWarnings: non-standard addresses, unless the endpoints controller wrote them. */
function endpointsWarnings(ep: JsonObject): string[] {
  if (obj(obj(ep, 'metadata'), 'labels')?.[ENDPOINTS_MANAGED_BY] === ENDPOINTS_CONTROLLER) return [];
  const out: string[] = [];
  objects(ep, 'subsets').forEach((subset, i) => {
    for (const list of ['addresses', 'notReadyAddresses'])
      objects(subset, list).forEach((a, j) =>
        out.push(...ipWarnings(child(index(child(index('subsets', i), list), j), 'ip'), str(a, 'ip'))),
      );
  });
  return out;
}

/** kube's `GetWarningsForPersistentVolumeClaim`. */
function claimWarnings(pvc: JsonObject): string[] {
  const out: string[] = [];
  if (Object.hasOwn(annotationsOf(pvc), BETA_STORAGE_CLASS_ANNOTATION))
    out.push(
      `${key('metadata.annotations', BETA_STORAGE_CLASS_ANNOTATION)}: deprecated since v1.8; use "storageClassName" attribute instead`,
    );
  out.push(...claimSpecWarnings('spec', obj(pvc, 'spec')));
  return out;
}

/** The enforce-mountable-secrets annotation, when a write newly sets it. */
function serviceAccountWarnings(sa: JsonObject, old: JsonObject | undefined): string[] {
  if (old !== undefined && Object.hasOwn(annotationsOf(old), ENFORCE_MOUNTABLE_SECRETS)) return [];
  return Object.hasOwn(annotationsOf(sa), ENFORCE_MOUNTABLE_SECRETS)
    ? [
        `${key('metadata.annotations', ENFORCE_MOUNTABLE_SECRETS)}: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets`,
      ]
    : [];
}

/** kube's nodeWarnings. */
function nodeWarnings(node: JsonObject): string[] {
  const spec = obj(node, 'spec');
  const out: string[] = [];
  if (spec?.['configSource'] != null) out.push('spec.configSource: the feature is removed');
  if (str(spec, 'externalID') !== '')
    out.push('spec.externalID: this field is deprecated, and is unused by Kubernetes');
  strings(spec, 'podCIDRs').forEach((c, i) => out.push(...cidrWarnings(index('spec.podCIDRs', i), c)));
  return out;
}

/** kube's networkPolicyWarnings: non-standard CIDRs in the peers' ipBlocks. */
function networkPolicyWarnings(np: JsonObject): string[] {
  const out: string[] = [];
  const spec = obj(np, 'spec');
  for (const [rules, peers] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    objects(spec, rules).forEach((rule, i) =>
      objects(rule, peers).forEach((peer, j) => {
        const block = obj(peer, 'ipBlock');
        if (block === undefined) return;
        const path = child(index(child(index(child('spec', rules), i), peers), j), 'ipBlock');
        out.push(...cidrWarnings(child(path, 'cidr'), str(block, 'cidr')));
        strings(block, 'except').forEach((c, k) =>
          out.push(...cidrWarnings(index(child(path, 'except'), k), c)),
        );
      }),
    );
  }
  return out;
}

/** A PersistentVolume's deprecated annotations, and what kube says of each. */
const DEPRECATED_PV_ANNOTATIONS: readonly (readonly [string, string])[] = [
  [BETA_STORAGE_CLASS_ANNOTATION, 'deprecated since v1.8; use "storageClassName" attribute instead'],
  ['volume.beta.kubernetes.io/mount-options', 'deprecated since v1.31; use "mountOptions" attribute instead'],
];

/** A PersistentVolume's deprecated sources, in kube's order; their paths and messages are pods'. */
const PV_SOURCE_ORDER = ['cephfs', 'photonPersistentDisk', 'scaleIO', 'storageos', 'glusterfs', 'rbd'];
const DEPRECATED_PV_SOURCES = DEPRECATED_VOLUMES.filter(([k]) => PV_SOURCE_ORDER.includes(k)).sort(
  ([a], [b]) => PV_SOURCE_ORDER.indexOf(a) - PV_SOURCE_ORDER.indexOf(b),
);

/** kube's `GetWarningsForPersistentVolume`. */
function persistentVolumeWarnings(pv: JsonObject): string[] {
  const annotations = annotationsOf(pv);
  const out = DEPRECATED_PV_ANNOTATIONS.filter(([k]) => Object.hasOwn(annotations, k)).map(
    ([k, msg]) => `${key('metadata.annotations', k)}: ${msg}`,
  );
  const spec = obj(pv, 'spec');
  if (str(spec, 'persistentVolumeReclaimPolicy') === 'Recycle')
    out.push(
      'spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.',
    );
  objects(obj(obj(spec, 'nodeAffinity'), 'required'), 'nodeSelectorTerms').forEach((term, i) =>
    out.push(
      ...nodeSelectorTermWarnings(term, false, index('spec.nodeAffinity.required.nodeSelectorTerms', i)),
    ),
  );
  for (const [field, path, msg] of DEPRECATED_PV_SOURCES)
    if (spec?.[field] != null) out.push(`spec.${path}: ${msg}`);
  return out;
}

/** kube's `GetWarningsForStorageClass`: deprecated node labels in allowed topologies. */
function storageClassWarnings(sc: JsonObject): string[] {
  const out: string[] = [];
  objects(sc, 'allowedTopologies').forEach((topology, i) =>
    objects(topology, 'matchLabelExpressions').forEach((e, j) => {
      const msg = DEPRECATED_NODE_LABELS.get(str(e, 'key'));
      if (msg !== undefined)
        out.push(
          `${child(index(child(index('allowedTopologies', i), 'matchLabelExpressions'), j), 'key')}: ${msg}`,
        );
    }),
  );
  return out;
}

/** kube's `GetWarningsForRuntimeClass` (its path names the selector, not the key). */
function runtimeClassWarnings(rc: JsonObject): string[] {
  return Object.keys(obj(obj(rc, 'scheduling'), 'nodeSelector') ?? {}).flatMap((k) => {
    const msg = DEPRECATED_NODE_LABELS.get(k);
    return msg === undefined ? [] : [`scheduling.nodeSelector: ${msg}`];
  });
}

/** The class annotation without `spec.ingressClassName`, on create. */
function ingressWarnings(ing: JsonObject, old: JsonObject | undefined): string[] {
  if (old !== undefined) return [];
  return Object.hasOwn(annotationsOf(ing), INGRESS_CLASS_ANNOTATION) &&
    obj(ing, 'spec')?.['ingressClassName'] == null
    ? [
        `annotation ${JSON.stringify(INGRESS_CLASS_ANNOTATION)} is deprecated, please use 'spec.ingressClassName' instead`,
      ]
    : [];
}

/** The warnings of a write of `o` (`old` on update) of one of the module comment's kinds; none for others. */
export function objectWriteWarnings(
  group: string,
  kind: string,
  o: JsonObject,
  old: JsonObject | undefined,
): string[] {
  switch (`${group}/${kind}`) {
    case '/Service':
      return serviceWarnings(o);
    case '/Endpoints':
      return endpointsWarnings(o);
    case '/PersistentVolume':
      return persistentVolumeWarnings(o);
    case '/PersistentVolumeClaim':
      return claimWarnings(o);
    case '/ServiceAccount':
      return serviceAccountWarnings(o, old);
    case '/Node':
      return nodeWarnings(o);
    case 'networking.k8s.io/NetworkPolicy':
      return networkPolicyWarnings(o);
    case 'networking.k8s.io/Ingress':
      return ingressWarnings(o, old);
    case 'storage.k8s.io/StorageClass':
      return storageClassWarnings(o);
    case 'node.k8s.io/RuntimeClass':
      return runtimeClassWarnings(o);
    default:
      return [];
  }
}
