/**
 * Service (`ValidateService`, `ValidateServiceUpdate`): ports, selector, session affinity,
 * type-dependent fields, cluster IP / IP family consistency, traffic policies.
 *
 * Validation runs after IP-family initialisation (`prepareForCreate`) and cluster IP
 * allocation, as in kube; an unallocated `clusterIP` (`""` with no `clusterIPs`) is accepted.
 */
import { externallyAccessible } from './facts.js';
import {
  duplicate,
  forbidden,
  IMMUTABLE,
  invalid,
  notSupported,
  required,
  type FieldError,
} from '../field-error.js';
import {
  cidrErrors,
  ipErrors,
  isDNS1123Label,
  isDNS1123Subdomain,
  isIPv6String,
  isQualifiedName,
  isValidPortName,
  isValidPortNum,
} from '../formats.js';
import {
  has,
  type JsonObject,
  num,
  obj,
  objects,
  oneOf,
  optStr,
  semanticEqual,
  str,
  strings,
} from '../json.js';
import { validateLabels } from '../meta.js';
import { child, index } from '../path.js';

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** kube's `isHeadlessService` (falls back to `clusterIP` when `clusterIPs` is not yet synced). */
export function isHeadless(spec: JsonObject): boolean {
  const ips = strings(spec, 'clusterIPs');
  if (ips.length > 0) return ips.length === 1 && ips[0] === 'None';
  return str(spec, 'clusterIP') === 'None';
}

function validatePort(
  port: JsonObject,
  requireName: boolean,
  names: Set<string>,
  path: string,
  errs: FieldError[],
): void {
  const name = str(port, 'name');
  if (requireName && name === '') {
    errs.push(required(child(path, 'name')));
  } else if (name !== '') {
    for (const msg of isDNS1123Label(name)) errs.push(invalid(child(path, 'name'), name, msg));
    if (names.has(name)) errs.push(duplicate(child(path, 'name'), name));
    else names.add(name);
  }
  const p = num(port, 'port') ?? 0;
  for (const msg of isValidPortNum(p)) errs.push(invalid(child(path, 'port'), p, msg));
  const protocol = str(port, 'protocol');
  if (protocol === '') errs.push(required(child(path, 'protocol')));
  else if (!PROTOCOLS.includes(protocol))
    errs.push(notSupported(child(path, 'protocol'), protocol, PROTOCOLS));
  const target = port['targetPort'];
  if (typeof target === 'string') {
    for (const msg of isValidPortName(target)) errs.push(invalid(child(path, 'targetPort'), target, msg));
  } else {
    const t = typeof target === 'number' ? target : 0;
    for (const msg of isValidPortNum(t)) errs.push(invalid(child(path, 'targetPort'), t, msg));
  }
  const appProtocol = optStr(port, 'appProtocol');
  if (appProtocol !== undefined) {
    for (const msg of isQualifiedName(appProtocol))
      errs.push(invalid(child(path, 'appProtocol'), appProtocol, msg));
  }
}

