/**
 * The flags of `capstan controller-manager`: kube-controller-manager v1.33's names, types and
 * defaults, so manifests written for it work unchanged. Flags whose feature is not built yet are
 * accepted and stored (`notImplemented`), and `--help` says so.
 */
import type { FlagSpec } from '../flags/flags.js';

const GENERIC = 'Generic';
const SERVING = 'Secure serving';
const LEADER = 'Leader election';
const CSR = 'CSR signing controller';
const NODE_IPAM = 'Node IPAM controller';
const NODE_LIFECYCLE = 'Node lifecycle controller';
const SA = 'Service account controller';
const GC = 'Garbage collector';
const POD_GC = 'Pod GC controller';
const ENDPOINT_SLICE = 'EndpointSlice controller';
const MIRRORING = 'EndpointSliceMirroring controller';
const PV_BINDER = 'Persistent volume binder controller';
const QUOTA = 'Resource quota controller';
const SYNCS = 'Concurrency';
const later = { notImplemented: true } as const;

/**
 * `--concurrent-<key>-syncs` flags and kube's defaults. The key is what controllers pass to
 * `concurrency(config, key)`.
 */
export const CONCURRENT_SYNCS: Readonly<Record<string, number>> = {
  'cron-job': 5,
  daemonset: 2,
  deployment: 5,
  endpoint: 5,
  ephemeralvolume: 5,
  gc: 20,
  'horizontal-pod-autoscaler': 5,
  job: 5,
  namespace: 10,
  rc: 5,
  replicaset: 5,
  'resource-quota': 5,
  service: 1,
  'service-endpoint': 5,
  serviceaccount: 5,
  'serviceaccount-token': 5,
  statefulset: 5,
  'ttl-after-finished': 5,
  'validating-admission-policy-status': 5,
};

