/**
 * The agent's settings, with kubelet's names and defaults: command-line flags, and a
 * KubeletConfiguration file (`kubelet.config.k8s.io/v1beta1`, YAML or JSON) given by `--config`;
 * a flag given on the command line overrides the file, the file overrides the defaults.
 * `--authorization-mode` defaults to AlwaysAllow without `--config` and Webhook with it, and
 * `authentication.anonymous.enabled` to true without and false with it, as kubelet's config
 * defaults differ from its flag defaults.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FlagError, FlagSet, flagsOfSection, type FlagSpec, type ParsedFlags } from '../flags/flags.js';
import { parseDuration } from '../flags/duration.js';
import type { Taint } from '../api/types/core-v1.js';
import { SysctlAllowlist } from './pod/sysctls.js';

const f = flagsOfSection('Agent');

/** The flags of `capstan agent`. */
export const AGENT_FLAGS: readonly FlagSpec[] = [
  f('address', 'string', '0.0.0.0', 'The IP address for the agent to serve on.'),
  f('port', 'int', 10250, 'The port for the agent to serve on.'),
  f('enable-server', 'bool', true, "Enable the agent's server."),
  f(
    'enable-debugging-handlers',
    'bool',
    true,
    'Enables server endpoints for log collection and local running of containers and commands.',
  ),
  f('healthz-bind-address', 'string', '127.0.0.1', 'The IP address for the healthz server to serve on.'),
  f('healthz-port', 'int', 10248, 'The port of the localhost healthz endpoint (set to 0 to disable).'),
  f('config', 'string', '', 'A KubeletConfiguration file; command-line flags override its values.'),
  f(
    'kubeconfig',
    'string',
    '',
    'Path to a kubeconfig file for the API server; without it the agent runs standalone.',
  ),
  f(
    'bootstrap-kubeconfig',
    'string',
    '',
    'Path to a kubeconfig with a bootstrap token: when --kubeconfig is missing or its certificate expired, the agent requests its client certificate with it and writes --kubeconfig.',
  ),
  f('manifest-url', 'string', '', 'URL for accessing additional Pod specifications to run.'),
  f('manifest-url-header', 'stringArray', [], "Headers for --manifest-url requests, as 'key:value'."),
  f('hostname-override', 'string', '', 'The node name, instead of the host name.'),
  f('container-runtime-endpoint', 'string', 'unix:///run/containerd/containerd.sock', 'The CRI endpoint.'),
  f(
    'root-dir',
    'string',
    '/var/lib/kubelet',
    'Directory for the agent files (volume mounts, pki, CNI state).',
  ),
  f('cert-dir', 'string', '', 'Directory of the TLS certificates (default <root-dir>/pki).'),
  f('node-ip', 'string', '', 'The IP address of the node (default: the first non-loopback IPv4 address).'),
  f('node-labels', 'mapStringString', {}, 'Labels to add when registering the node.'),
  f('register-with-taints', 'stringSlice', [], "Taints to register the node with ('key=value:Effect')."),
  f(
    'pod-infra-container-image',
    'string',
    '',
    "Accepted for kubelet's compatibility; the runtime's sandbox_image applies.",
  ),
  f('anonymous-auth', 'bool', true, 'Enables anonymous requests to the agent server.'),
  f('client-ca-file', 'string', '', 'Authenticate client certificates signed by these CAs.'),
  f(
    'authorization-mode',
    'string',
    '',
    'AlwaysAllow or Webhook (default AlwaysAllow without --config, Webhook with it).',
  ),
  f(
    'rotate-certificates',
    'bool',
    false,
    'Rotate the client certificate: request a new one through a CertificateSigningRequest as the current one approaches expiry.',
  ),
  f(
    'rotate-server-certificates',
    'bool',
    false,
    'Request the serving certificate (signer kubernetes.io/kubelet-serving) through a CertificateSigningRequest and rotate it; without --tls-cert-file only.',
  ),
  f('tls-cert-file', 'string', '', 'Serving certificate (default: a self-signed one in --cert-dir).'),
  f('tls-private-key-file', 'string', '', 'Serving key for --tls-cert-file.'),
  f('max-pods', 'int', 110, 'Number of pods that can run on this node.'),
  f(
    'allowed-unsafe-sysctls',
    'stringSlice',
    [],
    'Comma-separated allowlist of unsafe sysctls or sysctl patterns (ending in *) pods may set, besides the safe ones.',
  ),
  f('event-qps', 'int', 5, 'Events per second the agent may write.'),
  f('event-burst', 'int', 10, 'Burst of events.'),
  f('pod-cidr', 'string', '', 'The pod CIDR of this node (default: the Node object spec.podCIDR).'),
  f('cluster-dns', 'stringSlice', [], 'DNS server IPs for pods.'),
  f('cluster-domain', 'string', '', 'The cluster domain.'),
  f(
    'cni-conf-dir',
    'string',
    '/etc/cni/net.d',
    'Where the agent writes its CNI network configuration (the runtime reads it).',
  ),
  f(
    'resolv-conf',
    'string',
    '/etc/resolv.conf',
    "Resolver configuration file used as the basis for the pods' DNS and the cluster DNS upstreams.",
  ),
  f('cni-bridge', 'string', 'capstan0', "The pod bridge of the agent's CNI configuration (Capstan's own)."),
  f('run-proxy', 'bool', false, "Run the Service proxy in the agent (Capstan's own)."),
  f(
    'run-cluster-dns',
    'bool',
    false,
    "Run the cluster DNS in the agent, as the kube-dns Service at the first --cluster-dns address (Capstan's own).",
  ),
  f('run-network-policy', 'bool', false, "Enforce NetworkPolicies in the agent (Capstan's own)."),
  f(
    'run-pod-routes',
    'bool',
    false,
    "Route the other nodes' pod CIDRs via their InternalIP, as flannel's host-gw backend (Capstan's own).",
  ),
  f(
    'proxy-kubeconfig',
    'string',
    '',
    "The in-agent proxy's kubeconfig (default --kubeconfig; Capstan's own).",
  ),
  f(
    'cluster-dns-kubeconfig',
    'string',
    '',
    "The in-agent cluster DNS's kubeconfig (default --kubeconfig; Capstan's own).",
  ),
  f(
    'network-policy-kubeconfig',
    'string',
    '',
    "The in-agent NetworkPolicy enforcer's kubeconfig (default --kubeconfig; Capstan's own).",
  ),
  f('pod-logs-dir', 'string', '/var/log/pods', 'Directory of container logs.'),
  f('cgroup-root', 'string', '/', 'The cgroup under which pods go.'),
];

