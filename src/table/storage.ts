/** Printers of `storage.k8s.io`. */
import type { KubeObject } from '../api/object.js';
import { AGE, column, columns, NAME } from './columns.js';
import {
  list,
  obj,
  optBool,
  optStr,
  str,
  stringMap,
  objectAge as age,
  objectName as name,
} from './fields.js';
import type { TablePrinter } from './index.js';

/** Whether an annotation marks the object as the cluster default (`"true"` exactly). */
function isDefault(o: KubeObject, ...annotations: string[]): boolean {
  const values = stringMap(o.metadata.annotations);
  return annotations.some((key) => values.get(key) === 'true');
}

const STORAGE_CLASS: TablePrinter = {
  columns: columns(
    NAME,
    column('Provisioner', 'string', 'Volume plugin that provisions volumes of the class.'),
    column('ReclaimPolicy', 'string', 'Reclaim policy of provisioned volumes.'),
    column('VolumeBindingMode', 'string', 'When volumes are bound and provisioned.'),
    column('AllowVolumeExpansion', 'string', 'Whether volumes of the class can be expanded.'),
    AGE,
  ),
  cells(sc, now) {
    const defaultClass = isDefault(
      sc,
      'storageclass.kubernetes.io/is-default-class',
      'storageclass.beta.kubernetes.io/is-default-class',
    );
    return [
      defaultClass ? `${name(sc)} (default)` : name(sc),
      str(sc['provisioner']),
      optStr(sc['reclaimPolicy']) ?? 'Delete',
      optStr(sc['volumeBindingMode']) ?? 'Immediate',
      optBool(sc['allowVolumeExpansion']) ?? false,
      age(sc, now),
    ];
  },
};

const VOLUME_ATTRIBUTES_CLASS: TablePrinter = {
  columns: columns(NAME, column('DriverName', 'string', 'CSI driver of the class.'), AGE),
  cells(vac, now) {
    const defaultClass = isDefault(vac, 'volumeattributesclass.kubernetes.io/is-default-class');
    return [defaultClass ? `${name(vac)} (default)` : name(vac), str(vac['driverName']), age(vac, now)];
  },
};

const CSI_DRIVER: TablePrinter = {
  columns: columns(
    NAME,
    column('AttachRequired', 'boolean', 'Whether volumes need an attach operation.'),
    column('PodInfoOnMount', 'boolean', 'Whether pod information is passed on mount.'),
    column('StorageCapacity', 'boolean', 'Whether the driver reports storage capacity.'),
    column('TokenRequests', 'string', 'Audiences of service account tokens passed to the driver.'),
    column('RequiresRepublish', 'boolean', 'Whether volumes are periodically republished.'),
    column('Modes', 'string', 'Volume lifecycle modes the driver supports.'),
    AGE,
  ),
  cells(driver, now) {
    const spec = obj(driver['spec']);
    const tokenRequests = spec['tokenRequests'];
    const modes = list(spec['volumeLifecycleModes']).map(str).join(',');
    return [
      name(driver),
      optBool(spec['attachRequired']) ?? true,
      optBool(spec['podInfoOnMount']) ?? false,
      optBool(spec['storageCapacity']) ?? false,
      Array.isArray(tokenRequests) ? tokenRequests.map((t) => str(obj(t)['audience'])).join(',') : '<unset>',
      optBool(spec['requiresRepublish']) ?? false,
      modes === '' ? '<none>' : modes,
      age(driver, now),
    ];
  },
};

const CSI_NODE: TablePrinter = {
  columns: columns(NAME, column('Drivers', 'integer', 'Number of CSI drivers registered on the node.'), AGE),
  cells: (node, now) => [name(node), list(obj(node['spec'])['drivers']).length, age(node, now)],
};

const VOLUME_ATTACHMENT: TablePrinter = {
  columns: columns(
    NAME,
    column('Attacher', 'string', 'Volume driver that attaches the volume.', 0, 'name'),
    column('PV', 'string', 'Persistent volume being attached.'),
    column('Node', 'string', 'Node the volume is attached to.'),
    column('Attached', 'boolean', 'Whether the attach operation succeeded.'),
    AGE,
  ),
  cells(va, now) {
    const spec = obj(va['spec']);
    return [
      name(va),
      str(spec['attacher']),
      str(obj(spec['source'])['persistentVolumeName']),
      str(spec['nodeName']),
      obj(va['status'])['attached'] === true,
      age(va, now),
    ];
  },
};

const CSI_STORAGE_CAPACITY: TablePrinter = {
  columns: columns(
    NAME,
    column('StorageClassName', 'string', 'Storage class the capacity applies to.'),
    column('Capacity', 'string', 'Available capacity.'),
  ),
  cells: (cap) => [name(cap), str(cap['storageClassName']), optStr(cap['capacity']) ?? '<unset>'],
};

/** `storage.k8s.io` printers by resource. */
export const STORAGE_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  storageclasses: STORAGE_CLASS,
  volumeattributesclasses: VOLUME_ATTRIBUTES_CLASS,
  csidrivers: CSI_DRIVER,
  csinodes: CSI_NODE,
  volumeattachments: VOLUME_ATTACHMENT,
  csistoragecapacities: CSI_STORAGE_CAPACITY,
});
