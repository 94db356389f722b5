/**
 * networking.k8s.io/v1: Ingress, IngressClass, NetworkPolicy.
 */
import {
  forbidden,
  IMMUTABLE,
  invalid,
  notSupported,
  required,
  tooLongChars,
  type FieldError,
} from './field-error.js';
import {
  byteLength,
  cidrErrors,
  isDNS1035Label,
  isDNS1123Subdomain,
  isValidIPString,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
} from './formats.js';
import { has, type JsonObject, num, obj, objects, oneOf, optStr, str, strings } from './json.js';
import { validateLabelSelector } from './meta.js';
import { child, index } from './path.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_SUFFIXES = ['/..', '/.'];

function validateBackend(backend: JsonObject, path: string, errs: FieldError[]): void {
  const service = obj(backend, 'service');
  const resource = obj(backend, 'resource');
  if (service !== undefined && resource !== undefined) {
    errs.push(invalid(path, '', 'cannot set both resource and service backends'));
    return;
  }
  if (resource !== undefined) {
    if (str(resource, 'kind') === '') errs.push(required(child(path, 'resource', 'kind')));
    if (str(resource, 'name') === '') errs.push(required(child(path, 'resource', 'name')));
    return;
  }
  if (service === undefined) {
    errs.push(invalid(path, '', 'resource or service backend is required'));
    return;
  }
  const name = str(service, 'name');
  if (name === '') errs.push(required(child(path, 'service', 'name')));
  else for (const msg of isDNS1035Label(name)) errs.push(invalid(child(path, 'service', 'name'), name, msg));
  const port = obj(service, 'port') ?? {};
  const portName = str(port, 'name');
  const portNumber = num(port, 'number') ?? 0;
  if (portName !== '' && portNumber !== 0) {
    errs.push(invalid(path, '', 'cannot set both port name & port number'));
  } else if (portName !== '') {
    for (const msg of isValidPortName(portName))
      errs.push(invalid(child(path, 'service', 'port', 'name'), portName, msg));
  } else if (portNumber !== 0) {
    for (const msg of isValidPortNum(portNumber))
      errs.push(invalid(child(path, 'service', 'port', 'number'), portNumber, msg));
  } else {
    errs.push(required(path, 'port name or number is required'));
  }
}

function validateHTTPPath(p: JsonObject, path: string, errs: FieldError[]): void {
  const pathType = p['pathType'];
  if (pathType === undefined || pathType === null) {
    errs.push(required(child(path, 'pathType'), 'pathType must be specified'));
    return;
  }
  const value = str(p, 'path');
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(invalid(child(path, 'path'), value, 'must be an absolute path'));
    for (const seq of INVALID_SEQUENCES) {
      if (value.includes(seq)) errs.push(invalid(child(path, 'path'), value, `must not contain '${seq}'`));
    }
    for (const suffix of INVALID_SUFFIXES) {
      if (value.endsWith(suffix))
        errs.push(invalid(child(path, 'path'), value, `cannot end with '${suffix}'`));
    }
  } else if (pathType === 'ImplementationSpecific') {
    if (value !== '' && !value.startsWith('/'))
      errs.push(invalid(child(path, 'path'), value, 'must be an absolute path'));
  } else {
    errs.push(notSupported(child(path, 'pathType'), pathType, PATH_TYPES));
  }
  validateBackend(obj(p, 'backend') ?? {}, child(path, 'backend'), errs);
}

function validateHost(host: string, path: string, errs: FieldError[]): void {
  if (isValidIPString(host)) errs.push(invalid(path, host, 'must be a DNS name, not an IP address'));
  const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
  for (const msg of msgs) errs.push(invalid(path, host, msg));
}

/** An Ingress: rules (hosts, paths with a required pathType, backends), TLS hosts, class. */
export function validateIngress(ing: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(ing, 'spec') ?? {};
  const rules = objects(spec, 'rules');
  const defaultBackend = obj(spec, 'defaultBackend');
  if (rules.length === 0 && defaultBackend === undefined) {
    errs.push(invalid('spec', spec['rules'] ?? null, 'either `defaultBackend` or `rules` must be specified'));
  }
  if (defaultBackend !== undefined) validateBackend(defaultBackend, 'spec.defaultBackend', errs);
  rules.forEach((rule, i) => {
    const p = index('spec.rules', i);
    const host = str(rule, 'host');
    if (host !== '') validateHost(host, child(p, 'host'), errs);
    const http = obj(rule, 'http');
    if (http === undefined) return;
    const paths = objects(http, 'paths');
    if (paths.length === 0) errs.push(required(child(p, 'http', 'paths')));
    paths.forEach((hp, j) => validateHTTPPath(hp, index(child(p, 'http', 'paths'), j), errs));
  });
  objects(spec, 'tls').forEach((tls, i) => {
    strings(tls, 'hosts').forEach((h, j) => {
      const msgs = h.includes('*') ? isWildcardDNS1123Subdomain(h) : isDNS1123Subdomain(h);
      for (const msg of msgs) errs.push(invalid(index(child(index('spec.tls', i), 'hosts'), j), h, msg));
    });
  });
  const className = optStr(spec, 'ingressClassName');
  if (className !== undefined) {
    for (const msg of isDNS1123Subdomain(className))
      errs.push(invalid('spec.ingressClassName', className, msg));
    const annotations = obj(obj(ing, 'metadata'), 'annotations');
    if (annotations !== undefined && 'kubernetes.io/ingress.class' in annotations) {
      errs.push(
        invalid(
          'metadata.annotations[kubernetes.io/ingress.class]',
          annotations['kubernetes.io/ingress.class'],
          'can not be set when the class field is also set',
        ),
      );
    }
  }
}

