/**
 * kube's NodeRestriction: a node identity (user `system:node:<name>` in group `system:nodes`)
 * may only
 * - create mirror pods bound to itself (owned by its Node, referencing no other objects), delete
 *   and evict pods bound to itself, and update the status of pods bound to itself;
 * - modify its own Node, without changing its taints or setting labels outside the kubelet's set;
 * - use its own Lease in `kube-node-lease` and its own CSINode; update only PVC status;
 * - request service-account tokens (`serviceaccounts/token`) only bound to pods on itself.
 * The node authorizer (src/authz/node-graph.ts) decides what a node may read.
 */
import { MIRROR_POD_ANNOTATION } from '../api/annotations.js';
import { notFound } from '../api/errors.js';
import { isJsonObject, jsonEqual, type JsonObject, type KubeObject } from '../api/object.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { admissionForbidden } from './forbidden.js';
import { allContainers, objectList, specOf } from './pod-spec.js';

const NODE_PREFIX = 'system:node:';

/** The node a user is, or undefined. */
export function nodeNameOf(user: {
  readonly name: string;
  readonly groups: readonly string[];
}): string | undefined {
  if (!user.groups.includes('system:nodes') || !user.name.startsWith(NODE_PREFIX)) return undefined;
  const name = user.name.slice(NODE_PREFIX.length);
  return name === '' ? undefined : name;
}

/** Labels a kubelet may set on its Node (kube's `kubeletapis.IsKubeletLabel`). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'kubernetes.io/os',
  'kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((n) => ns === n || ns.endsWith(`.${n}`));
}

function forbiddenLabels(next: Record<string, string>, prev: Record<string, string>): string[] {
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(next)) if (prev[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(prev)) if (next[k] !== v) modified.add(k);
  const out: string[] = [];
  for (const label of modified) {
    const ns = labelNamespace(label);
    const k8s =
      ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
    const restriction =
      ns === 'node-restriction.kubernetes.io' || ns.endsWith('.node-restriction.kubernetes.io');
    if (restriction || (k8s && !isKubeletLabel(label))) out.push(label);
  }
  return out.sort();
}

/** True when the pod references secrets (volumes, env, envFrom, image pull secrets). */
function references(spec: JsonObject, what: 'secret' | 'configMap'): boolean {
  if (what === 'secret' && objectList(spec['imagePullSecrets']).length > 0) return true;
  for (const v of objectList(spec['volumes'])) {
    if (isJsonObject(v[what])) return true;
    const projected = isJsonObject(v['projected']) ? objectList(v['projected']['sources']) : [];
    if (projected.some((s) => isJsonObject(s[what]))) return true;
  }
  for (const c of allContainers(spec)) {
    for (const e of objectList(c['envFrom'])) if (isJsonObject(e[`${what}Ref`])) return true;
    for (const e of objectList(c['env'])) {
      const from = isJsonObject(e['valueFrom']) ? e['valueFrom'] : {};
      if (isJsonObject(from[`${what}KeyRef`])) return true;
    }
  }
  return false;
}