/** Everything the agent runs with. Durations in ms. */
export interface AgentConfig {
  readonly address: string;
  readonly port: number;
  readonly enableServer: boolean;
  readonly enableDebuggingHandlers: boolean;
  readonly healthzBindAddress: string;
  readonly healthzPort: number;
  readonly kubeconfig: string;
  readonly bootstrapKubeconfig: string;
  readonly manifestURL: string;
  readonly manifestURLHeader: Readonly<Record<string, string[]>>;
  readonly hostnameOverride: string;
  readonly containerRuntimeEndpoint: string;
  readonly rootDir: string;
  readonly certDir: string;
  readonly nodeIP: string;
  readonly nodeLabels: Readonly<Record<string, string>>;
  readonly registerWithTaints: readonly Taint[];
  readonly anonymousAuth: boolean;
  readonly clientCAFile: string;
  readonly authorizationMode: 'AlwaysAllow' | 'Webhook';
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  /** kubelet's `rotateCertificates`. */
  readonly rotateCertificates: boolean;
  /** kubelet's `serverTLSBootstrap` (`--rotate-server-certificates`). */
  readonly serverTLSBootstrap: boolean;
  readonly maxPods: number;
  /** `--allowed-unsafe-sysctls` as given. */
  readonly allowedUnsafeSysctls: readonly string[];
  /** The sysctls pods may set here: the safe ones and `allowedUnsafeSysctls`, checked once. */
  readonly sysctls: SysctlAllowlist;
  readonly eventQPS: number;
  readonly eventBurst: number;
  readonly podCIDR: string;
  readonly clusterDNS: readonly string[];
  readonly clusterDomain: string;
  readonly cniConfDir: string;
  readonly podLogsDir: string;
  readonly cgroupRoot: string;
  readonly staticPodPath: string;
  readonly fileCheckFrequencyMs: number;
  readonly httpCheckFrequencyMs: number;
  readonly evictionHard: Readonly<Record<string, string>>;
  readonly serializeImagePulls: boolean;
  /** kubelet's `--resolv-conf`. */
  readonly resolvConf: string;
  /** The CNI conf's bridge. */
  readonly cniBridge: string;
  /** Components run in-process, with their kubeconfigs ('' = `kubeconfig`). */
  readonly runProxy: boolean;
  readonly runClusterDNS: boolean;
  readonly runNetworkPolicy: boolean;
  readonly runPodRoutes: boolean;
  readonly proxyKubeconfig: string;
  readonly clusterDNSKubeconfig: string;
  readonly networkPolicyKubeconfig: string;
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function parseTaint(text: string): Taint {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(text);
  if (!m) throw new FlagError(`invalid taint ${text}: expected key=value:Effect`);
  return { key: m[1] ?? '', ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3] ?? '' };
}