// prettier-ignore
const BASE_FLAGS: readonly FlagSpec[] = [
  { section: GENERIC, name: 'kubeconfig', type: 'string', default: '', usage: 'Path to a kubeconfig file with the server location and credentials. Empty: in-cluster configuration.' },
  { section: GENERIC, name: 'master', type: 'string', default: '', usage: 'The address of the API server (overrides the server in --kubeconfig).' },
  { section: GENERIC, name: 'controllers', type: 'stringSlice', default: ['*'], usage: "Controllers to enable. '*' enables the controllers on by default; 'foo' enables foo; '-foo' disables foo." },
  { section: GENERIC, name: 'use-service-account-credentials', type: 'bool', default: false, usage: 'Each controller acts as its own service account (kube-system/<name>-controller), with a token requested for it.' },
  { section: GENERIC, name: 'kube-api-qps', type: 'float', default: 20, usage: 'Requests per second to the API server.' },
  { section: GENERIC, name: 'kube-api-burst', type: 'int', default: 30, usage: 'Burst of requests to the API server.' },
  { section: GENERIC, name: 'kube-api-content-type', type: 'string', default: 'application/vnd.kubernetes.protobuf', usage: 'Content type of requests sent to the API server (Capstan sends JSON).', ...later },
  { section: GENERIC, name: 'min-resync-period', type: 'duration', default: 43_200_000, usage: 'Informers resync between this and twice this.' },
  { section: GENERIC, name: 'controller-start-interval', type: 'duration', default: 0, usage: 'Pause between starting two controllers.' },
  { section: GENERIC, name: 'cluster-name', type: 'string', default: 'kubernetes', usage: 'The instance prefix of the cluster.' },
  { section: GENERIC, name: 'v', type: 'int', default: 0, usage: 'Log verbosity.', shorthand: 'v' },

  { section: SERVING, name: 'secure-port', type: 'int', default: 10257, usage: 'Port of the HTTPS listener serving /healthz and /metrics (self-signed certificate; no authentication). 0 turns it off.' },
  { section: SERVING, name: 'bind-address', type: 'string', default: '0.0.0.0', usage: 'Address the --secure-port listener binds to.' },
  { section: SERVING, name: 'cert-dir', type: 'string', default: '', usage: 'Directory of the TLS certificate of --secure-port.', ...later },
  { section: SERVING, name: 'tls-cert-file', type: 'string', default: '', usage: 'Serving certificate of --secure-port.', ...later },
  { section: SERVING, name: 'tls-private-key-file', type: 'string', default: '', usage: 'Key of --tls-cert-file.', ...later },
  { section: SERVING, name: 'authentication-kubeconfig', type: 'string', default: '', usage: 'Kubeconfig for TokenReview of requests to --secure-port.', ...later },
  { section: SERVING, name: 'authorization-kubeconfig', type: 'string', default: '', usage: 'Kubeconfig for SubjectAccessReview of requests to --secure-port.', ...later },

  { section: LEADER, name: 'leader-elect', type: 'bool', default: true, usage: 'Take a coordination.k8s.io Lease before running the controllers, so that only one of several managers acts.' },
  { section: LEADER, name: 'leader-elect-lease-duration', type: 'duration', default: 15_000, usage: 'How long other candidates wait after the last renewal before taking the lease.' },
  { section: LEADER, name: 'leader-elect-renew-deadline', type: 'duration', default: 10_000, usage: 'How long the leader keeps trying to renew before it stops leading.' },
  { section: LEADER, name: 'leader-elect-retry-period', type: 'duration', default: 2_000, usage: 'Pause between attempts to take or renew the lease.' },
  { section: LEADER, name: 'leader-elect-resource-lock', type: 'string', default: 'leases', usage: "The lock's kind: only 'leases'." },
  { section: LEADER, name: 'leader-elect-resource-name', type: 'string', default: 'kube-controller-manager', usage: 'Name of the Lease.' },
  { section: LEADER, name: 'leader-elect-resource-namespace', type: 'string', default: 'kube-system', usage: 'Namespace of the Lease.' },

  { section: CSR, name: 'cluster-signing-cert-file', type: 'string', default: '', usage: 'PEM CA certificate used to issue cluster-scoped certificates.' },
  { section: CSR, name: 'cluster-signing-key-file', type: 'string', default: '', usage: 'PEM private key of --cluster-signing-cert-file.' },
  { section: CSR, name: 'cluster-signing-duration', type: 'duration', default: 31_536_000_000, usage: 'Longest lifetime of signed certificates.' },
  { section: CSR, name: 'cluster-signing-kubelet-serving-cert-file', type: 'string', default: '', usage: 'CA certificate of the kubernetes.io/kubelet-serving signer.' },
  { section: CSR, name: 'cluster-signing-kubelet-serving-key-file', type: 'string', default: '', usage: 'Key of the kubernetes.io/kubelet-serving signer.' },
  { section: CSR, name: 'cluster-signing-kubelet-client-cert-file', type: 'string', default: '', usage: 'CA certificate of the kubernetes.io/kube-apiserver-client-kubelet signer.' },
  { section: CSR, name: 'cluster-signing-kubelet-client-key-file', type: 'string', default: '', usage: 'Key of the kubernetes.io/kube-apiserver-client-kubelet signer.' },
  { section: CSR, name: 'cluster-signing-kube-apiserver-client-cert-file', type: 'string', default: '', usage: 'CA certificate of the kubernetes.io/kube-apiserver-client signer.' },
  { section: CSR, name: 'cluster-signing-kube-apiserver-client-key-file', type: 'string', default: '', usage: 'Key of the kubernetes.io/kube-apiserver-client signer.' },
  { section: CSR, name: 'cluster-signing-legacy-unknown-cert-file', type: 'string', default: '', usage: 'CA certificate of the kubernetes.io/legacy-unknown signer.' },
  { section: CSR, name: 'cluster-signing-legacy-unknown-key-file', type: 'string', default: '', usage: 'Key of the kubernetes.io/legacy-unknown signer.' },

  { section: SA, name: 'root-ca-file', type: 'string', default: '', usage: "CA bundle put in service account token secrets and the kube-root-ca.crt ConfigMaps." },
  { section: SA, name: 'service-account-private-key-file', type: 'string', default: '', usage: 'PEM private key that signs service account tokens.' },

  { section: NODE_IPAM, name: 'allocate-node-cidrs', type: 'bool', default: false, usage: 'Allocate pod CIDRs to nodes from --cluster-cidr.' },
  { section: NODE_IPAM, name: 'cluster-cidr', type: 'string', default: '', usage: 'CIDR range of pods in the cluster (comma separated for dual stack).' },
  { section: NODE_IPAM, name: 'node-cidr-mask-size', type: 'int', default: 0, usage: 'Mask size of node CIDRs (0: 24 for IPv4, 64 for IPv6).' },
  { section: NODE_IPAM, name: 'node-cidr-mask-size-ipv4', type: 'int', default: 0, usage: 'Mask size of IPv4 node CIDRs in dual stack (0: 24).' },
  { section: NODE_IPAM, name: 'node-cidr-mask-size-ipv6', type: 'int', default: 0, usage: 'Mask size of IPv6 node CIDRs in dual stack (0: 64).' },
  { section: NODE_IPAM, name: 'service-cluster-ip-range', type: 'string', default: '', usage: 'CIDR range of Services, kept out of node CIDRs.' },

  { section: NODE_LIFECYCLE, name: 'node-monitor-grace-period', type: 'duration', default: 50_000, usage: 'How long a node may go without renewing its Lease or status before it is marked unhealthy (kube 1.32 raised the default from 40s to 50s).' },
  { section: NODE_LIFECYCLE, name: 'node-monitor-period', type: 'duration', default: 5_000, usage: 'Period of the node health checks.' },
  { section: NODE_LIFECYCLE, name: 'node-startup-grace-period', type: 'duration', default: 60_000, usage: 'How long a starting node may be unresponsive before it is marked unhealthy.' },
  { section: NODE_LIFECYCLE, name: 'node-eviction-rate', type: 'float', default: 0.1, usage: 'Nodes per second whose pods are evicted when a zone is healthy.', ...later },
  { section: NODE_LIFECYCLE, name: 'secondary-node-eviction-rate', type: 'float', default: 0.01, usage: 'Nodes per second whose pods are evicted when a zone is unhealthy.', ...later },
  { section: NODE_LIFECYCLE, name: 'large-cluster-size-threshold', type: 'int', default: 50, usage: 'Nodes from which a zone counts as large.', ...later },
  { section: NODE_LIFECYCLE, name: 'unhealthy-zone-threshold', type: 'float', default: 0.55, usage: 'Fraction of NotReady nodes from which a zone is unhealthy.', ...later },

  { section: GC, name: 'enable-garbage-collector', type: 'bool', default: true, usage: 'Run the garbage collector (must match the API server\'s setting).' },
  { section: POD_GC, name: 'terminated-pod-gc-threshold', type: 'int', default: 12500, usage: 'Terminated pods kept before the pod garbage collector deletes the oldest (0 or less: never).' },
  { section: ENDPOINT_SLICE, name: 'max-endpoints-per-slice', type: 'int', default: 100, usage: 'Most endpoints in one EndpointSlice (1 to 1000).' },
  { section: ENDPOINT_SLICE, name: 'endpoint-updates-batch-period', type: 'duration', default: 0, usage: 'How long endpoint changes are batched before a sync.', ...later },
  { section: MIRRORING, name: 'mirroring-concurrent-service-endpoint-syncs', type: 'int', default: 5, usage: 'Endpoints mirrored to EndpointSlices at once.' },
  { section: MIRRORING, name: 'mirroring-max-endpoints-per-subset', type: 'int', default: 1000, usage: 'Most addresses of one Endpoints subset mirrored to an EndpointSlice (1 to 1000).' },
  { section: MIRRORING, name: 'mirroring-endpointslice-updates-batch-period', type: 'duration', default: 0, usage: 'How long EndpointSlice changes are batched before the Endpoints are mirrored again.' },
  { section: PV_BINDER, name: 'pvclaimbinder-sync-period', type: 'duration', default: 15_000, usage: 'Period of the full resync of persistent volumes and claims.' },
  { section: PV_BINDER, name: 'enable-dynamic-provisioning', type: 'bool', default: true, usage: 'Provision claims of classes with a provisioner (external provisioners are asked through the claim\'s annotation).' },
  { section: QUOTA, name: 'resource-quota-sync-period', type: 'duration', default: 300_000, usage: 'Period of the full recalculation of every quota\'s usage.' },
  { section: ENDPOINT_SLICE, name: 'endpointslice-updates-batch-period', type: 'duration', default: 0, usage: 'How long EndpointSlice changes are batched before a sync.', ...later },
];

/** Every flag of `capstan controller-manager`, in help order. */
export const CONTROLLER_MANAGER_FLAGS: readonly FlagSpec[] = [
  ...BASE_FLAGS,
  ...Object.entries(CONCURRENT_SYNCS).map(([key, n]): FlagSpec => ({
    section: SYNCS,
    name: `concurrent-${key}-syncs`,
    type: 'int',
    default: n,
    usage: `Objects of the ${key} controller synced at once.`,
  })),
];
