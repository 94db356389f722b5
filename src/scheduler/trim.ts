/**
 * What the scheduler keeps of the pods and nodes its informers receive (the informers'
 * `transform`): only the fields its plugins, its queue and its status and event writes read. A
 * pod's status as a kubelet writes it (container statuses, IPs, conditions with timestamps) and
 * a container's command, environment, mounts and probes are most of a stored pod, and no part of
 * the scheduler reads them; kube-scheduler keeps whole objects (without managedFields).
 *
 * Pods keep:
 * - metadata: name, namespace, uid, resourceVersion (bindings, status patches, events'
 *   references), labels (selectors of affinity, spread and PDBs), annotations (a change requeues
 *   a pending pod), creationTimestamp (preemption's start time when a pod has none),
 *   deletionTimestamp (pods being deleted are not scheduled);
 * - spec: nodeName, schedulerName, priority, preemptionPolicy, nodeSelector, affinity,
 *   tolerations, topologySpreadConstraints, schedulingGates, volumes (VolumeBinding,
 *   VolumeRestrictions, NodeVolumeLimits), overhead and resources (pod-level requests); of each
 *   container and init container: name, image (ImageLocality), resources, ports (NodePorts),
 *   restartPolicy (sidecars count as app containers);
 * - status: phase (terminal pods free their node), nominatedNodeName, startTime (preemption's
 *   victim order), and the PodScheduled and DisruptionTarget conditions.
 *
 * Nodes keep: metadata name, uid, resourceVersion, labels, deletionTimestamp; spec unschedulable
 * and taints; status capacity, allocatable and images. Every other kind keeps all but
 * managedFields.
 *
 * Repeated parts are kept once (src/client/share.ts): the pods of one workload have equal
 * labels, containers, tolerations and affinity, and their namespace, scheduler name and node name
 * are a few strings, so 5,000 pods of one Deployment hold one copy of each instead of 5,000. The
 * shared copies are frozen: informers' objects are read-only, and a write to one would now change
 * many pods, so it fails loudly instead.
 *
 * A plugin that reads another field must add it here (test/scheduler/trim.test.ts lists them).
 */
import type { Container, Node, Pod, PodSpec } from '../api/types/core-v1.js';
import type { ObjectMeta } from '../api/types/meta-v1.js';
import {
  shareField,
  shareString,
  stripManagedFields,
  ValueSharer,
  type TypedObject,
} from '../client/index.js';

/** Copies the named fields that are present (no `undefined` entries: objects stay compact). */
function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

const POD_META: readonly (keyof ObjectMeta)[] = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'labels',
  'annotations',
  'creationTimestamp',
  'deletionTimestamp',
];
const POD_SPEC: readonly (keyof PodSpec)[] = [
  'nodeName',
  'schedulerName',
  'priority',
  'preemptionPolicy',
  'nodeSelector',
  'affinity',
  'tolerations',
  'topologySpreadConstraints',
  'schedulingGates',
  'volumes',
  'overhead',
  'resources',
];
const CONTAINER: readonly (keyof Container)[] = ['name', 'image', 'resources', 'ports', 'restartPolicy'];
const POD_CONDITIONS = new Set(['PodScheduled', 'DisruptionTarget']);

/** The scheduler's view of a pod (see the file's comment); `sharer` keeps repeated parts once. */
export function trimPod(pod: Pod, sharer: ValueSharer = new ValueSharer()): Pod {
  const meta = pick(pod.metadata, POD_META);
  shareString(meta, 'namespace', sharer);
  shareString(meta, 'creationTimestamp', sharer);
  shareField(meta, 'labels', sharer);
  shareField(meta, 'annotations', sharer);
  const out: Pod = { metadata: meta };
  if (pod.apiVersion !== undefined) out.apiVersion = pod.apiVersion;
  if (pod.kind !== undefined) out.kind = pod.kind;
  if (pod.spec !== undefined) {
    const spec = pick(pod.spec, POD_SPEC) as PodSpec;
    if (pod.spec.containers !== undefined)
      spec.containers = pod.spec.containers.map((c) => pick(c, CONTAINER));
    if (pod.spec.initContainers !== undefined)
      spec.initContainers = pod.spec.initContainers.map((c) => pick(c, CONTAINER));
    // Every part kept of a spec is repeated by the workload's other pods.
    sharer.shareParts(spec);
    out.spec = spec;
  }
  const s = pod.status;
  if (s !== undefined) {
    const status: NonNullable<Pod['status']> = pick(s, ['phase', 'nominatedNodeName', 'startTime']);
    const conditions = s.conditions?.filter((c) => POD_CONDITIONS.has(c.type ?? ''));
    if (conditions !== undefined && conditions.length > 0) status.conditions = sharer.value(conditions);
    shareString(status, 'phase', sharer);
    shareString(status, 'startTime', sharer);
    out.status = status;
  }
  return out;
}

/** The scheduler's view of a node (see the file's comment); `sharer` keeps repeated parts once. */
export function trimNode(node: Node, sharer: ValueSharer = new ValueSharer()): Node {
  const out: Node = {
    metadata: pick(node.metadata, ['name', 'uid', 'resourceVersion', 'labels', 'deletionTimestamp']),
  };
  if (node.apiVersion !== undefined) out.apiVersion = node.apiVersion;
  if (node.kind !== undefined) out.kind = node.kind;
  if (node.spec !== undefined) {
    const spec = pick(node.spec, ['unschedulable', 'taints']);
    shareField(spec, 'taints', sharer);
    out.spec = spec;
  }
  if (node.status !== undefined) {
    const status = pick(node.status, ['capacity', 'allocatable', 'images']);
    shareField(status, 'capacity', sharer);
    shareField(status, 'allocatable', sharer);
    shareField(status, 'images', sharer);
    out.status = status;
  }
  return out;
}

/**
 * The scheduler's informer transform: pods and nodes trimmed (their repeated parts shared through
 * one {@link ValueSharer} for all of them), every other kind without managedFields. Informers
 * fill `kind` on listed items, so it tells the kinds apart.
 */
export function createSchedulerTransform(): (obj: TypedObject) => TypedObject {
  const sharer = new ValueSharer();
  return (obj) => {
    if (obj.kind === 'Pod' && obj.apiVersion === 'v1') return trimPod(obj as Pod, sharer);
    if (obj.kind === 'Node' && obj.apiVersion === 'v1') return trimNode(obj as Node, sharer);
    return stripManagedFields(obj);
  };
}
