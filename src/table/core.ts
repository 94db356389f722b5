/**
 * Printers of the core group (`/api/v1`) except pods, events and volumes, which have files of
 * their own. Cells follow kube-apiserver's printers with the wide options on, as the server always
 * computes every column and kubectl hides priority-1 columns itself.
 */
import type { KubeObject } from '../api/object.js';
import { replicaPrinter } from './apps.js';
import { AGE, column, columns, NAME, wide } from './columns.js';
import { int, list, mapSize, obj, str, stringMap, objectAge as age, objectName as name } from './fields.js';
import {
  compareStrings,
  containerCells,
  formatLabels,
  joinHostPort,
  loadBalancerIngress,
  templateContainers,
} from './format.js';
import type { TablePrinter } from './index.js';

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';
const NODE_ROLE_LABEL = 'kubernetes.io/role';

/** Roles of a node from `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role` values. */
function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of stringMap(node.metadata.labels)) {
    if (key.startsWith(NODE_ROLE_PREFIX)) {
      const role = key.slice(NODE_ROLE_PREFIX.length);
      if (role !== '') roles.add(role);
    } else if (key === NODE_ROLE_LABEL && value !== '') {
      roles.add(value);
    }
  }
  return roles.size === 0 ? '<none>' : [...roles].sort(compareStrings).join(',');
}

/** STATUS of a node: `Ready`/`NotReady`/`Unknown` from the Ready condition, plus scheduling. */
function nodeStatus(node: KubeObject): string {
  const status: string[] = [];
  // Go builds a map by type, so the last Ready condition in the list wins.
  let readyStatus: string | undefined;
  for (const item of list(obj(node['status'])['conditions'])) {
    const condition = obj(item);
    if (str(condition['type']) === 'Ready') readyStatus = str(condition['status']);
  }
  if (readyStatus !== undefined) status.push(readyStatus === 'True' ? 'Ready' : 'NotReady');
  else status.push('Unknown');
  if (obj(node['spec'])['unschedulable'] === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** The first node address of `type`, or `<none>`. */
function nodeAddress(node: KubeObject, type: string): string {
  for (const item of list(obj(node['status'])['addresses'])) {
    const address = obj(item);
    if (str(address['type']) === type) return str(address['address']);
  }
  return '<none>';
}

const NODE: TablePrinter = {
  columns: columns(
    NAME,
    column('Status', 'string', 'Readiness and schedulability of the node.'),
    column('Roles', 'string', 'Roles of the node, from its role labels.'),
    AGE,
    column('Version', 'string', 'Kubelet version reported by the node.'),
    wide('Internal-IP', 'First internal IP address of the node.'),
    wide('External-IP', 'First external IP address of the node.'),
    wide('OS-Image', 'Operating system image reported by the node.'),
    wide('Kernel-Version', 'Kernel version reported by the node.'),
    wide('Container-Runtime', 'Container runtime and version reported by the node.'),
  ),
  cells(node, now) {
    const info = obj(obj(node['status'])['nodeInfo']);
    return [
      name(node),
      nodeStatus(node),
      nodeRoles(node),
      age(node, now),
      str(info['kubeletVersion']),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      str(info['osImage']) || '<unknown>',
      str(info['kernelVersion']) || '<unknown>',
      str(info['containerRuntimeVersion']) || '<unknown>',
    ];
  },
};

const NAMESPACE: TablePrinter = {
  columns: columns(NAME, column('Status', 'string', 'Phase of the namespace.'), AGE),
  cells: (ns, now) => [name(ns), str(obj(ns['status'])['phase']), age(ns, now)],
};

/** EXTERNAL-IP of a service, by type. */
function serviceExternalIP(spec: ReturnType<typeof obj>, lbStatus: unknown): string {
  const externalIPs = list(spec['externalIPs']).map(str);
  switch (str(spec['type']) || 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerIngress(lbStatus);
      if (externalIPs.length > 0) return [...(lb === '' ? [] : lb.split(',')), ...externalIPs].join(',');
      return lb !== '' ? lb : '<pending>';
    }
    case 'ExternalName':
      return str(spec['externalName']);
    default:
      return '<unknown>';
  }
}

/** PORT(S): `80/TCP`, or `80:30080/TCP` with a node port; `<none>` without ports. */
function servicePorts(ports: unknown): string {
  const text = list(ports)
    .map(obj)
    .map((p) => {
      const protocol = str(p['protocol']) || 'TCP';
      const nodePort = int(p['nodePort']);
      return nodePort > 0 ? `${int(p['port'])}:${nodePort}/${protocol}` : `${int(p['port'])}/${protocol}`;
    })
    .join(',');
  return text === '' ? '<none>' : text;
}

const SERVICE: TablePrinter = {
  columns: columns(
    NAME,
    column('Type', 'string', 'How the service is exposed.'),
    column('Cluster-IP', 'string', 'Cluster IP address of the service.'),
    column('External-IP', 'string', 'External addresses of the service.'),
    column('Port(s)', 'string', 'Ports the service exposes.'),
    AGE,
    wide('Selector', 'Label selector of the pods behind the service.'),
  ),
  cells(svc, now) {
    const spec = obj(svc['spec']);
    // The internal Service keeps only clusterIPs; conversion from v1 fills it from clusterIP.
    const clusterIP = str(list(spec['clusterIPs'])[0]) || str(spec['clusterIP']) || '<none>';
    return [
      name(svc),
      str(spec['type']) || 'ClusterIP',
      clusterIP,
      serviceExternalIP(spec, obj(svc['status'])['loadBalancer']),
      servicePorts(spec['ports']),
      age(svc, now),
      formatLabels(spec['selector']),
    ];
  },
};

/** ENDPOINTS: up to three `ip:port` (or bare IPs for port-less subsets), then `+ N more...`. */
function formatEndpoints(subsets: unknown): string {
  const all = list(subsets).map(obj);
  if (all.length === 0) return '<none>';
  const max = 3;
  const shown: string[] = [];
  let count = 0;
  for (const subset of all) {
    const addresses = list(subset['addresses']).map((a) => str(obj(a)['ip']));
    const ports = list(subset['ports']).map(obj);
    if (ports.length === 0) {
      count += addresses.length;
      for (const ip of addresses) if (shown.length < max) shown.push(ip);
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const ip of addresses) if (shown.length < max) shown.push(joinHostPort(ip, int(port['port'])));
    }
  }
  const text = shown.join(',');
  return count > max ? `${text} + ${count - max} more...` : text;
}

