import { describe, expect, it } from 'vitest';
import { DEFAULT_PRINTER, printerFor } from '../../src/table/index.js';

/**
 * Column headers per resource as kube-apiserver 1.33 declares them: `name:type` for priority 0,
 * `name:type:wide` for priority 1. Hand-copied from the column definitions in printers.go (and the
 * aggregator's APIService table).
 */
const EXPECTED: Record<string, string[]> = {
  '/pods': [
    'Name',
    'Ready',
    'Status',
    'Restarts',
    'Age',
    'IP:w',
    'Node:w',
    'Nominated Node:w',
    'Readiness Gates:w',
  ],
  '/nodes': [
    'Name',
    'Status',
    'Roles',
    'Age',
    'Version',
    'Internal-IP:w',
    'External-IP:w',
    'OS-Image:w',
    'Kernel-Version:w',
    'Container-Runtime:w',
  ],
  '/namespaces': ['Name', 'Status', 'Age'],
  '/services': ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector:w'],
  '/endpoints': ['Name', 'Endpoints', 'Age'],
  '/configmaps': ['Name', 'Data', 'Age'],
  '/secrets': ['Name', 'Type', 'Data', 'Age'],
  '/serviceaccounts': ['Name', 'Secrets', 'Age'],
  '/events': [
    'Last Seen',
    'Type',
    'Reason',
    'Object',
    'Subobject:w',
    'Source:w',
    'Message',
    'First Seen:w',
    'Count:w',
    'Name:w',
  ],
  'events.k8s.io/events': [
    'Last Seen',
    'Type',
    'Reason',
    'Object',
    'Subobject:w',
    'Source:w',
    'Message',
    'First Seen:w',
    'Count:w',
    'Name:w',
  ],
  '/persistentvolumes': [
    'Name',
    'Capacity',
    'Access Modes',
    'Reclaim Policy',
    'Status',
    'Claim',
    'StorageClass',
    'VolumeAttributesClass',
    'Reason',
    'Age',
    'VolumeMode:w',
  ],
  '/persistentvolumeclaims': [
    'Name',
    'Status',
    'Volume',
    'Capacity',
    'Access Modes',
    'StorageClass',
    'VolumeAttributesClass',
    'Age',
    'VolumeMode:w',
  ],
  '/replicationcontrollers': [
    'Name',
    'Desired',
    'Current',
    'Ready',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  '/resourcequotas': ['Name', 'Request', 'Limit', 'Age'],
  '/podtemplates': ['Name', 'Containers', 'Images', 'Pod Labels'],
  '/componentstatuses': ['Name', 'Status', 'Message', 'Error'],
  'apps/deployments': [
    'Name',
    'Ready',
    'Up-to-date',
    'Available',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  'apps/replicasets': [
    'Name',
    'Desired',
    'Current',
    'Ready',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  'apps/statefulsets': ['Name', 'Ready', 'Age', 'Containers:w', 'Images:w'],
  'apps/daemonsets': [
    'Name',
    'Desired',
    'Current',
    'Ready',
    'Up-to-date',
    'Available',
    'Node Selector',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  'apps/controllerrevisions': ['Name', 'Controller', 'Revision', 'Age'],
  'batch/jobs': [
    'Name',
    'Status',
    'Completions',
    'Duration',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  'batch/cronjobs': [
    'Name',
    'Schedule',
    'Timezone',
    'Suspend',
    'Active',
    'Last Schedule',
    'Age',
    'Containers:w',
    'Images:w',
    'Selector:w',
  ],
  'autoscaling/horizontalpodautoscalers': [
    'Name',
    'Reference',
    'Targets',
    'MinPods',
    'MaxPods',
    'Replicas',
    'Age',
  ],
  'policy/poddisruptionbudgets': ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'],
  'networking.k8s.io/ingresses': ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age'],
  'networking.k8s.io/ingressclasses': ['Name', 'Controller', 'Parameters', 'Age'],
  'networking.k8s.io/networkpolicies': ['Name', 'Pod-Selector', 'Age'],
  'networking.k8s.io/servicecidrs': ['Name', 'CIDRs', 'Age'],
  'networking.k8s.io/ipaddresses': ['Name', 'ParentRef'],
  'discovery.k8s.io/endpointslices': ['Name', 'AddressType', 'Ports', 'Endpoints', 'Age'],
  'rbac.authorization.k8s.io/rolebindings': [
    'Name',
    'Role',
    'Age',
    'Users:w',
    'Groups:w',
    'ServiceAccounts:w',
  ],
  'rbac.authorization.k8s.io/clusterrolebindings': [
    'Name',
    'Role',
    'Age',
    'Users:w',
    'Groups:w',
    'ServiceAccounts:w',
  ],
  'storage.k8s.io/storageclasses': [
    'Name',
    'Provisioner',
    'ReclaimPolicy',
    'VolumeBindingMode',
    'AllowVolumeExpansion',
    'Age',
  ],
  'storage.k8s.io/volumeattributesclasses': ['Name', 'DriverName', 'Age'],
  'storage.k8s.io/csidrivers': [
    'Name',
    'AttachRequired',
    'PodInfoOnMount',
    'StorageCapacity',
    'TokenRequests',
    'RequiresRepublish',
    'Modes',
    'Age',
  ],
  'storage.k8s.io/csinodes': ['Name', 'Drivers', 'Age'],
  'storage.k8s.io/volumeattachments': ['Name', 'Attacher', 'PV', 'Node', 'Attached', 'Age'],
  'storage.k8s.io/csistoragecapacities': ['Name', 'StorageClassName', 'Capacity'],
  'coordination.k8s.io/leases': ['Name', 'Holder', 'Age'],
  'coordination.k8s.io/leasecandidates': ['Name', 'LeaseName', 'BinaryVersion', 'EmulationVersion', 'Age'],
  'scheduling.k8s.io/priorityclasses': ['Name', 'Value', 'Global-Default', 'Age', 'PreemptionPolicy'],
  'node.k8s.io/runtimeclasses': ['Name', 'Handler', 'Age'],
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': ['Name', 'Webhooks', 'Age'],
  'admissionregistration.k8s.io/validatingwebhookconfigurations': ['Name', 'Webhooks', 'Age'],
  'admissionregistration.k8s.io/validatingadmissionpolicies': ['Name', 'Validations', 'ParamKind', 'Age'],
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': ['Name', 'PolicyName', 'ParamRef', 'Age'],
  'admissionregistration.k8s.io/mutatingadmissionpolicies': ['Name', 'Mutations', 'ParamKind', 'Age'],
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': ['Name', 'PolicyName', 'ParamRef', 'Age'],
  'apiregistration.k8s.io/apiservices': ['Name', 'Service', 'Available', 'Age'],
  'certificates.k8s.io/certificatesigningrequests': [
    'Name',
    'Age',
    'SignerName',
    'Requestor',
    'RequestedDuration',
    'Condition',
  ],
  'certificates.k8s.io/clustertrustbundles': ['Name', 'SignerName'],
  'flowcontrol.apiserver.k8s.io/flowschemas': [
    'Name',
    'PriorityLevel',
    'MatchingPrecedence',
    'DistinguisherMethod',
    'Age',
    'MissingPL',
  ],
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': [
    'Name',
    'Type',
    'NominalConcurrencyShares',
    'Queues',
    'HandSize',
    'QueueLengthLimit',
    'Age',
  ],
};

/** Column types that are not `string` in kube's definitions. */
const NON_STRING_TYPES: Record<string, Record<string, string>> = {
  '/replicationcontrollers': { Desired: 'integer', Current: 'integer', Ready: 'integer' },
  'apps/replicasets': { Desired: 'integer', Current: 'integer', Ready: 'integer' },
  'apps/daemonsets': {
    Desired: 'integer',
    Current: 'integer',
    Ready: 'integer',
    'Up-to-date': 'integer',
    Available: 'integer',
  },
  'batch/cronjobs': { Suspend: 'boolean', Active: 'integer' },
  'policy/poddisruptionbudgets': { 'Allowed Disruptions': 'integer' },
  'storage.k8s.io/csidrivers': {
    AttachRequired: 'boolean',
    PodInfoOnMount: 'boolean',
    StorageCapacity: 'boolean',
    RequiresRepublish: 'boolean',
  },
  'storage.k8s.io/csinodes': { Drivers: 'integer' },
  'storage.k8s.io/volumeattachments': { Attached: 'boolean' },
  'scheduling.k8s.io/priorityclasses': { Value: 'integer', 'Global-Default': 'boolean' },
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': { Webhooks: 'integer' },
  'admissionregistration.k8s.io/validatingwebhookconfigurations': { Webhooks: 'integer' },
  'admissionregistration.k8s.io/validatingadmissionpolicies': { Validations: 'integer' },
  'admissionregistration.k8s.io/mutatingadmissionpolicies': { Mutations: 'integer' },
};

function printer(key: string) {
  const slash = key.indexOf('/');
  return printerFor(key.slice(0, slash), key.slice(slash + 1));
}

describe('column sets', () => {
  it.each(Object.entries(EXPECTED))('%s', (key, expected) => {
    const p = printer(key);
    expect(p).not.toBe(DEFAULT_PRINTER);
    expect(p.columns.map((c) => (c.priority === 1 ? `${c.name}:w` : c.name))).toEqual(expected);
    const types = NON_STRING_TYPES[key] ?? {};
    for (const c of p.columns) {
      expect(c.type, c.name).toBe(types[c.name] ?? 'string');
      expect([0, 1]).toContain(c.priority);
      expect(c.description).not.toBe('');
    }
    // The object-name column is marked; only VolumeAttachment's Attacher shares the format in kube.
    const named = p.columns.filter((c) => c.format === 'name').map((c) => c.name);
    expect(named).toEqual(key === 'storage.k8s.io/volumeattachments' ? ['Name', 'Attacher'] : ['Name']);
  });

  it.each(Object.keys(EXPECTED))('%s yields one cell per column, even for a bare object', (key) => {
    const p = printer(key);
    expect(p.cells({ metadata: {} }, new Date(0))).toHaveLength(p.columns.length);
    expect(p.cells({ metadata: { name: 'x' }, spec: null, status: 'junk' }, new Date(0))).toHaveLength(
      p.columns.length,
    );
  });

  it.each([
    ['rbac.authorization.k8s.io', 'roles'],
    ['rbac.authorization.k8s.io', 'clusterroles'],
    ['', 'limitranges'],
    ['apiextensions.k8s.io', 'customresourcedefinitions'],
    ['example.com', 'widgets'],
    ['', 'constructor'],
    ['apps', '__proto__'],
    ['', 'toString'],
  ])('%s/%s uses the default Name / Created At table', (group, resource) => {
    expect(printerFor(group, resource)).toBe(DEFAULT_PRINTER);
  });
});
