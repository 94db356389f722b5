/**
 * Pod volumes (`ValidateVolumes`, `validateVolumeSource`): unique DNS-label names, exactly one
 * source, and the checks of the sources people use (emptyDir, hostPath, secret, configMap,
 * persistentVolumeClaim, downwardAPI, projected, nfs, csi, ephemeral). Other sources are only
 * counted.
 */
import { duplicate, forbidden, invalid, notSupported, required, type FieldError } from '../field-error.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../formats.js';
import { has, num, obj, objects, str, type JsonObject } from '../json.js';
import { child, index } from '../path.js';
import { parseQuantity, quantitySign } from '../quantity.js';
import { validateFieldRef, validateResourceFieldRef, VOLUME_FIELD_PATHS } from './env.js';
import {
  validateLocalDescendingPath,
  validateLocalNonReservedPath,
  validatePathNoBacksteps,
} from './paths.js';

/** Volume sources in the order kube checks them (the second one found is the one reported). */
const SOURCES_IN_ORDER = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'storageos',
  'projected',
  'scaleIO',
  'csi',
  'ephemeral',
  'image',
];

const FILE_MODE_ERROR = 'must be a number between 0 and 0777 (octal), both inclusive';
const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

function checkMode(o: JsonObject, k: string, path: string, errs: FieldError[]): void {
  const mode = num(o, k);
  if (mode !== undefined && (mode > 0o777 || mode < 0))
    errs.push(invalid(child(path, k), mode, FILE_MODE_ERROR));
}

function validateKeyToPath(item: JsonObject, path: string, errs: FieldError[]): void {
  if (str(item, 'key') === '') errs.push(required(child(path, 'key')));
  const p = str(item, 'path');
  if (p === '') errs.push(required(child(path, 'path')));
  validateLocalNonReservedPath(p, child(path, 'path'), errs);
  checkMode(item, 'mode', path, errs);
}

