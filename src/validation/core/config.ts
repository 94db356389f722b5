/**
 * ConfigMap and Secret (`ValidateConfigMap`, `ValidateSecret` and their updates): valid keys,
 * at most 1 MiB of data, type-specific required keys, immutability.
 */
import { forbidden, IMMUTABLE, invalid, required, tooLong, type FieldError } from '../field-error.js';
import { byteLength, isConfigMapKey } from '../formats.js';
import { obj, semanticEqual, str, type JsonObject } from '../json.js';
import { key } from '../path.js';

/** kube's `MaxSecretSize` (also the ConfigMap limit): 1 MiB. */
export const MAX_DATA_SIZE = 1024 * 1024;

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The decoded length of a base64 value, or the byte offset of the first bad input (Go's
 * `illegal base64 data at input byte N`).
 */
export function base64Length(v: string): { length: number } | { badAt: number } {
  if (v.length % 4 !== 0 || !BASE64_RE.test(v)) {
    const bad = v.search(/[^A-Za-z0-9+/=]/);
    return { badAt: bad >= 0 ? bad : Math.max(0, v.length - (v.length % 4 === 0 ? 1 : v.length % 4)) };
  }
  const pad = v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0;
  return { length: (v.length / 4) * 3 - pad };
}

function checkBinaryValues(
  data: JsonObject | undefined,
  path: string,
  errs: FieldError[],
  redact: boolean,
): number {
  let total = 0;
  if (data === undefined) return 0;
  for (const [k, v] of Object.entries(data)) {
    for (const msg of isConfigMapKey(k)) errs.push(invalid(key(path, k), k, msg));
    if (typeof v !== 'string') continue;
    const decoded = base64Length(v);
    if ('badAt' in decoded) {
      errs.push(
        invalid(
          key(path, k),
          redact ? '<secret contents redacted>' : v,
          `illegal base64 data at input byte ${decoded.badAt}`,
        ),
      );
    } else {
      total += decoded.length;
    }
  }
  return total;
}

/** A ConfigMap: keys valid and not repeated across `data` and `binaryData`, at most 1 MiB. */
export function validateConfigMap(cm: JsonObject, errs: FieldError[]): void {
  const data = obj(cm, 'data');
  const binary = obj(cm, 'binaryData');
  let total = 0;
  for (const [k, v] of Object.entries(data ?? {})) {
    for (const msg of isConfigMapKey(k)) errs.push(invalid(key('data', k), k, msg));
    if (binary !== undefined && k in binary)
      errs.push(invalid(key('data', k), k, 'duplicate of key present in binaryData'));
    if (typeof v === 'string') total += byteLength(v);
  }
  total += checkBinaryValues(binary, 'binaryData', errs, false);
  // kube reports the size of the whole object at the empty path.
  if (total > MAX_DATA_SIZE) errs.push(tooLong('', MAX_DATA_SIZE));
}

function immutableData(o: JsonObject, old: JsonObject, keys: readonly string[], errs: FieldError[]): void {
  if (old['immutable'] !== true) return;
  if (o['immutable'] !== true)
    errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const k of keys) {
    if (!semanticEqual(o[k], old[k])) errs.push(forbidden(k, 'field is immutable when `immutable` is set'));
  }
}

/** A ConfigMap on update: nothing may change once `immutable` is true. */
export function validateConfigMapUpdate(cm: JsonObject, old: JsonObject, errs: FieldError[]): void {
  immutableData(cm, old, ['data', 'binaryData'], errs);
  validateConfigMap(cm, errs);
}

/** Keys each typed Secret must hold. */
function validateSecretType(secret: JsonObject, data: JsonObject, errs: FieldError[]): void {
  const type = str(secret, 'type');
  const need = (k: string): void => {
    if (!(k in data)) errs.push(required(key('data', k)));
  };
  switch (type) {
    case 'kubernetes.io/service-account-token': {
      const annotations = obj(obj(secret, 'metadata'), 'annotations');
      if (str(annotations, 'kubernetes.io/service-account.name') === '') {
        errs.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
      }
      break;
    }
    case 'kubernetes.io/dockercfg':
      need('.dockercfg');
      break;
    case 'kubernetes.io/dockerconfigjson':
      need('.dockerconfigjson');
      break;
    case 'kubernetes.io/basic-auth':
      if (!('username' in data) && !('password' in data)) {
        need('username');
        need('password');
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (str(data, 'ssh-privatekey') === '') errs.push(required(key('data', 'ssh-privatekey')));
      break;
    case 'kubernetes.io/tls':
      need('tls.crt');
      need('tls.key');
      break;
    default:
      break;
  }
}

/** A Secret (after `stringData` was merged by defaulting): keys, size of decoded data, type keys. */
export function validateSecret(secret: JsonObject, errs: FieldError[]): void {
  const data = obj(secret, 'data') ?? {};
  const total = checkBinaryValues(data, 'data', errs, true);
  if (total > MAX_DATA_SIZE) errs.push(tooLong('data', MAX_DATA_SIZE));
  validateSecretType(secret, data, errs);
}

/** A Secret on update: the type never changes; nothing changes once `immutable` is true. */
export function validateSecretUpdate(secret: JsonObject, old: JsonObject, errs: FieldError[]): void {
  if (str(secret, 'type') !== str(old, 'type')) errs.push(invalid('type', str(secret, 'type'), IMMUTABLE));
  immutableData(secret, old, ['data'], errs);
  validateSecret(secret, errs);
}
