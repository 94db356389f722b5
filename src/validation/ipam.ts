/**
 * networking.k8s.io/v1 ServiceCIDR and IPAddress (kube's `ValidateServiceCIDR` and
 * `ValidateIPAddress` with their update rules).
 */
import { isIP } from 'node:net';
import { IMMUTABLE, invalid, required, tooMany, type FieldError } from './field-error.js';
import { obj, semanticEqual, str, strings, type JsonObject } from './json.js';
import { cidrErrors, isDNS1123Label, isDNS1123Subdomain } from './formats.js';

/** kube's `ValidateIPAddressName`: a canonical IP address. */
function ipAddressNameErrors(name: string): string[] {
  if (isIP(name) === 0) return [`ParseAddr(${JSON.stringify(name)}): unable to parse IP`];
  const canonical = isIP(name) === 4 ? name : canonicalIPv6(name);
  return canonical === name ? [] : ['must be a canonical format IP address'];
}

function canonicalIPv6(ip: string): string {
  // The URL parser prints IPv6 hosts in RFC 5952 form, as Go's netip does.
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

/** An IPAddress: an IP as its name, a parent reference naming a resource and an object. */
export function validateIPAddress(ip: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const name = str(obj(ip, 'metadata'), 'name');
  for (const msg of ipAddressNameErrors(name)) errs.push(invalid('metadata.name', name, msg));
  const spec = obj(ip, 'spec');
  const ref = obj(spec, 'parentRef');
  if (ref === undefined) {
    errs.push(required('spec.parentRef'));
  } else {
    const group = str(ref, 'group');
    if (group !== '')
      for (const msg of isDNS1123Subdomain(group)) errs.push(invalid('spec.parentRef.group', group, msg));
    const resource = str(ref, 'resource');
    if (resource === '') errs.push(required('spec.parentRef.resource'));
    const refName = str(ref, 'name');
    if (refName === '') errs.push(required('spec.parentRef.name'));
    const namespace = str(ref, 'namespace');
    if (namespace !== '')
      for (const msg of isDNS1123Label(namespace))
        errs.push(invalid('spec.parentRef.namespace', namespace, msg));
  }
  if (old !== undefined && !semanticEqual(obj(spec, 'parentRef'), obj(obj(old, 'spec'), 'parentRef'))) {
    errs.push(invalid('spec.parentRef', obj(spec, 'parentRef') ?? null, IMMUTABLE));
  }
}

/** A ServiceCIDR: one or two CIDRs, at most one per family; on update only a second family may be added. */
export function validateServiceCIDR(sc: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const cidrs = strings(obj(sc, 'spec'), 'cidrs');
  if (cidrs.length === 0) errs.push(required('spec.cidrs', 'at least one CIDR required'));
  if (cidrs.length > 2) errs.push(tooMany('spec.cidrs', cidrs.length, 2));
  cidrs.forEach((c, i) => {
    for (const msg of cidrErrors(c)) errs.push(invalid(`spec.cidrs[${i}]`, c, msg));
  });
  if (cidrs.length === 2) {
    const v6 = cidrs.map((c) => c.includes(':'));
    if (v6[0] === v6[1]) {
      errs.push(
        invalid(
          'spec.cidrs',
          cidrs,
          'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64',
        ),
      );
    }
  }
  if (old === undefined) return;
  const before = strings(obj(old, 'spec'), 'cidrs');
  const grown = before.length === 1 && cidrs.length === 2 && cidrs[0] === before[0];
  if (!grown && !semanticEqual(cidrs, before)) errs.push(invalid('spec.cidrs', cidrs, IMMUTABLE));
}
