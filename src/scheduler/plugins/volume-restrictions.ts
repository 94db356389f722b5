/**
 * VolumeRestrictions: a ReadWriteOncePod claim used by another pod blocks the pod (preemption may
 * free it); inline GCE PD, AWS EBS, RBD and iSCSI disks cannot be mounted twice on one node
 * (read-only GCE PDs excepted).
 */
import type { Volume } from '../../api/types/core-v1.js';
import type { Handle, Plugin } from '../framework/types.js';
import { SKIP, unschedulable } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import { PLUGIN } from './names.js';

function conflicts(a: Volume, b: Volume): boolean {
  if (a.gcePersistentDisk !== undefined && b.gcePersistentDisk !== undefined) {
    return (
      a.gcePersistentDisk.pdName === b.gcePersistentDisk.pdName &&
      !(a.gcePersistentDisk.readOnly === true && b.gcePersistentDisk.readOnly === true)
    );
  }
  if (a.awsElasticBlockStore !== undefined && b.awsElasticBlockStore !== undefined) {
    return a.awsElasticBlockStore.volumeID === b.awsElasticBlockStore.volumeID;
  }
  if (a.iscsi !== undefined && b.iscsi !== undefined) {
    return a.iscsi.iqn === b.iscsi.iqn && !(a.iscsi.readOnly === true && b.iscsi.readOnly === true);
  }
  if (a.rbd !== undefined && b.rbd !== undefined) {
    const monsA = new Set(a.rbd.monitors ?? []);
    const shared = (b.rbd.monitors ?? []).some((m) => monsA.has(m));
    return (
      shared &&
      (a.rbd.pool ?? 'rbd') === (b.rbd.pool ?? 'rbd') &&
      a.rbd.image === b.rbd.image &&
      !(a.rbd.readOnly === true && b.rbd.readOnly === true)
    );
  }
  return false;
}

const STATE = `${PLUGIN.VolumeRestrictions}/rwop`;
const RWOP_MESSAGE =
  'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode';

function diskVolumes(vols: readonly Volume[] | undefined): Volume[] {
  return (vols ?? []).filter((v) => v.gcePersistentDisk ?? v.awsElasticBlockStore ?? v.iscsi ?? v.rbd);
}

/** The plugin. */
export function volumeRestrictions(_args: Record<string, unknown>, handle: Handle): Plugin {
  return {
    name: PLUGIN.VolumeRestrictions,
    events: [
      { resource: 'Pod', action: 'Delete' },
      { resource: 'PersistentVolumeClaim', action: '*' },
      { resource: 'Node', action: 'Add' },
    ],
    preFilter(state, pod, snap) {
      const disks = diskVolumes(pod.pod.spec?.volumes);
      const rwop = pod.claims.filter((key) => {
        const [ns = '', name = ''] = key.split('/');
        return (handle.lister.pvc(ns, name)?.spec?.accessModes ?? []).includes('ReadWriteOncePod');
      });
      if (disks.length === 0 && rwop.length === 0) return { status: SKIP };
      let users = 0;
      if (rwop.length > 0) {
        for (const node of snap.nodes) {
          for (const key of rwop) users += node.pvcRefCounts.get(key) ?? 0;
        }
      }
      state.write(STATE, { users, disks });
      return undefined;
    },
    filter(state, _pod, node: NodeInfo) {
      const s = state.read<{ users: number; disks: Volume[] }>(STATE);
      if (s === undefined) return undefined;
      if (s.users > 0) return unschedulable(RWOP_MESSAGE);
      if (s.disks.length === 0) return undefined;
      for (const other of node.pods.values()) {
        for (const v of diskVolumes(other.pod.spec?.volumes)) {
          if (s.disks.some((d) => conflicts(d, v))) return unschedulable('node(s) had no available disk');
        }
      }
      return undefined;
    },
  };
}
