/**
 * Cluster infrastructure kinds: scheduling.k8s.io PriorityClass, storage.k8s.io StorageClass
 * and VolumeAttachment, node.k8s.io RuntimeClass, discovery.k8s.io EndpointSlice.
 */
import {
  forbidden,
  IMMUTABLE,
  invalid,
  notSupported,
  required,
  tooLong,
  type FieldError,
} from './field-error.js';
import {
  byteLength,
  ipErrors,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPortNum,
} from './formats.js';
import { has, num, obj, objects, semanticEqual, str, strings, type JsonObject } from './json.js';
import { validateLabels } from './meta.js';
import { child, index } from './path.js';
import { validateTolerations } from './core/scheduling.js';
import { validateResourceList } from './core/resources.js';

const SYSTEM_PRIORITY_CLASSES = new Map([
  ['system-node-critical', 2000001000],
  ['system-cluster-critical', 2000000000],
]);

/** A PriorityClass: user values up to one billion, `system-` names reserved, immutable value. */
export function validatePriorityClass(pc: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const name = str(obj(pc, 'metadata'), 'name');
  const value = num(pc, 'value') ?? 0;
  if (name.startsWith('system-')) {
    const expected = SYSTEM_PRIORITY_CLASSES.get(name);
    const why =
      expected === undefined
        ? `${name} is not a known system priority class`
        : value !== expected
          ? `value of ${name} PriorityClass must be ${expected}`
          : pc['globalDefault'] === true
            ? `globalDefault of ${name} PriorityClass must be false`
            : '';
    if (why !== '') {
      errs.push(
        forbidden(
          'metadata.name',
          `priority class names with 'system-' prefix are reserved for system use only. error: ${why}`,
        ),
      );
    }
  } else if (value > 1000000000) {
    errs.push(forbidden('value', 'maximum allowed value of a user defined priority is 1000000000'));
  }
  const policy = pc['preemptionPolicy'];
  if (policy !== undefined && policy !== null) {
    if (policy === '') errs.push(required('preemptionPolicy'));
    else if (policy !== 'PreemptLowerPriority' && policy !== 'Never') {
      errs.push(notSupported('preemptionPolicy', policy, ['PreemptLowerPriority', 'Never']));
    }
  }
  if (old !== undefined) {
    if (value !== (num(old, 'value') ?? 0)) errs.push(forbidden('value', 'may not be changed in an update.'));
    if (!semanticEqual(pc['preemptionPolicy'], old['preemptionPolicy']))
      errs.push(invalid('preemptionPolicy', policy ?? null, IMMUTABLE));
  }
}

/** A StorageClass: provisioner, parameters, reclaim and binding modes; most fields immutable. */
export function validateStorageClass(sc: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const provisioner = str(sc, 'provisioner');
  if (provisioner === '') {
    errs.push(required('provisioner'));
  } else {
    for (const msg of isQualifiedName(provisioner.toLowerCase()))
      errs.push(invalid('provisioner', provisioner, msg));
    if (byteLength(provisioner) > 63) errs.push(tooLong('provisioner', 63));
  }
  const params = obj(sc, 'parameters') ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(params)) {
    if (k === '') errs.push(invalid('parameters', k, 'field can not be empty.'));
    size += byteLength(k) + (typeof v === 'string' ? byteLength(v) : 0);
  }
  if (size > 256 * 1024) errs.push(tooLong('parameters', 256 * 1024));
  const reclaim = sc['reclaimPolicy'];
  if (reclaim !== undefined && reclaim !== null && reclaim !== 'Delete' && reclaim !== 'Retain') {
    errs.push(notSupported('reclaimPolicy', reclaim, ['Delete', 'Retain']));
  }
  const binding = sc['volumeBindingMode'];
  if (binding === undefined || binding === null) errs.push(required('volumeBindingMode'));
  else if (binding !== 'Immediate' && binding !== 'WaitForFirstConsumer') {
    errs.push(notSupported('volumeBindingMode', binding, ['Immediate', 'WaitForFirstConsumer']));
  }
  if (old !== undefined) {
    if (!semanticEqual(sc['parameters'], old['parameters']))
      errs.push(forbidden('parameters', 'updates to parameters are forbidden.'));
    if (provisioner !== str(old, 'provisioner'))
      errs.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
    if (!semanticEqual(reclaim, old['reclaimPolicy']))
      errs.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
    if (!semanticEqual(binding, old['volumeBindingMode']))
      errs.push(invalid('volumeBindingMode', binding ?? null, IMMUTABLE));
  }
}