/** Reads a KubeletConfiguration file. @throws Error naming the file on a bad kind or syntax. */
export function readConfigFile(path: string): Json {
  const text = readFileSync(path, 'utf8');
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const doc = obj(parse(text));
  if (doc['kind'] !== 'KubeletConfiguration' || doc['apiVersion'] !== 'kubelet.config.k8s.io/v1beta1') {
    throw new Error(`${path}: expected kind KubeletConfiguration of kubelet.config.k8s.io/v1beta1`);
  }
  return doc;
}

/** Builds the configuration from parsed flags (and the file they name). */
export function resolveConfig(parsed: ParsedFlags): AgentConfig {
  const v = parsed.values;
  const configPath = typeof v.get('config') === 'string' ? (v.get('config') as string) : '';
  const file = configPath ? readConfigFile(configPath) : {};
  const pick = <T>(flag: string, key: string | undefined, conv: (x: unknown) => T): T => {
    if (parsed.changed.has(flag) || key === undefined || file[key] === undefined) return conv(v.get(flag));
    return conv(file[key]);
  };
  const str = (x: unknown): string =>
    typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : '';
  const num = (x: unknown): number => Number(x);
  const bool = (x: unknown): boolean => x === true || x === 'true';
  const strs = (x: unknown): string[] => (Array.isArray(x) ? x.map(String) : []);
  const authn = obj(file['authentication']);
  const authz = obj(file['authorization']);
  const anonymous = parsed.changed.has('anonymous-auth')
    ? bool(v.get('anonymous-auth'))
    : configPath
      ? obj(authn['anonymous'])['enabled'] === true
      : true;
  const clientCA = parsed.changed.has('client-ca-file')
    ? str(v.get('client-ca-file'))
    : str(obj(authn['x509'])['clientCAFile'] ?? v.get('client-ca-file'));
  const modeText = parsed.changed.has('authorization-mode')
    ? str(v.get('authorization-mode'))
    : str(authz['mode']) || (configPath ? 'Webhook' : 'AlwaysAllow');
  if (modeText !== 'AlwaysAllow' && modeText !== 'Webhook')
    throw new FlagError(`invalid authorization mode ${modeText}: AlwaysAllow or Webhook`);
  const dur = (key: string, def: string): number => {
    const raw = file[key];
    return parseDuration(typeof raw === 'string' ? raw : def);
  };
  const headers: Record<string, string[]> = {};
  for (const h of strs(v.get('manifest-url-header'))) {
    const i = h.indexOf(':');
    if (i < 1) throw new FlagError(`invalid --manifest-url-header ${h}: expected key:value`);
    (headers[h.slice(0, i)] ??= []).push(h.slice(i + 1));
  }
  const rootDir = pick('root-dir', undefined, str);
  const taintTexts = pick('register-with-taints', undefined, strs);
  const fileTaints =
    Array.isArray(file['registerWithTaints']) && !parsed.changed.has('register-with-taints')
      ? (file['registerWithTaints'] as Taint[])
      : undefined;
  const allowedUnsafeSysctls = pick('allowed-unsafe-sysctls', 'allowedUnsafeSysctls', strs);
  let sysctls: SysctlAllowlist;
  try {
    sysctls = new SysctlAllowlist(allowedUnsafeSysctls);
  } catch (err) {
    throw new FlagError(`invalid --allowed-unsafe-sysctls: ${(err as Error).message}`);
  }
  return {
    address: pick('address', 'address', str),
    port: pick('port', 'port', num),
    enableServer: pick('enable-server', 'enableServer', bool),
    enableDebuggingHandlers: pick('enable-debugging-handlers', 'enableDebuggingHandlers', bool),
    healthzBindAddress: pick('healthz-bind-address', 'healthzBindAddress', str),
    healthzPort: pick('healthz-port', 'healthzPort', num),
    kubeconfig: str(v.get('kubeconfig')),
    bootstrapKubeconfig: str(v.get('bootstrap-kubeconfig')),
    manifestURL: pick('manifest-url', 'staticPodURL', str),
    manifestURLHeader: headers,
    hostnameOverride: str(v.get('hostname-override')),
    containerRuntimeEndpoint: pick('container-runtime-endpoint', 'containerRuntimeEndpoint', str),
    rootDir,
    certDir: str(v.get('cert-dir')) || `${rootDir}/pki`,
    nodeIP: str(v.get('node-ip')),
    nodeLabels: (v.get('node-labels') ?? {}) as Record<string, string>,
    registerWithTaints: fileTaints ?? taintTexts.map(parseTaint),
    anonymousAuth: anonymous,
    clientCAFile: clientCA,
    authorizationMode: modeText,
    tlsCertFile: pick('tls-cert-file', 'tlsCertFile', str),
    tlsPrivateKeyFile: pick('tls-private-key-file', 'tlsPrivateKeyFile', str),
    rotateCertificates: pick('rotate-certificates', 'rotateCertificates', bool),
    serverTLSBootstrap: pick('rotate-server-certificates', 'serverTLSBootstrap', bool),
    maxPods: pick('max-pods', 'maxPods', num),
    allowedUnsafeSysctls,
    sysctls,
    eventQPS: pick('event-qps', 'eventRecordQPS', num),
    eventBurst: pick('event-burst', 'eventBurst', num),
    podCIDR: pick('pod-cidr', 'podCIDR', str),
    clusterDNS: pick('cluster-dns', 'clusterDNS', strs),
    clusterDomain: pick('cluster-domain', 'clusterDomain', str),
    cniConfDir: str(v.get('cni-conf-dir')),
    podLogsDir: pick('pod-logs-dir', 'podLogsDir', str),
    cgroupRoot: pick('cgroup-root', 'cgroupRoot', str),
    staticPodPath: str(file['staticPodPath']),
    fileCheckFrequencyMs: dur('fileCheckFrequency', '20s'),
    httpCheckFrequencyMs: dur('httpCheckFrequency', '20s'),
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'imagefs.available': '15%',
      'nodefs.inodesFree': '5%',
      ...(obj(file['evictionHard']) as Record<string, string>),
    },
    serializeImagePulls:
      file['serializeImagePulls'] === undefined ? true : file['serializeImagePulls'] === true,
    resolvConf: pick('resolv-conf', 'resolvConf', str),
    cniBridge: str(v.get('cni-bridge')),
    runProxy: bool(v.get('run-proxy')),
    runClusterDNS: bool(v.get('run-cluster-dns')),
    runNetworkPolicy: bool(v.get('run-network-policy')),
    runPodRoutes: bool(v.get('run-pod-routes')),
    proxyKubeconfig: str(v.get('proxy-kubeconfig')),
    clusterDNSKubeconfig: str(v.get('cluster-dns-kubeconfig')),
    networkPolicyKubeconfig: str(v.get('network-policy-kubeconfig')),
  };
}

/** The flag set of `capstan agent`. */
export function agentFlagSet(): FlagSet {
  return new FlagSet('capstan agent', AGENT_FLAGS);
}