function validateClusterIPFields(spec: JsonObject, errs: FieldError[]): void {
  if (str(spec, 'type') === 'ExternalName') return;
  const clusterIP = str(spec, 'clusterIP');
  const ips = strings(spec, 'clusterIPs');
  if (clusterIP !== '') {
    if (ips.length === 0) errs.push(required('spec.clusterIPs'));
    else if (ips[0] !== clusterIP)
      errs.push(invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    errs.push(invalid('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const families = strings(spec, 'ipFamilies');
  const seen = new Set<string>();
  families.forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6')
      errs.push(notSupported(index('spec.ipFamilies', i), f, ['IPv4', 'IPv6']));
    if (seen.has(f)) errs.push(duplicate(index('spec.ipFamilies', i), f));
    seen.add(f);
  });
  const policy = spec['ipFamilyPolicy'];
  const policies = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
  if (policy !== undefined && policy !== null && !oneOf(policy, policies)) {
    errs.push(notSupported('spec.ipFamilyPolicy', policy, policies));
  }
  let badIP = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        badIP = true;
        errs.push(invalid('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      return;
    }
    const msgs = ipErrors(ip);
    if (msgs.length > 0) badIP = true;
    for (const msg of msgs) errs.push(invalid(index('spec.clusterIPs', i), ip, msg));
  });
  if (ips.length > 2) errs.push(invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (badIP) return;
  if (ips.length > 1 && isIPv6String(ips[0] ?? '') === isIPv6String(ips[1] ?? '')) {
    errs.push(invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadless(spec)) {
    ips.forEach((ip, i) => {
      const f = families[i];
      if (f === 'IPv4' && isIPv6String(ip))
        errs.push(
          invalid(
            index('spec.clusterIPs', i),
            ip,
            `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
      if (f === 'IPv6' && !isIPv6String(ip))
        errs.push(
          invalid(
            index('spec.clusterIPs', i),
            ip,
            `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
    });
  }
}

function validateTrafficFields(spec: JsonObject, errs: FieldError[]): void {
  const etp = str(spec, 'externalTrafficPolicy');
  if (!externallyAccessible(spec)) {
    if (etp !== '')
      errs.push(
        invalid('spec.externalTrafficPolicy', etp, 'may only be set for externally-accessible services'),
      );
  } else if (etp === '') {
    errs.push(required('spec.externalTrafficPolicy'));
  } else if (etp !== 'Cluster' && etp !== 'Local') {
    errs.push(notSupported('spec.externalTrafficPolicy', etp, ['Cluster', 'Local']));
  }
  const needsHealthCheck = str(spec, 'type') === 'LoadBalancer' && etp === 'Local';
  const hc = num(spec, 'healthCheckNodePort') ?? 0;
  if (!needsHealthCheck && hc !== 0) {
    errs.push(
      invalid(
        'spec.healthCheckNodePort',
        hc,
        "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
      ),
    );
  } else if (needsHealthCheck) {
    if (hc === 0) errs.push(required('spec.healthCheckNodePort'));
    else for (const msg of isValidPortNum(hc)) errs.push(invalid('spec.healthCheckNodePort', hc, msg));
  }
  const t = str(spec, 'type');
  const itp = spec['internalTrafficPolicy'];
  if (
    (itp === undefined || itp === null) &&
    (t === 'NodePort' || t === 'LoadBalancer' || t === 'ClusterIP')
  ) {
    errs.push(required('spec.internalTrafficPolicy'));
  }
  if (itp !== undefined && itp !== null && itp !== 'Cluster' && itp !== 'Local') {
    errs.push(notSupported('spec.internalTrafficPolicy', itp, ['Cluster', 'Local']));
  }
  const td = spec['trafficDistribution'];
  const tds = ['PreferClose', 'PreferSameNode', 'PreferSameZone'];
  if (td !== undefined && td !== null && !oneOf(td, tds))
    errs.push(notSupported('spec.trafficDistribution', td, tds));
}

/** A Service on create (and the new object of an update). */
export function validateService(svc: JsonObject, errs: FieldError[]): void {
  const spec = obj(svc, 'spec') ?? {};
  const type = str(spec, 'type');
  const headless = isHeadless(spec);
  const ports = objects(spec, 'ports');
  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(required('spec.ports'));
  if ((type === 'LoadBalancer' || type === 'NodePort') && headless) {
    errs.push(invalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${type} services`));
  }
  if (type === 'ExternalName') {
    if (strings(spec, 'clusterIPs').length > 0)
      errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (strings(spec, 'ipFamilies').length > 0)
      errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (has(spec, 'ipFamilyPolicy'))
      errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    const cname = str(spec, 'externalName').replace(/\.$/, '');
    if (cname === '') errs.push(required('spec.externalName'));
    else for (const msg of isDNS1123Subdomain(cname)) errs.push(invalid('spec.externalName', cname, msg));
  }
  const names = new Set<string>();
  ports.forEach((p, i) => validatePort(p, ports.length > 1, names, index('spec.ports', i), errs));
  errs.push(...validateLabels(spec['selector'], 'spec.selector'));
  const affinity = str(spec, 'sessionAffinity');
  if (affinity === '') errs.push(required('spec.sessionAffinity'));
  else if (affinity !== 'ClientIP' && affinity !== 'None')
    errs.push(notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  if (affinity === 'ClientIP') {
    const cfg = obj(spec, 'sessionAffinityConfig');
    const clientIP = obj(cfg, 'clientIP');
    const timeout = num(clientIP, 'timeoutSeconds');
    const why = 'when session affinity type is ClientIP';
    if (cfg === undefined) errs.push(required('spec.sessionAffinityConfig', why));
    else if (clientIP === undefined) errs.push(required('spec.sessionAffinityConfig.clientIP', why));
    else if (timeout === undefined)
      errs.push(required('spec.sessionAffinityConfig.clientIP.timeoutSeconds', why));
    else if (timeout <= 0 || timeout > 86400) {
      errs.push(
        invalid(
          'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
          timeout,
          'must be greater than 0 and less than 86400',
        ),
      );
    }
  } else if (affinity === 'None' && has(spec, 'sessionAffinityConfig')) {
    errs.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  validateClusterIPFields(spec, errs);
  strings(spec, 'externalIPs').forEach((ip, i) => {
    for (const msg of ipErrors(ip)) errs.push(invalid(index('spec.externalIPs', i), ip, msg));
  });
  if (type === '') errs.push(required('spec.type'));
  else if (!TYPES.includes(type)) errs.push(notSupported('spec.type', type, TYPES));
  const nodePorts = new Set<string>();
  const portKeys = new Set<string>();
  ports.forEach((p, i) => {
    const nodePort = num(p, 'nodePort') ?? 0;
    if (type === 'ClusterIP' && nodePort !== 0)
      errs.push(
        forbidden(child(index('spec.ports', i), 'nodePort'), "may not be used when `type` is 'ClusterIP'"),
      );
    if (nodePort !== 0) {
      const k = `${str(p, 'protocol')}/${nodePort}`;
      if (nodePorts.has(k)) errs.push(duplicate(child(index('spec.ports', i), 'nodePort'), nodePort));
      nodePorts.add(k);
    }
    const pk = `${str(p, 'protocol')}/${num(p, 'port') ?? 0}`;
    if (portKeys.has(pk))
      errs.push(
        duplicate(index('spec.ports', i), { protocol: str(p, 'protocol'), port: num(p, 'port') ?? 0 }),
      );
    portKeys.add(pk);
  });
  const ranges = strings(spec, 'loadBalancerSourceRanges');
  if (ranges.length > 0) {
    if (type !== 'LoadBalancer')
      errs.push(forbidden('spec.LoadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
    ranges.forEach((r, i) => {
      for (const msg of cidrErrors(r.trim()))
        errs.push(invalid(index('spec.LoadBalancerSourceRanges', i), r.trim(), msg));
    });
  }
  if (has(spec, 'allocateLoadBalancerNodePorts') && type !== 'LoadBalancer') {
    errs.push(
      forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"),
    );
  }
  if (type === 'LoadBalancer' && !has(spec, 'allocateLoadBalancerNodePorts'))
    errs.push(required('allocateLoadBalancerNodePorts'));
  const lbClass = optStr(spec, 'loadBalancerClass');
  if (lbClass !== undefined) {
    if (type === 'LoadBalancer')
      for (const msg of isQualifiedName(lbClass)) errs.push(invalid('spec.loadBalancerClass', lbClass, msg));
    else errs.push(forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
  }
  validateTrafficFields(spec, errs);
}

/** A Service on update: cluster IPs, IP families and load-balancer class do not change. */
export function validateServiceUpdate(svc: JsonObject, old: JsonObject, errs: FieldError[]): void {
  const spec = obj(svc, 'spec') ?? {};
  const oldSpec = obj(old, 'spec') ?? {};
  const externalName = str(spec, 'type') === 'ExternalName' || str(oldSpec, 'type') === 'ExternalName';
  if (!externalName && !(isHeadless(spec) && isHeadless(oldSpec))) {
    const ips = strings(spec, 'clusterIPs');
    const oldIPs = strings(oldSpec, 'clusterIPs');
    if (ips.length === oldIPs.length) {
      oldIPs.forEach((ip, i) => {
        if (ip !== ips[i]) errs.push(invalid(index('spec.clusterIPs', i), ips, 'may not change once set'));
      });
    } else if (oldIPs.length > ips.length) {
      if (ips.length === 0)
        errs.push(invalid('spec.clusterIPs[0]', ips, 'primary clusterIP can not be unset'));
      else if (ips[0] !== oldIPs[0]) errs.push(invalid('spec.clusterIPs[0]', ips, 'may not change once set'));
      if (ips.length === 1 && spec['ipFamilyPolicy'] !== 'SingleStack') {
        errs.push(
          invalid(
            'spec.ipFamilyPolicy',
            spec['ipFamilyPolicy'] ?? null,
            "must be set to 'SingleStack' when releasing the secondary clusterIP",
          ),
        );
      }
    } else if (oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
      errs.push(invalid('spec.clusterIPs[0]', ips, 'may not change once set'));
    }
  }
  if (!externalName && isHeadless(spec) === isHeadless(oldSpec) && !isHeadless(spec)) {
    const fams = strings(spec, 'ipFamilies');
    const oldFams = strings(oldSpec, 'ipFamilies');
    const n = Math.min(fams.length, oldFams.length);
    for (let i = 0; i < n; i++) {
      if (fams[i] !== oldFams[i]) {
        errs.push(invalid('spec.ipFamilies[0]', fams, 'may not change once set'));
        break;
      }
    }
  }
  if (str(spec, 'type') === 'LoadBalancer' && str(oldSpec, 'type') === 'LoadBalancer') {
    if (!semanticEqual(spec['loadBalancerClass'], oldSpec['loadBalancerClass'])) {
      errs.push(
        invalid('spec.loadBalancerClass', spec['loadBalancerClass'] ?? null, 'may not change once set'),
      );
    }
    if (str(spec, 'externalTrafficPolicy') === 'Local' && str(oldSpec, 'externalTrafficPolicy') === 'Local') {
      if (num(spec, 'healthCheckNodePort') !== num(oldSpec, 'healthCheckNodePort')) {
        errs.push(forbidden('spec.healthCheckNodePort', IMMUTABLE));
      }
    }
  }
  validateService(svc, errs);
}

/** Endpoints (`ValidateEndpoints`): addresses, ports. */
export function validateEndpoints(ep: JsonObject, errs: FieldError[]): void {
  objects(ep, 'subsets').forEach((ss, i) => {
    const p = index('subsets', i);
    if (objects(ss, 'addresses').length === 0 && objects(ss, 'notReadyAddresses').length === 0) {
      errs.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    }
    for (const k of ['addresses', 'notReadyAddresses']) {
      objects(ss, k).forEach((a, j) => {
        const ap = index(child(p, k), j);
        for (const msg of ipErrors(str(a, 'ip'))) errs.push(invalid(child(ap, 'ip'), str(a, 'ip'), msg));
        const hostname = str(a, 'hostname');
        if (hostname !== '')
          for (const msg of isDNS1123Label(hostname))
            errs.push(invalid(child(ap, 'hostname'), hostname, msg));
      });
    }
    const ports = objects(ss, 'ports');
    ports.forEach((port, j) => {
      const pp = index(child(p, 'ports'), j);
      const name = str(port, 'name');
      if (ports.length > 1 && name === '') errs.push(required(child(pp, 'name')));
      else if (name !== '')
        for (const msg of isDNS1123Label(name)) errs.push(invalid(child(pp, 'name'), name, msg));
      const n = num(port, 'port') ?? 0;
      for (const msg of isValidPortNum(n)) errs.push(invalid(child(pp, 'port'), n, msg));
      const protocol = str(port, 'protocol');
      if (protocol === '') errs.push(required(child(pp, 'protocol')));
      else if (!PROTOCOLS.includes(protocol))
        errs.push(notSupported(child(pp, 'protocol'), protocol, PROTOCOLS));
    });
  });
}