function validateDownwardAPIItems(src: JsonObject, path: string, errs: FieldError[]): void {
  for (const item of objects(src, 'items')) {
    const p = str(item, 'path');
    if (p === '') errs.push(required(child(path, 'path')));
    validateLocalNonReservedPath(p, child(path, 'path'), errs);
    const fieldRef = obj(item, 'fieldRef');
    const resourceFieldRef = obj(item, 'resourceFieldRef');
    if (fieldRef !== undefined) {
      validateFieldRef(fieldRef, VOLUME_FIELD_PATHS, child(path, 'fieldRef'), errs);
      if (resourceFieldRef !== undefined) {
        errs.push(
          invalid(path, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'),
        );
      }
    } else if (resourceFieldRef !== undefined) {
      validateResourceFieldRef(resourceFieldRef, child(path, 'resourceFieldRef'), true, errs);
    } else {
      errs.push(required(path, 'one of fieldRef and resourceFieldRef is required'));
    }
    checkMode(item, 'mode', path, errs);
  }
}

function validateProjected(src: JsonObject, path: string, errs: FieldError[]): void {
  checkMode(src, 'defaultMode', path, errs);
  const paths = new Set<string>();
  objects(src, 'sources').forEach((source, i) => {
    const sp = index(child(path, 'sources'), i);
    let n = 0;
    for (const k of ['secret', 'configMap']) {
      const ref = obj(source, k);
      if (ref === undefined) continue;
      n++;
      if (str(ref, 'name') === '') errs.push(required(child(sp, k, 'name')));
      objects(ref, 'items').forEach((item, j) => {
        validateKeyToPath(item, index(child(sp, k, 'items'), j), errs);
        const p = str(item, 'path');
        if (p !== '' && paths.has(p))
          errs.push(invalid(path, str(ref, 'name'), 'conflicting duplicate paths'));
        paths.add(p);
      });
    }
    const downward = obj(source, 'downwardAPI');
    if (downward !== undefined) {
      n++;
      validateDownwardAPIItems(downward, child(sp, 'downwardAPI'), errs);
    }
    const token = obj(source, 'serviceAccountToken');
    if (token !== undefined) {
      n++;
      const tp = child(sp, 'serviceAccountToken');
      const exp = num(token, 'expirationSeconds');
      if (exp !== undefined && exp < 600)
        errs.push(
          invalid(child(tp, 'expirationSeconds'), exp, 'may not specify a duration less than 10 minutes'),
        );
      if (exp !== undefined && exp > 2 ** 32)
        errs.push(
          invalid(child(tp, 'expirationSeconds'), exp, 'may not specify a duration larger than 2^32 seconds'),
        );
      const p = str(token, 'path');
      if (p === '') errs.push(required(child(tp, 'path')));
      validateLocalNonReservedPath(p, child(tp, 'path'), errs);
    }
    if (has(source, 'clusterTrustBundle')) n++;
    if (n > 1) errs.push(forbidden(sp, 'may only have one volume source per projected source'));
  });
}

function validateSource(v: JsonObject, src: string, path: string, errs: FieldError[]): void {
  const s = obj(v, src);
  if (s === undefined) return;
  const p = child(path, src);
  switch (src) {
    case 'emptyDir': {
      const limit = parseQuantity(s['sizeLimit']);
      if (limit !== undefined && quantitySign(limit) < 0) {
        errs.push(forbidden(child(p, 'sizeLimit'), 'SizeLimit field must be a valid resource quantity'));
      }
      break;
    }
    case 'hostPath': {
      const hp = str(s, 'path');
      if (hp === '') {
        errs.push(required(child(p, 'path')));
        break;
      }
      validatePathNoBacksteps(hp, child(p, 'path'), errs);
      const type = str(s, 'type');
      if (!HOST_PATH_TYPES.includes(type)) errs.push(notSupported(child(p, 'type'), type, HOST_PATH_TYPES));
      break;
    }
    case 'secret':
    case 'configMap':
      if (str(s, src === 'secret' ? 'secretName' : 'name') === '') {
        errs.push(required(child(p, src === 'secret' ? 'secretName' : 'name')));
      }
      checkMode(s, 'defaultMode', p, errs);
      objects(s, 'items').forEach((item, i) => validateKeyToPath(item, index(child(p, 'items'), i), errs));
      break;
    case 'persistentVolumeClaim':
      if (str(s, 'claimName') === '') errs.push(required(child(p, 'claimName')));
      break;
    case 'downwardAPI':
      checkMode(s, 'defaultMode', p, errs);
      validateDownwardAPIItems(s, p, errs);
      break;
    case 'projected':
      validateProjected(s, p, errs);
      break;
    case 'nfs': {
      const np = str(s, 'path');
      if (str(s, 'server') === '') errs.push(required(child(p, 'server')));
      if (np === '') errs.push(required(child(p, 'path')));
      if (!np.startsWith('/')) errs.push(invalid(child(p, 'path'), np, 'must be an absolute path'));
      break;
    }
    case 'gitRepo':
      if (str(s, 'repository') === '') errs.push(required(child(p, 'repository')));
      validateLocalDescendingPath(str(s, 'directory'), child(p, 'directory'), errs);
      break;
    case 'csi': {
      const driver = str(s, 'driver');
      if (driver === '') errs.push(required(child(p, 'driver')));
      for (const msg of isDNS1123Subdomain(driver.toLowerCase()))
        errs.push(invalid(child(p, 'driver'), driver, msg));
      break;
    }
    case 'ephemeral':
      if (obj(s, 'volumeClaimTemplate') === undefined) errs.push(required(child(p, 'volumeClaimTemplate')));
      break;
    default:
      break;
  }
}

/**
 * Validates `volumes` and returns the valid ones by name, for the containers' mounts.
 * Volumes with errors are left out of the map, as kube does.
 */
export function validateVolumes(spec: JsonObject, path: string, errs: FieldError[]): Map<string, JsonObject> {
  const valid = new Map<string, JsonObject>();
  objects(spec, 'volumes').forEach((v, i) => {
    const p = index(path, i);
    const own: FieldError[] = [];
    let sources = 0;
    for (const src of SOURCES_IN_ORDER) {
      if (!has(v, src)) continue;
      if (sources > 0) {
        own.push(forbidden(child(p, src), 'may not specify more than 1 volume type'));
        continue;
      }
      sources++;
      validateSource(v, src, p, own);
    }
    if (sources === 0) own.push(required(p, 'must specify a volume type'));
    const name = str(v, 'name');
    if (name === '') own.push(required(child(p, 'name')));
    else for (const msg of isDNS1123Label(name)) own.push(invalid(child(p, 'name'), name, msg));
    if (valid.has(name)) own.push(duplicate(child(p, 'name'), name));
    if (own.length === 0) valid.set(name, v);
    else errs.push(...own);
  });
  return valid;
}
