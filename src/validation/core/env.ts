/**
 * Container environment: `env` (names, `valueFrom` sources and downward-API field paths) and
 * `envFrom`, as kube's `ValidateEnv` and `ValidateEnvFrom`.
 */
import { invalid, notSupported, required, type FieldError } from '../field-error.js';
import { isConfigMapKey, isDNS1123Subdomain, isEnvVarName, isQualifiedName } from '../formats.js';
import { obj, objects, str, type JsonObject } from '../json.js';
import { child, index } from '../path.js';
import { checkQuantity } from './resources.js';

/** Downward-API field paths a container env var may read (kube's sorted list). */
const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

/** Downward-API field paths a volume file may read. */
export const VOLUME_FIELD_PATHS = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
];

/** Every pod field label kube's v1 conversion knows; others fail to convert. */
const CONVERTIBLE = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

const RESOURCE_FIELD_PATHS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];

/** `ObjectFieldSelector` against the allowed field paths (`validateObjectFieldSelector`). */
export function validateFieldRef(
  ref: JsonObject,
  allowed: readonly string[],
  path: string,
  errs: FieldError[],
): void {
  if (str(ref, 'apiVersion') === '') {
    errs.push(required(child(path, 'apiVersion')));
    return;
  }
  const fieldPath = str(ref, 'fieldPath');
  if (fieldPath === '') {
    errs.push(required(child(path, 'fieldPath')));
    return;
  }
  const sub = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(fieldPath);
  const base = sub?.[1] ?? fieldPath;
  if (!CONVERTIBLE.has(base) && !/^[^[]+\[.*\]$/.test(fieldPath)) {
    errs.push(
      invalid(
        child(path, 'fieldPath'),
        fieldPath,
        `error converting fieldPath: field label not supported: ${fieldPath}`,
      ),
    );
    return;
  }
  if (sub !== null) {
    const k = sub[1] === 'metadata.annotations' ? (sub[2] ?? '').toLowerCase() : (sub[2] ?? '');
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg));
    return;
  }
  if (/\[.*\]$/.test(fieldPath)) {
    errs.push(invalid(path, fieldPath.slice(0, fieldPath.indexOf('[')), 'does not support subscript'));
    return;
  }
  if (!allowed.includes(fieldPath)) errs.push(notSupported(child(path, 'fieldPath'), fieldPath, allowed));
}

/** `ResourceFieldSelector`; `volume` requires a container name. */
export function validateResourceFieldRef(
  ref: JsonObject,
  path: string,
  volume: boolean,
  errs: FieldError[],
): void {
  const resource = str(ref, 'resource');
  if (volume && str(ref, 'containerName') === '') {
    errs.push(required(child(path, 'containerName')));
  } else if (resource === '') {
    errs.push(required(child(path, 'resource')));
  } else if (
    !RESOURCE_FIELD_PATHS.includes(resource) &&
    !resource.startsWith('requests.hugepages-') &&
    !resource.startsWith('limits.hugepages-')
  ) {
    errs.push(notSupported(child(path, 'resource'), resource, RESOURCE_FIELD_PATHS));
  }
  if (ref['divisor'] !== undefined && ref['divisor'] !== null)
    checkQuantity(ref['divisor'], child(path, 'divisor'), errs);
}

function validateKeySelector(sel: JsonObject, path: string, errs: FieldError[]): void {
  const name = str(sel, 'name');
  for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(child(path, 'name'), name, msg));
  const k = str(sel, 'key');
  if (k === '') errs.push(required(child(path, 'key')));
  else for (const msg of isConfigMapKey(k)) errs.push(invalid(child(path, 'key'), k, msg));
}

function validateValueFrom(env: JsonObject, path: string, errs: FieldError[]): void {
  const vf = obj(env, 'valueFrom');
  if (vf === undefined) return;
  let sources = 0;
  const fieldRef = obj(vf, 'fieldRef');
  if (fieldRef !== undefined) {
    sources++;
    validateFieldRef(fieldRef, ENV_FIELD_PATHS, child(path, 'fieldRef'), errs);
  }
  const resourceFieldRef = obj(vf, 'resourceFieldRef');
  if (resourceFieldRef !== undefined) {
    sources++;
    validateResourceFieldRef(resourceFieldRef, child(path, 'resourceFieldRef'), false, errs);
  }
  for (const k of ['configMapKeyRef', 'secretKeyRef']) {
    const sel = obj(vf, k);
    if (sel === undefined) continue;
    sources++;
    validateKeySelector(sel, child(path, k), errs);
  }
  if (sources === 0) {
    errs.push(
      invalid(
        path,
        '',
        'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      ),
    );
  } else if (str(env, 'value') !== '') {
    errs.push(invalid(path, '', 'may not be specified when `value` is not empty'));
  } else if (sources > 1) {
    errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  }
}

/** `env`: names required and printable, one `valueFrom` source. */
export function validateEnv(container: JsonObject, path: string, errs: FieldError[]): void {
  objects(container, 'env').forEach((env, i) => {
    const p = index(path, i);
    const name = str(env, 'name');
    if (name === '') errs.push(required(child(p, 'name')));
    else for (const msg of isEnvVarName(name)) errs.push(invalid(child(p, 'name'), name, msg));
    validateValueFrom(env, child(p, 'valueFrom'), errs);
  });
}

/** `envFrom`: exactly one of configMapRef and secretRef, names valid, prefixes printable. */
export function validateEnvFrom(container: JsonObject, path: string, errs: FieldError[]): void {
  objects(container, 'envFrom').forEach((src, i) => {
    const p = index(path, i);
    const prefix = str(src, 'prefix');
    if (prefix !== '')
      for (const msg of isEnvVarName(prefix)) errs.push(invalid(child(p, 'prefix'), prefix, msg));
    let sources = 0;
    for (const k of ['configMapRef', 'secretRef']) {
      const ref = obj(src, k);
      if (ref === undefined) continue;
      sources++;
      const name = str(ref, 'name');
      if (name === '') {
        errs.push(required(child(p, k, 'name')));
      } else {
        const masked = name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
        for (const msg of isDNS1123Subdomain(masked)) errs.push(invalid(child(p, k, 'name'), name, msg));
      }
    }
    if (sources === 0) errs.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1)
      errs.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
}
