/**
 * persistentVolumeClaim volumes on this node, for the PersistentVolumes a node can use without an
 * attach step: `hostPath` (with its `type` check) and `local` (its path must exist). The claim
 * must be Bound to a volume whose `claimRef` names it back; kubelet's wording is kept for each
 * failure. The pod's containers mount the volume's path itself (kubelet bind-mounts a local
 * volume under the pod directory first; the agent makes no host mount for it).
 */
import type { PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import { PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS, isNotFound, type Client } from '../../client/index.js';
import { checkHostPath } from './hostpath.js';
import type { MountedVolume } from './mounts.js';

/** Reads claims and volumes (undefined: not found). */
export interface ClaimLookup {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  volume(name: string): Promise<PersistentVolume | undefined>;
}

/** A {@link ClaimLookup} over the API. */
export function apiClaimLookup(client: Client): ClaimLookup {
  const missing = (err: unknown): undefined => {
    if (isNotFound(err)) return undefined;
    throw err;
  };
  return {
    claim: (ns, name) =>
      client
        .resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS)
        .get(name, { namespace: ns })
        .catch(missing),
    volume: (name) => client.resource<PersistentVolume>(PERSISTENT_VOLUMES).get(name).catch(missing),
  };
}

/** Where a claim's volume is on this node; throws with kubelet's wording. */
export async function claimVolume(
  lookup: ClaimLookup | undefined,
  namespace: string,
  claimName: string,
  readOnly: boolean,
): Promise<MountedVolume> {
  const claim = lookup ? await lookup.claim(namespace, claimName) : undefined;
  if (!claim) throw new Error(`persistentvolumeclaim "${claimName}" not found`);
  const pvName = claim.spec?.volumeName ?? '';
  const phase = claim.status?.phase ?? '';
  if (phase !== 'Bound' || pvName === '') {
    throw new Error(
      `PVC ${namespace}/${claimName} has non-bound phase (${JSON.stringify(phase)}) or empty pvc.Spec.VolumeName (${JSON.stringify(pvName)})`,
    );
  }
  const pv = await lookup?.volume(pvName);
  if (!pv) throw new Error(`persistentvolume "${pvName}" not found`);
  const ref = pv.spec?.claimRef;
  if (ref?.uid !== claim.metadata.uid) {
    throw new Error(
      `the PV's claimRef (${ref?.namespace ?? ''}/${ref?.name ?? ''} uid ${ref?.uid ?? ''}) does not point to the PVC ${namespace}/${claimName} (uid ${claim.metadata.uid ?? ''})`,
    );
  }
  const ro = readOnly;
  if (pv.spec?.hostPath) {
    const path = pv.spec.hostPath.path ?? '';
    await checkHostPath(path, pv.spec.hostPath.type);
    return { hostPath: path, readOnly: ro };
  }
  if (pv.spec?.local) {
    const path = pv.spec.local.path ?? '';
    await checkHostPath(path, 'Directory').catch(async () => checkHostPath(path, 'File'));
    return { hostPath: path, readOnly: ro };
  }
  throw new Error(`persistentvolume "${pvName}": only hostPath and local volumes are supported by this node`);
}
