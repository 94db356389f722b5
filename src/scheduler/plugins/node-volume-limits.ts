/**
 * NodeVolumeLimits (kube's CSI limits): a node takes no more CSI volumes of a driver than its
 * CSINode allows (`spec.drivers[].allocatable.count`). Volumes are the pod's claims (and generic
 * ephemeral volumes' claims) resolved to a driver and volume handle: a bound claim through its
 * PV's `spec.csi`, an unbound one through its StorageClass's provisioner (handle `<ns>-<claim>`).
 * A volume already attached to the node (another pod uses it) is not counted twice. A node
 * without a CSINode, or a driver without a count, has no limit.
 */
import type { PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import type { ClusterLister, Handle, Plugin } from '../framework/types.js';
import { Code, SKIP, unschedulable } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import { PLUGIN } from './names.js';

/** kube's reason (ErrReasonMaxVolumeCountExceeded). */
export const MAX_VOLUME_COUNT_MESSAGE = 'node(s) exceed max volume count';

/** `driver\0handle` → driver of a pod's attachable CSI volumes. */
type Volumes = Map<string, string>;

class MissingClaimError extends Error {}

function driverOf(lister: ClusterLister, pvc: PersistentVolumeClaim): [string, string] | undefined {
  const pvName = pvc.spec?.volumeName ?? '';
  if (pvName === '') {
    const className = pvc.spec?.storageClassName ?? '';
    const provisioner = className === '' ? '' : (lister.storageClass(className)?.provisioner ?? '');
    if (provisioner === '') return undefined;
    return [provisioner, `${pvc.metadata.namespace ?? ''}-${pvc.metadata.name ?? ''}`];
  }
  const csi = lister.pv(pvName)?.spec?.csi;
  const driver = csi?.driver ?? '';
  const volumeHandle = csi?.volumeHandle ?? '';
  if (driver === '' || volumeHandle === '') return undefined;
  return [driver, volumeHandle];
}

/**
 * The pod's attachable CSI volumes. @throws MissingClaimError when the new pod's claim is
 * missing (kube's error); an existing pod's missing claim is not counted.
 */
function attachable(lister: ClusterLister, pod: Pod, isNew: boolean): Volumes {
  const out: Volumes = new Map();
  const ns = pod.metadata.namespace ?? '';
  for (const v of pod.spec?.volumes ?? []) {
    let claim: string | undefined;
    if (v.persistentVolumeClaim !== undefined) claim = v.persistentVolumeClaim.claimName;
    else if (v.ephemeral !== undefined) claim = `${pod.metadata.name ?? ''}-${v.name}`;
    if (claim === undefined || claim === '') continue;
    const pvc = lister.pvc(ns, claim);
    if (pvc === undefined) {
      if (isNew) throw new MissingClaimError(`looking up PVC ${ns}/${claim}: not found`);
      continue;
    }
    const d = driverOf(lister, pvc);
    if (d !== undefined) out.set(`${d[0]}\0${d[1]}`, d[0]);
  }
  return out;
}

/** The plugin. */
export function nodeVolumeLimits(_args: Record<string, unknown>, handle: Handle): Plugin {
  const lister = handle.lister;
  return {
    name: PLUGIN.NodeVolumeLimits,
    events: [
      { resource: 'Pod', action: 'Delete' },
      { resource: 'CSINode', action: '*' },
      { resource: 'PersistentVolumeClaim', action: 'Add' },
      { resource: 'PersistentVolume', action: 'Add' },
    ],
    preFilter(_state, pod) {
      const vols = pod.pod.spec?.volumes ?? [];
      if (!vols.some((v) => v.persistentVolumeClaim !== undefined || v.ephemeral !== undefined))
        return { status: SKIP };
      return undefined;
    },
    filter(_state, pod, node: NodeInfo) {
      let wanted: Volumes;
      try {
        wanted = attachable(lister, pod.pod, true);
      } catch (err) {
        return { code: Code.Error, reasons: [err instanceof Error ? err.message : String(err)] };
      }
      if (wanted.size === 0) return undefined;
      const drivers = lister.csiNode(node.name)?.spec?.drivers ?? [];
      const limits = new Map<string, number>();
      for (const d of drivers) {
        const count = d.allocatable?.count;
        if (count !== undefined && count !== null && d.name !== undefined) limits.set(d.name, count);
      }
      if (limits.size === 0) return undefined;
      const attached: Volumes = new Map();
      for (const other of node.pods.values()) {
        for (const [k, driver] of attachable(lister, other.pod, false)) attached.set(k, driver);
      }
      const used = new Map<string, number>();
      for (const driver of attached.values()) used.set(driver, (used.get(driver) ?? 0) + 1);
      const adding = new Map<string, number>();
      for (const [k, driver] of wanted) {
        if (!attached.has(k)) adding.set(driver, (adding.get(driver) ?? 0) + 1);
      }
      for (const [driver, n] of adding) {
        const max = limits.get(driver);
        if (max !== undefined && (used.get(driver) ?? 0) + n > max)
          return unschedulable(MAX_VOLUME_COUNT_MESSAGE);
      }
      return undefined;
    },
  };
}