export function nodeRestriction(objects: AdmissionObjects): AdmissionPlugin {
  const refuse = admissionForbidden;

  const podCreate = async (node: string, a: AdmissionAttributes, pod: KubeObject): Promise<void> => {
    if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) {
      throw refuse(
        a,
        `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`,
      );
    }
    const spec = specOf(pod);
    if (spec['nodeName'] !== node)
      throw refuse(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = objectList(pod.metadata.ownerReferences);
    if (owners.length > 1)
      throw refuse(a, `node "${node}" can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (
      owner === undefined ||
      owner['apiVersion'] !== 'v1' ||
      owner['kind'] !== 'Node' ||
      owner['name'] !== node
    ) {
      throw refuse(a, `node "${node}" can only create pods with an owner reference set to itself`);
    }
    if (owner['controller'] !== true) {
      throw refuse(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
    }
    if (owner['blockOwnerDeletion'] === true) {
      throw refuse(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    }
    const self = await objects.get(KINDS.node, undefined, node);
    if (self !== undefined && owner['uid'] !== self.metadata.uid) {
      throw refuse(
        a,
        `node ${node} UID mismatch: expected ${String(owner['uid'])} got ${self.metadata.uid ?? ''}`,
      );
    }
    if (typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '') {
      throw refuse(a, `node "${node}" can not create pods that reference a service account`);
    }
    if (references(spec, 'secret'))
      throw refuse(a, `node "${node}" can not create pods that reference secrets`);
    if (references(spec, 'configMap'))
      throw refuse(a, `node "${node}" can not create pods that reference configmaps`);
    if (objectList(spec['volumes']).some((v) => isJsonObject(v['persistentVolumeClaim']))) {
      throw refuse(a, `node "${node}" can not create pods that reference persistentvolumeclaims`);
    }
  };

  const pod = async (node: string, a: AdmissionAttributes): Promise<void> => {
    const bound = (o: KubeObject | undefined): boolean => o !== undefined && specOf(o)['nodeName'] === node;
    switch (a.subresource) {
      case undefined:
        if (a.operation === 'CREATE' && a.object !== undefined) return podCreate(node, a, a.object);
        if (a.operation === 'DELETE') {
          const existing = a.oldObject ?? (await objects.get(KINDS.pod, a.namespace, a.name));
          if (!bound(existing))
            throw refuse(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
          return;
        }
        throw refuse(
          a,
          `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`,
        );
      case 'status':
        if (!bound(a.oldObject)) {
          throw refuse(
            a,
            `node "${node}" can only update pod status for pods with spec.nodeName set to itself`,
          );
        }
        if (!jsonEqual(a.oldObject?.metadata.labels ?? {}, a.object?.metadata.labels ?? {})) {
          throw refuse(a, `node "${node}" cannot update labels through pod status`);
        }
        return;
      case 'eviction': {
        const existing = await objects.get(KINDS.pod, a.namespace, a.name);
        if (!bound(existing))
          throw refuse(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
        return;
      }
      default:
        throw refuse(
          a,
          `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`,
        );
    }
  };

  const nodeObject = (node: string, a: AdmissionAttributes): void => {
    const requested = a.name !== '' ? a.name : (a.object?.metadata.name ?? '');
    if (requested !== node) throw refuse(a, `node "${node}" is not allowed to modify node "${requested}"`);
    const labels = (o: KubeObject | undefined): Record<string, string> => o?.metadata.labels ?? {};
    if (a.operation === 'CREATE') {
      const bad = forbiddenLabels(labels(a.object), {});
      if (bad.length > 0)
        throw refuse(a, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    }
    if (a.operation === 'UPDATE' && a.object !== undefined && a.oldObject !== undefined) {
      if (!jsonEqual(specOf(a.object)['taints'] ?? null, specOf(a.oldObject)['taints'] ?? null)) {
        throw refuse(a, `node "${node}" is not allowed to modify taints`);
      }
      const bad = forbiddenLabels(labels(a.object), labels(a.oldObject));
      if (bad.length > 0) throw refuse(a, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  };

  /**
   * kube's rule for `serviceaccounts/token`: a node may only request tokens bound to a pod (by
   * name and uid) that is scheduled on itself.
   */
  const serviceAccountToken = async (node: string, a: AdmissionAttributes): Promise<void> => {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const spec = a.object ? specOf(a.object) : {};
    const ref = isJsonObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : undefined;
    const name = typeof ref?.['name'] === 'string' ? ref['name'] : '';
    const uid = typeof ref?.['uid'] === 'string' ? ref['uid'] : '';
    if (ref === undefined || ref['apiVersion'] !== 'v1' || ref['kind'] !== 'Pod' || name === '')
      throw refuse(a, 'node requested token not bound to a pod');
    if (uid === '') throw refuse(a, 'node requested token with a pod binding without a uid');
    const pod = await objects.get(KINDS.pod, a.namespace, name);
    if (pod === undefined) throw notFound({ resource: 'pods', group: '', name });
    if (uid !== pod.metadata.uid) {
      throw refuse(
        a,
        `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (specOf(pod)['nodeName'] !== node)
      throw refuse(a, 'node requested token bound to a pod scheduled on a different node');
  };

  return {
    name: 'NodeRestriction',
    handles: (a) => nodeNameOf(a.user) !== undefined,
    validate: async (a) => {
      const node = nodeNameOf(a.user) as string;
      const { group, kind } = a.type;
      if (group === '' && kind === 'Pod') return pod(node, a);
      if (group === '' && kind === 'Node') return nodeObject(node, a);
      if (group === '' && kind === 'ServiceAccount') return serviceAccountToken(node, a);
      if (group === '' && kind === 'PersistentVolumeClaim' && a.subresource !== 'status') {
        throw refuse(a, 'may only update PVC status');
      }
      if (group === 'coordination.k8s.io' && kind === 'Lease') {
        if (a.namespace !== 'kube-node-lease') {
          throw refuse(a, 'can only access leases in the "kube-node-lease" system namespace');
        }
        const name = a.operation === 'CREATE' ? (a.object?.metadata.name ?? '') : a.name;
        if (name !== node)
          throw refuse(a, 'can only access node lease with the same name as the requesting node');
      }
      if (group === 'storage.k8s.io' && kind === 'CSINode') {
        const name = a.operation === 'CREATE' ? (a.object?.metadata.name ?? '') : a.name;
        if (name !== node)
          throw refuse(a, 'can only access CSINode with the same name as the requesting node');
      }
    },
  };
}