/** A VolumeAttachment: attacher, node and exactly one source; the spec is immutable. */
export function validateVolumeAttachment(
  va: JsonObject,
  old: JsonObject | undefined,
  errs: FieldError[],
): void {
  const spec = obj(va, 'spec') ?? {};
  if (str(spec, 'attacher') === '') errs.push(required('spec.attacher'));
  const node = str(spec, 'nodeName');
  if (node === '') errs.push(required('spec.nodeName'));
  else for (const msg of isDNS1123Subdomain(node)) errs.push(invalid('spec.nodeName', node, msg));
  const source = obj(spec, 'source') ?? {};
  const n = ['persistentVolumeName', 'inlineVolumeSpec'].filter((k) => has(source, k)).length;
  if (n !== 1)
    errs.push(
      required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'),
    );
  if (old !== undefined && !semanticEqual(spec, obj(old, 'spec')))
    errs.push(invalid('spec', spec, IMMUTABLE));
}

/** A RuntimeClass: a DNS-label handler (immutable), overhead and scheduling constraints. */
export function validateRuntimeClass(rc: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const handler = str(rc, 'handler');
  if (handler === '') errs.push(required('handler'));
  else for (const msg of isDNS1123Label(handler)) errs.push(invalid('handler', handler, msg));
  validateResourceList(obj(obj(rc, 'overhead'), 'podFixed'), 'overhead.podFixed', errs);
  const scheduling = obj(rc, 'scheduling');
  if (scheduling !== undefined) {
    errs.push(...validateLabels(scheduling['nodeSelector'], 'scheduling.nodeSelector'));
    validateTolerations(scheduling, 'scheduling.tolerations', errs);
  }
  if (old !== undefined && handler !== str(old, 'handler')) errs.push(invalid('handler', handler, IMMUTABLE));
}

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** An EndpointSlice: address type (immutable), endpoints' addresses, ports. */
export function validateEndpointSlice(es: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const type = str(es, 'addressType');
  if (type === '') errs.push(required('addressType'));
  else if (!ADDRESS_TYPES.includes(type)) errs.push(notSupported('addressType', type, ADDRESS_TYPES));
  const endpoints = objects(es, 'endpoints');
  if (endpoints.length > 1000) errs.push(tooLong('endpoints', 1000));
  endpoints.forEach((ep, i) => {
    const p = index('endpoints', i);
    const addresses = strings(ep, 'addresses');
    if (addresses.length === 0) errs.push(required(child(p, 'addresses'), 'must contain at least 1 address'));
    addresses.forEach((a, j) => {
      const ap = index(child(p, 'addresses'), j);
      const msgs = type === 'FQDN' ? isDNS1123Subdomain(a) : ipErrors(a);
      for (const msg of msgs) errs.push(invalid(ap, a, msg));
      if (type === 'IPv4' && a.includes(':')) errs.push(invalid(ap, a, 'must be an IPv4 address'));
      if (type === 'IPv6' && !a.includes(':')) errs.push(invalid(ap, a, 'must be an IPv6 address'));
    });
    const hostname = ep['hostname'];
    if (typeof hostname === 'string')
      for (const msg of isDNS1123Label(hostname)) errs.push(invalid(child(p, 'hostname'), hostname, msg));
  });
  objects(es, 'ports').forEach((port, i) => {
    const p = index('ports', i);
    const name = str(port, 'name');
    if (name !== '') for (const msg of isDNS1123Label(name)) errs.push(invalid(child(p, 'name'), name, msg));
    const protocol = str(port, 'protocol');
    if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(child(p, 'protocol'), protocol, PROTOCOLS));
    const n = num(port, 'port');
    if (n !== undefined) for (const msg of isValidPortNum(n)) errs.push(invalid(child(p, 'port'), n, msg));
  });
  if (old !== undefined && type !== str(old, 'addressType'))
    errs.push(invalid('addressType', type, IMMUTABLE));
}
