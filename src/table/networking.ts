/** Printers of `networking.k8s.io` and `discovery.k8s.io` (endpoint slices). */
import { AGE, column, columns, NAME } from './columns.js';
import { list, obj, optStr, str, objectAge as age, objectName as name } from './fields.js';
import { formatLabelSelector, listWithMore, loadBalancerIngress } from './format.js';
import type { TablePrinter } from './index.js';

/**
 * HOSTS: up to three rule hosts, `*` when no rule names a host. Kube counts the "more" from the
 * number of rules, host or not, and stops collecting once three hosts are listed.
 */
function formatHosts(rules: unknown): string {
  const all = list(rules).map(obj);
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const rule of all) {
    if (hosts.length === max) more = true;
    const host = str(rule['host']);
    if (!more && host !== '') hosts.push(host);
  }
  if (hosts.length === 0) return '*';
  const text = hosts.join(',');
  return more ? `${text} + ${all.length - max} more...` : text;
}

const INGRESS: TablePrinter = {
  columns: columns(
    NAME,
    column('Class', 'string', 'Ingress class that handles the ingress.'),
    column('Hosts', 'string', 'Hosts the rules match.'),
    column('Address', 'string', 'Load-balancer addresses of the ingress.'),
    column('Ports', 'string', 'Ports the ingress serves.'),
    AGE,
  ),
  cells(ingress, now) {
    const spec = obj(ingress['spec']);
    return [
      name(ingress),
      optStr(spec['ingressClassName']) ?? '<none>',
      formatHosts(spec['rules']),
      loadBalancerIngress(obj(ingress['status'])['loadBalancer']),
      list(spec['tls']).length > 0 ? '80, 443' : '80',
      age(ingress, now),
    ];
  },
};

const INGRESS_CLASS: TablePrinter = {
  columns: columns(
    NAME,
    column('Controller', 'string', 'Controller that implements the class.'),
    column('Parameters', 'string', 'Resource holding parameters for the controller.'),
    AGE,
  ),
  cells(ic, now) {
    const spec = obj(ic['spec']);
    const params = spec['parameters'];
    let parameters = '<none>';
    if (params !== undefined && params !== null) {
      const p = obj(params);
      const group = optStr(p['apiGroup']);
      parameters = `${str(p['kind'])}${group === undefined ? '' : `.${group}`}/${str(p['name'])}`;
    }
    return [name(ic), str(spec['controller']), parameters, age(ic, now)];
  },
};

const NETWORK_POLICY: TablePrinter = {
  columns: columns(NAME, column('Pod-Selector', 'string', 'Pods the policy applies to.'), AGE),
  cells: (np, now) => [name(np), formatLabelSelector(obj(np['spec'])['podSelector']), age(np, now)],
};

const SERVICE_CIDR: TablePrinter = {
  columns: columns(NAME, column('CIDRs', 'string', 'IP ranges of the service CIDR.'), AGE),
  cells: (sc, now) => [name(sc), list(obj(sc['spec'])['cidrs']).map(str).join(','), age(sc, now)],
};

const IP_ADDRESS: TablePrinter = {
  columns: columns(NAME, column('ParentRef', 'string', 'Object the address is allocated to.')),
  // kube's printer also appends an age cell beyond its two columns; clients read cells by column,
  // so it is left out here to keep one cell per column.
  cells(ip) {
    const ref = obj(ip['spec'])['parentRef'];
    let parent = '<none>';
    if (ref !== undefined && ref !== null) {
      const r = obj(ref);
      const group = str(r['group']);
      const resource = str(r['resource']);
      parent = (group === '' ? resource : `${resource}.${group}`).toLowerCase();
      if (str(r['namespace']) !== '') parent += `/${str(r['namespace'])}`;
      parent += `/${str(r['name'])}`;
    }
    return [name(ip), parent];
  },
};

/** PORTS of an endpoint slice: up to three port numbers (or names, or `*`). */
function slicePorts(ports: unknown): string {
  return listWithMore(
    list(ports).map((item) => {
      const port = obj(item);
      if (typeof port['port'] === 'number') return String(port['port']);
      return optStr(port['name']) ?? '*';
    }),
    3,
  );
}

/** ENDPOINTS of an endpoint slice: up to three addresses across all endpoints. */
function sliceEndpoints(endpoints: unknown): string {
  return listWithMore(
    list(endpoints).flatMap((e) => list(obj(e)['addresses']).map(str)),
    3,
  );
}

const ENDPOINT_SLICE: TablePrinter = {
  columns: columns(
    NAME,
    column('AddressType', 'string', 'Type of the addresses (IPv4, IPv6, FQDN).'),
    column('Ports', 'string', 'Ports of the endpoints.'),
    column('Endpoints', 'string', 'Addresses of the endpoints.'),
    AGE,
  ),
  cells: (slice, now) => [
    name(slice),
    str(slice['addressType']),
    slicePorts(slice['ports']),
    sliceEndpoints(slice['endpoints']),
    age(slice, now),
  ],
};

/** `networking.k8s.io` printers by resource. */
export const NETWORKING_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  ingresses: INGRESS,
  ingressclasses: INGRESS_CLASS,
  networkpolicies: NETWORK_POLICY,
  servicecidrs: SERVICE_CIDR,
  ipaddresses: IP_ADDRESS,
});

/** `discovery.k8s.io` printers by resource. */
export const DISCOVERY_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  endpointslices: ENDPOINT_SLICE,
});