/** An IngressClass: a domain-prefixed controller (immutable), well-formed parameters. */
export function validateIngressClass(ic: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(ic, 'spec') ?? {};
  const controller = str(spec, 'controller');
  if (controller === '') {
    errs.push(required('spec.controller'));
  } else {
    const slash = controller.indexOf('/');
    if (slash <= 0 || slash === controller.length - 1) {
      errs.push(
        invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'),
      );
    } else {
      for (const msg of isDNS1123Subdomain(controller.slice(0, slash)))
        errs.push(invalid('spec.controller', controller.slice(0, slash), msg));
    }
    if (byteLength(controller) > 250) errs.push(tooLongChars('spec.controller', 250));
  }
  const params = obj(spec, 'parameters');
  if (params !== undefined) {
    if (str(params, 'kind') === '') errs.push(required('spec.parameters.kind'));
    if (str(params, 'name') === '') errs.push(required('spec.parameters.name'));
    const scope = str(params, 'scope');
    if (scope !== 'Cluster' && scope !== 'Namespace') {
      errs.push(notSupported('spec.parameters.scope', scope, ['Cluster', 'Namespace']));
    } else if (scope === 'Namespace' && str(params, 'namespace') === '') {
      errs.push(required('spec.parameters.namespace', '`parameters.scope` is set to "Namespace"'));
    } else if (scope === 'Cluster' && has(params, 'namespace')) {
      errs.push(forbidden('spec.parameters.namespace', '`parameters.scope` is set to "Cluster"'));
    }
  }
  if (old !== undefined && str(obj(old, 'spec'), 'controller') !== controller) {
    errs.push(invalid('spec.controller', controller, IMMUTABLE));
  }
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validatePeers(peers: JsonObject[], path: string, errs: FieldError[]): void {
  peers.forEach((peer, i) => {
    const p = index(path, i);
    let n = 0;
    if (has(peer, 'podSelector')) {
      n++;
      errs.push(...validateLabelSelector(peer['podSelector'], child(p, 'podSelector')));
    }
    if (has(peer, 'namespaceSelector')) {
      n++;
      errs.push(...validateLabelSelector(peer['namespaceSelector'], child(p, 'namespaceSelector')));
    }
    const ipBlock = obj(peer, 'ipBlock');
    if (ipBlock !== undefined) {
      n++;
      const cidr = str(ipBlock, 'cidr');
      if (cidr === '') errs.push(required(child(p, 'ipBlock', 'cidr')));
      else for (const msg of cidrErrors(cidr)) errs.push(invalid(child(p, 'ipBlock', 'cidr'), cidr, msg));
      strings(ipBlock, 'except').forEach((e, j) => {
        for (const msg of cidrErrors(e)) errs.push(invalid(index(child(p, 'ipBlock', 'except'), j), e, msg));
      });
    }
    if (n === 0) errs.push(required(p, 'must specify a peer'));
    else if (n > 1 && ipBlock !== undefined) errs.push(forbidden(p, 'may not specify more than 1 peer type'));
  });
}

function validateNPPorts(ports: JsonObject[], path: string, errs: FieldError[]): void {
  ports.forEach((port, i) => {
    const p = index(path, i);
    const protocol = port['protocol'];
    if (protocol !== undefined && protocol !== null && !oneOf(protocol, PROTOCOLS)) {
      errs.push(notSupported(child(p, 'protocol'), protocol, PROTOCOLS));
    }
    const value = port['port'];
    if (typeof value === 'number') {
      for (const msg of isValidPortNum(value)) errs.push(invalid(child(p, 'port'), value, msg));
    } else if (typeof value === 'string') {
      for (const msg of isValidPortName(value)) errs.push(invalid(child(p, 'port'), value, msg));
    }
    const endPort = num(port, 'endPort');
    if (endPort !== undefined) {
      if (typeof value !== 'number')
        errs.push(required(child(p, 'port'), 'must be specified when endPort is specified'));
      else if (endPort < value)
        errs.push(invalid(child(p, 'endPort'), endPort, 'must be greater than or equal to `port`'));
      for (const msg of isValidPortNum(endPort)) errs.push(invalid(child(p, 'endPort'), endPort, msg));
    }
  });
}

/** A NetworkPolicy: selectors, ports, peers, policy types. */
export function validateNetworkPolicy(
  np: JsonObject,
  _old: JsonObject | undefined,
  errs: FieldError[],
): void {
  const spec = obj(np, 'spec') ?? {};
  errs.push(...validateLabelSelector(spec['podSelector'], 'spec.podSelector'));
  objects(spec, 'ingress').forEach((rule, i) => {
    const p = index('spec.ingress', i);
    validateNPPorts(objects(rule, 'ports'), child(p, 'ports'), errs);
    validatePeers(objects(rule, 'from'), child(p, 'from'), errs);
  });
  objects(spec, 'egress').forEach((rule, i) => {
    const p = index('spec.egress', i);
    validateNPPorts(objects(rule, 'ports'), child(p, 'ports'), errs);
    validatePeers(objects(rule, 'to'), child(p, 'to'), errs);
  });
  const types = strings(spec, 'policyTypes');
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress')
      errs.push(notSupported(index('spec.policyTypes', i), t, ['Ingress', 'Egress']));
  });
  if (types.length > 2)
    errs.push(invalid('spec.policyTypes', types, 'may not specify more than two policyTypes'));
}