const ENDPOINTS: TablePrinter = {
  columns: columns(NAME, column('Endpoints', 'string', 'Addresses and ports of the endpoints.'), AGE),
  cells: (ep, now) => [name(ep), formatEndpoints(ep['subsets']), age(ep, now)],
};

const CONFIG_MAP: TablePrinter = {
  columns: columns(NAME, column('Data', 'string', 'Number of data and binaryData entries.'), AGE),
  cells: (cm, now) => [name(cm), mapSize(cm['data']) + mapSize(cm['binaryData']), age(cm, now)],
};

const SECRET: TablePrinter = {
  columns: columns(
    NAME,
    column('Type', 'string', 'Type of the secret.'),
    column('Data', 'string', 'Number of data entries.'),
    AGE,
  ),
  // stringData is write-only (merged into data on write), so only data counts.
  cells: (secret, now) => [name(secret), str(secret['type']), mapSize(secret['data']), age(secret, now)],
};

const SERVICE_ACCOUNT: TablePrinter = {
  columns: columns(NAME, column('Secrets', 'string', 'Number of secrets listed by the account.'), AGE),
  cells: (sa, now) => [name(sa), list(sa['secrets']).length, age(sa, now)],
};

/** `name: used/hard` pairs of a quota, split into the request and limit columns. */
function quotaCells(quota: KubeObject): [requests: string, limits: string] {
  const status = obj(quota['status']);
  const hard = stringMap(status['hard']);
  const used = stringMap(status['used']);
  const requests: string[] = [];
  const limits: string[] = [];
  for (const resource of [...hard.keys()].sort(compareStrings)) {
    const pieces = resource.split('.');
    const target = pieces.length > 1 && pieces[0] === 'limits' ? limits : requests;
    // A missing used quantity is Go's zero Quantity, printed as "0".
    target.push(`${resource}: ${used.get(resource) ?? '0'}/${hard.get(resource) ?? '0'}`);
  }
  return [requests.join(', '), limits.join(', ')];
}

const RESOURCE_QUOTA: TablePrinter = {
  columns: columns(
    NAME,
    column('Request', 'string', 'Used and hard amounts of requested resources.'),
    column('Limit', 'string', 'Used and hard amounts of resource limits.'),
    AGE,
  ),
  cells(quota, now) {
    const [requests, limits] = quotaCells(quota);
    return [name(quota), requests, limits, age(quota, now)];
  },
};

const POD_TEMPLATE: TablePrinter = {
  columns: columns(
    NAME,
    column('Containers', 'string', 'Names of the containers in the template.'),
    column('Images', 'string', 'Images of the containers in the template.'),
    column('Pod Labels', 'string', 'Labels of the pod template.'),
  ),
  cells(pt) {
    const template = obj(pt['template']);
    const [names, images] = containerCells(templateContainers(template));
    return [name(pt), names, images, formatLabels(obj(template['metadata'])['labels'])];
  },
};

const COMPONENT_STATUS: TablePrinter = {
  columns: columns(
    NAME,
    column('Status', 'string', 'Health of the component.'),
    column('Message', 'string', 'Message of the health condition.'),
    column('Error', 'string', 'Error of the health condition.'),
  ),
  cells(cs) {
    for (const item of list(cs['conditions'])) {
      const condition = obj(item);
      if (str(condition['type']) === 'Healthy') {
        const healthy = str(condition['status']) === 'True' ? 'Healthy' : 'Unhealthy';
        return [name(cs), healthy, str(condition['message']), str(condition['error'])];
      }
    }
    return [name(cs), 'Unknown', '', ''];
  },
};

/**
 * Core-group printers by resource, except `pods`, `events`, `persistentvolumes` and
 * `persistentvolumeclaims` (see their own modules). `limitranges` has no printer in kube either.
 */
export const CORE_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  nodes: NODE,
  namespaces: NAMESPACE,
  services: SERVICE,
  endpoints: ENDPOINTS,
  configmaps: CONFIG_MAP,
  secrets: SECRET,
  serviceaccounts: SERVICE_ACCOUNT,
  replicationcontrollers: replicaPrinter(formatLabels),
  resourcequotas: RESOURCE_QUOTA,
  podtemplates: POD_TEMPLATE,
  componentstatuses: COMPONENT_STATUS,
});
