/**
 * What the local-path provisioner makes: its default StorageClass, a claim's volume (a hostPath
 * directory on the selected node, `DirectoryOrCreate` so the node agent makes it on first mount,
 * pinned there by node affinity), and the helper pod that removes a released volume's directory
 * on that node.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import type { StorageClass } from '../../api/types/storage-v1.js';
import { ANN_DEFAULT_CLASS, ANN_DYNAMICALLY_PROVISIONED } from '../persistentvolume/annotations.js';

/** The provisioner's name (the StorageClass's `provisioner`). */
export const PROVISIONER = 'capstan.dev/local-path';
/** The class it creates. */
export const CLASS_NAME = 'local-path';
/** Where volumes live on the node, under the node agent's `--root-dir` (class parameter `nodePath`). */
export const DEFAULT_NODE_PATH = '/var/lib/kubelet/local-path';
/** The image of the helper pod that removes a directory. */
export const HELPER_IMAGE = 'busybox:1.36';
/** Helper pods run here. */
export const HELPER_NAMESPACE = 'kube-system';
const HOSTNAME = 'kubernetes.io/hostname';

/** The default StorageClass (`isDefault`: no other class is the default yet). */
export function localPathClass(isDefault: boolean): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: CLASS_NAME,
      ...(isDefault ? { annotations: { [ANN_DEFAULT_CLASS]: 'true' } } : {}),
    },
    provisioner: PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    parameters: { nodePath: DEFAULT_NODE_PATH },
  };
}

/** The volume's name for a claim (external provisioners' convention: `pvc-<claim uid>`). */
export function volumeName(pvc: PersistentVolumeClaim): string {
  return `pvc-${pvc.metadata.uid ?? ''}`;
}

/** The node's `kubernetes.io/hostname` label, or its name. */
export function hostnameOf(node: Node | undefined, nodeName: string): string {
  return node?.metadata.labels?.[HOSTNAME] ?? nodeName;
}

/** The volume provisioned for `pvc` on the node whose hostname label is `hostname`. */
export function provisionedVolume(
  pvc: PersistentVolumeClaim,
  cls: StorageClass,
  hostname: string,
): PersistentVolume {
  const name = volumeName(pvc);
  const base = (cls.parameters?.['nodePath'] ?? DEFAULT_NODE_PATH).replace(/\/+$/, '');
  const dir = `${name}_${pvc.metadata.namespace ?? ''}_${pvc.metadata.name ?? ''}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [ANN_DYNAMICALLY_PROVISIONED]: PROVISIONER } },
    spec: {
      capacity: { storage: pvc.spec?.resources?.requests?.['storage'] ?? '0' },
      accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      storageClassName: cls.metadata.name ?? '',
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      ...(cls.mountOptions === undefined ? {} : { mountOptions: cls.mountOptions }),
      hostPath: { path: `${base}/${dir}`, type: 'DirectoryOrCreate' },
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: pvc.metadata.namespace ?? '',
        name: pvc.metadata.name ?? '',
        uid: pvc.metadata.uid ?? '',
        resourceVersion: pvc.metadata.resourceVersion ?? '',
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME, operator: 'In', values: [hostname] }] }],
        },
      },
    },
  };
}

/** The hostname a provisioned volume is pinned to (undefined: not one of ours). */
export function volumeHostname(pv: PersistentVolume): string | undefined {
  const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0];
  return term?.matchExpressions?.find((e) => e.key === HOSTNAME)?.values?.[0];
}

/**
 * The directory entry of a volume this provisioner made (`<pv name>_<namespace>_<claim>`), or
 * undefined for any other path: a volume that merely carries our annotation must never send the
 * helper pod to remove an arbitrary directory.
 */
export function ownedEntry(pv: PersistentVolume): { parent: string; entry: string } | undefined {
  const path = pv.spec?.hostPath?.path ?? '';
  const slash = path.lastIndexOf('/');
  if (slash < 0) return undefined;
  const entry = path.slice(slash + 1);
  if (!entry.startsWith(`${pv.metadata.name ?? ''}_`) || !/^pvc-[A-Za-z0-9._-]+$/.test(entry))
    return undefined;
  return { parent: slash === 0 ? '/' : path.slice(0, slash), entry };
}

/** The helper pod's name for a volume. */
export function helperPodName(pv: PersistentVolume): string {
  return `helper-pod-delete-${pv.metadata.name ?? ''}`;
}

/**
 * The pod that removes the volume's directory on `nodeName`: it mounts the parent directory and
 * removes the volume's entry, so it needs no privilege beyond the hostPath mount.
 */
export function deleteHelperPod(
  pv: PersistentVolume,
  owned: { parent: string; entry: string },
  nodeName: string,
): Pod {
  const { parent, entry } = owned;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: helperPodName(pv),
      namespace: HELPER_NAMESPACE,
      labels: { 'app.kubernetes.io/managed-by': 'local-path-provisioner' },
      annotations: { [ANN_DYNAMICALLY_PROVISIONED]: PROVISIONER },
    },
    spec: {
      nodeName,
      restartPolicy: 'Never',
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: 'helper-pod',
          image: HELPER_IMAGE,
          command: ['rm', '-rf', `/data/${entry}`],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', hostPath: { path: parent, type: 'DirectoryOrCreate' } }],
    },
  };
}
