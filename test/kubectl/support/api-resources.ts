/**
 * `kubectl api-resources`: its table parsed, and the rows expected of a server that serves the
 * registry's kinds (each at its group's preferred version, as kubectl shows them).
 */
import { loadRegistry } from '../../../src/registry/registry.js';
import { lines } from './kubectl.js';
import { METRICS_GROUP, METRICS_RESOURCES, METRICS_VERSION } from '../../../src/metrics-api/handler.js';

/** One row of `kubectl api-resources`. */
export interface ApiResourceRow {
  readonly name: string;
  readonly shortNames: string;
  readonly apiVersion: string;
  readonly namespaced: string;
  readonly kind: string;
}

const COLUMNS = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'] as const;

/**
 * Parses the table by its header's column offsets (cells may be empty, so splitting on blanks
 * would shift them).
 * @throws Error when a column is missing from the header.
 */
export function parseApiResources(text: string): ApiResourceRow[] {
  const [header = '', ...rows] = lines(text.replace(/\s+$/gm, ''));
  const offsets = COLUMNS.map((c) => {
    const at = header.indexOf(c);
    if (at < 0) throw new Error(`api-resources header has no ${c}: ${header}`);
    return at;
  });
  return rows.map((line) => {
    const cell = (i: number): string => line.slice(offsets[i], offsets[i + 1] ?? line.length).trim();
    return { name: cell(0), shortNames: cell(1), apiVersion: cell(2), namespaced: cell(3), kind: cell(4) };
  });
}

/** The rows the registry promises, one per type at its group's preferred version. */
export function expectedApiResources(): ApiResourceRow[] {
  const registry = loadRegistry();
  return [
    ...registry
      .all()
      .filter((t) => registry.group(t.group)?.preferredVersion === t.version)
      .map((t) => ({
        name: t.plural,
        shortNames: t.shortNames.join(','),
        apiVersion: t.apiVersion,
        namespaced: String(t.namespaced),
        kind: t.kind,
      })),
    ...METRICS_API_ROWS,
  ];
}

/**
 * `metrics.k8s.io/v1beta1`, which Capstan serves itself (src/metrics-api: `kubectl top` without
 * metrics-server), outside the registry of stored kinds.
 */
export const METRICS_API_ROWS: readonly ApiResourceRow[] = METRICS_RESOURCES.map((r) => ({
  name: String(r['name']),
  shortNames: '',
  apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`,
  namespaced: String(r['namespaced']),
  kind: String(r['kind']),
}));

/**
 * Rows as kube-apiserver 1.33 lists them, written down independently of the registry: the kinds
 * of the application manifest and a few more with well-known short names.
 */
export const KUBE_ROWS: readonly ApiResourceRow[] = [
  row('namespaces', 'ns', 'v1', false, 'Namespace'),
  row('configmaps', 'cm', 'v1', true, 'ConfigMap'),
  row('secrets', '', 'v1', true, 'Secret'),
  row('serviceaccounts', 'sa', 'v1', true, 'ServiceAccount'),
  row('services', 'svc', 'v1', true, 'Service'),
  row('pods', 'po', 'v1', true, 'Pod'),
  row('nodes', 'no', 'v1', false, 'Node'),
  row('persistentvolumeclaims', 'pvc', 'v1', true, 'PersistentVolumeClaim'),
  row('persistentvolumes', 'pv', 'v1', false, 'PersistentVolume'),
  row('replicationcontrollers', 'rc', 'v1', true, 'ReplicationController'),
  row('resourcequotas', 'quota', 'v1', true, 'ResourceQuota'),
  row('limitranges', 'limits', 'v1', true, 'LimitRange'),
  row('endpoints', 'ep', 'v1', true, 'Endpoints'),
  row('deployments', 'deploy', 'apps/v1', true, 'Deployment'),
  row('statefulsets', 'sts', 'apps/v1', true, 'StatefulSet'),
  row('daemonsets', 'ds', 'apps/v1', true, 'DaemonSet'),
  row('replicasets', 'rs', 'apps/v1', true, 'ReplicaSet'),
  row('roles', '', 'rbac.authorization.k8s.io/v1', true, 'Role'),
  row('rolebindings', '', 'rbac.authorization.k8s.io/v1', true, 'RoleBinding'),
  row('ingresses', 'ing', 'networking.k8s.io/v1', true, 'Ingress'),
  row('networkpolicies', 'netpol', 'networking.k8s.io/v1', true, 'NetworkPolicy'),
  row('cronjobs', 'cj', 'batch/v1', true, 'CronJob'),
  row('jobs', '', 'batch/v1', true, 'Job'),
  row('poddisruptionbudgets', 'pdb', 'policy/v1', true, 'PodDisruptionBudget'),
  row('horizontalpodautoscalers', 'hpa', 'autoscaling/v2', true, 'HorizontalPodAutoscaler'),
  row('storageclasses', 'sc', 'storage.k8s.io/v1', false, 'StorageClass'),
  row('priorityclasses', 'pc', 'scheduling.k8s.io/v1', false, 'PriorityClass'),
  row('certificatesigningrequests', 'csr', 'certificates.k8s.io/v1', false, 'CertificateSigningRequest'),
  row('customresourcedefinitions', 'crd,crds', 'apiextensions.k8s.io/v1', false, 'CustomResourceDefinition'),
];

function row(
  name: string,
  shortNames: string,
  apiVersion: string,
  namespaced: boolean,
  kind: string,
): ApiResourceRow {
  return { name, shortNames, apiVersion, namespaced: String(namespaced), kind };
}
