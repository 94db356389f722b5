/**
 * `capstan server` options: the parsed flags of `flag-table.ts`, validated and typed. Durations
 * are milliseconds. Flags that later versions implement are kept in {@link ServerOptions.flags}.
 */
import type { Cidr } from '../api/cidr.js';
import { parseServiceClusterIPRange, parseServiceNodePortRange } from '../ipam/flags.js';
import type { PortRange } from '../ipam/node-ports.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { FlagError, FlagSet, type FlagValue } from '../flags/flags.js';
import {
  STORAGE_MEDIA_TYPES,
  storageMediaType,
  type StorageMediaType,
} from '../representation/storage-codec.js';
import { compileOrigins, hstsHeaderValue } from '../http/cors.js';
import {
  AuthorizationConfigError,
  loadAuthorizationConfig,
  modesOf,
  type AuthorizationConfig,
} from '../authz/authorization-config.js';
import { parseServiceAccountFlags, type ServiceAccountFlags } from '../serviceaccount/flags.js';
import { opensslCiphers } from '../tls/cipher-suites.js';
import { parseSniCertKey } from '../tls/sni.js';
import { KINDS } from '../registry/kinds.js';
import { ApiEnablement, RuntimeConfigError } from '../registry/runtime-config.js';
import { goawayChanceError } from './connection-limits.js';
import { SERVER_FLAGS } from './flag-table.js';
import { parseAuditFlags, type AuditFlags } from '../audit/flags.js';
import { pluginFlagErrors, unimplementedPlugins } from '../admission/plugins.js';
import { parseControllerSelection, type ControllerSelection } from '../flags/controllers.js';
import { SERVER_CONTROLLERS } from './controllers.js';

/** Authorization modes kube-apiserver knows (all implemented in src/authz/). */
export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;

const TLS_VERSIONS: Readonly<Record<string, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/**
 * Resources the server's own controllers read and write (namespace lifecycle, service accounts
 * and their tokens, cluster IPs and the `default/kubernetes` Service): `--runtime-config` may not
 * turn them off.
 */
const CONTROLLER_RESOURCES: readonly string[] = [
  '/v1/namespaces',
  '/v1/services',
  '/v1/endpoints',
  '/v1/secrets',
  '/v1/serviceaccounts',
  'networking.k8s.io/v1/ipaddresses',
  'networking.k8s.io/v1/servicecidrs',
  'discovery.k8s.io/v1/endpointslices',
];

/** Validated options of `capstan server`. */
export interface ServerOptions {
  readonly securePort: number;
  readonly bindAddress: string;
  readonly advertiseAddress: string;
  /** `--service-cluster-ip-range`, primary first (10.0.0.0/24 when unset). */
  readonly serviceClusterIPRanges: readonly Cidr[];
  /** `--service-node-port-range`. */
  readonly serviceNodePortRange: PortRange;
  /** Absolute. */
  readonly certDir: string;
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  /** Node's name of `--tls-min-version`, or undefined for Node's default. */
  readonly tlsMinVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3' | undefined;
  readonly http2MaxStreamsPerConnection: number;
  readonly clientCaFile: string;
  readonly anonymousAuth: boolean;
  /** The authorization modes in order: `--authorization-mode`, or the types of `--authorization-config`. */
  readonly authorizationModes: readonly string[];
  /** `--authorization-config` (absolute path and its loaded content), when given. */
  readonly authorizationConfig: { readonly path: string; readonly config: AuthorizationConfig } | undefined;
  /** Empty: the embedded store under `dataDir`. */
  readonly etcdServers: readonly string[];
  readonly etcdCaFile: string;
  readonly etcdCertFile: string;
  readonly etcdKeyFile: string;
  /** Key prefix of every resource, without a trailing slash (`/registry`). */
  readonly etcdPrefix: string;
  /** 0 disables compaction. */
  readonly etcdCompactionIntervalMs: number;
  readonly etcdHealthcheckTimeoutMs: number;
  readonly etcdReadycheckTimeoutMs: number;
  /** `etcd3`: etcd or the embedded LevelDB store; `memory` (Capstan's own): nothing persists. */
  readonly storageBackend: 'etcd3' | 'memory';
  /** `--storage-media-type` (YAML stores JSON). */
  readonly storageMediaType: StorageMediaType;
  readonly eventTtlMs: number;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly watchCache: boolean;
  readonly defaultWatchCacheSize: number;
  readonly runtimeConfig: Readonly<Record<string, string>>;
  /** What `--runtime-config` serves (kube 1.33's default set when unset). */
  readonly apiEnablement: ApiEnablement;
  readonly shutdownDelayMs: number;
  /** Absolute. */
  readonly dataDir: string;
  /** The `--service-account-*` and `--api-audiences` flags. */
  readonly serviceAccount: ServiceAccountFlags;
  /** `--encryption-provider-config` (absolute), or ''. */
  readonly encryptionProviderConfig: string;
  /** The `--audit-*` flags. */
  readonly audit: AuditFlags;
  /** `--admission-control-config-file` (absolute), or ''. */
  readonly admissionControlConfigFile: string;
  /** `--controllers`: which in-process controllers run (kube-controller-manager's names). */
  readonly controllers: ControllerSelection;
  /** Every flag's value by name, including those not implemented yet. */
  readonly flags: ReadonlyMap<string, FlagValue>;
  /** Flags given on the command line. */
  readonly changed: ReadonlySet<string>;
}

/** The outcome of parsing: options, or a request for help. */
export type ParsedServerArgs =
  { readonly help: true } | { readonly help: false; readonly options: ServerOptions };

/** The flag set of `capstan server` (fresh per call: no shared state). */
export function serverFlagSet(): FlagSet {
  return new FlagSet('capstan server', SERVER_FLAGS);
}

const HELP_HEADER = `usage: capstan server [flags]

Runs the Capstan API server: the Kubernetes resource API over HTTPS, on the embedded store under
--data-dir or on etcd (--etcd-servers). Flag names and defaults follow kube-apiserver. Flags marked
[accepted, not implemented yet] are parsed, checked and stored; they take effect in later versions.
`;

/** `--help` text. */
export function serverHelp(): string {
  return `${HELP_HEADER}\n${serverFlagSet().usage()}`;
}

/**
 * Parses and validates `capstan server` arguments. Relative paths are resolved against `cwd`.
 * @throws FlagError for unknown flags, malformed values, positional arguments and values out
 *   of range (all exit status 2).
 */
export function parseServerArgs(argv: readonly string[], cwd: string = process.cwd()): ParsedServerArgs {
  const parsed = serverFlagSet().parse(argv);
  if (parsed.help) return { help: true };
  if (parsed.args.some((a) => a !== '')) {
    throw new FlagError(`"capstan server" does not take any arguments, got ${JSON.stringify(parsed.args)}`);
  }
  const v = parsed.values;
  const str = (name: string): string => v.get(name) as string;
  const int = (name: string): number => v.get(name) as number;
  const bool = (name: string): boolean => v.get(name) as boolean;
  const list = (name: string): readonly string[] =>
    (v.get(name) as readonly string[]).filter((s) => s !== '');

  const securePort = int('secure-port');
  if (securePort < 0 || securePort > 65535) {
    throw new FlagError(`--secure-port ${securePort} must be between 0 and 65535, inclusive`);
  }
  const bindAddress = str('bind-address');
  if (bindAddress !== '' && isIP(bindAddress) === 0) {
    throw new FlagError(`--bind-address ${JSON.stringify(bindAddress)} must be a valid IP address`);
  }
  const advertiseAddress = str('advertise-address');
  if (advertiseAddress !== '' && isIP(advertiseAddress) === 0) {
    throw new FlagError(`--advertise-address ${JSON.stringify(advertiseAddress)} must be a valid IP address`);
  }
  let serviceClusterIPRanges: Cidr[];
  let serviceNodePortRange: PortRange;
  try {
    serviceClusterIPRanges = parseServiceClusterIPRange(str('service-cluster-ip-range'));
    serviceNodePortRange = parseServiceNodePortRange(str('service-node-port-range'));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const tlsMin = str('tls-min-version');
  const tlsMinVersion = tlsMin === '' ? undefined : TLS_VERSIONS[tlsMin];
  if (tlsMin !== '' && tlsMinVersion === undefined) {
    throw new FlagError(
      `--tls-min-version ${JSON.stringify(tlsMin)} is not one of ${Object.keys(TLS_VERSIONS).join(', ')}`,
    );
  }
  if ((str('tls-cert-file') === '') !== (str('tls-private-key-file') === '')) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  if ((str('etcd-certfile') === '') !== (str('etcd-keyfile') === '')) {
    throw new FlagError('--etcd-certfile and --etcd-keyfile must be given together');
  }
  const storageBackend = str('storage-backend');
  if (storageBackend !== 'etcd3' && storageBackend !== 'memory') {
    throw new FlagError(
      `--storage-backend ${JSON.stringify(storageBackend)}: supported backends are "etcd3" and "memory"`,
    );
  }
  if (storageBackend === 'memory' && list('etcd-servers').length > 0) {
    throw new FlagError('--storage-backend=memory and --etcd-servers cannot be used together');
  }
  let storageMedia: StorageMediaType;
  try {
    storageMedia = storageMediaType(str('storage-media-type'));
  } catch {
    throw new FlagError(
      `--storage-media-type ${JSON.stringify(str('storage-media-type'))}: supported media types: ${STORAGE_MEDIA_TYPES.join(', ')}`,
    );
  }
  let authorizationModes = list('authorization-mode');
  for (const mode of authorizationModes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) {
      throw new FlagError(
        `--authorization-mode: unknown authorization mode ${JSON.stringify(mode)} specified`,
      );
    }
  }
  if (authorizationModes.length === 0)
    throw new FlagError('--authorization-mode: at least one mode is required');
  let authorizationConfig: ServerOptions['authorizationConfig'];
  if (str('authorization-config') !== '') {
    if (
      [...parsed.changed].some((f) => f === 'authorization-mode' || f.startsWith('authorization-webhook-'))
    ) {
      throw new FlagError(
        '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined',
      );
    }
    const path = resolve(cwd, str('authorization-config'));
    try {
      authorizationConfig = { path, config: loadAuthorizationConfig(path) };
    } catch (err) {
      if (!(err instanceof AuthorizationConfigError)) throw err;
      throw new FlagError(`--authorization-config: ${err.message}`);
    }
    authorizationModes = modesOf(authorizationConfig.config);
  }
  for (const name of [
    'etcd-compaction-interval',
    'shutdown-delay-duration',
    'event-ttl',
    'request-timeout',
  ]) {
    if (int(name) < 0) throw new FlagError(`--${name} must not be negative`);
  }
  // With APF the two limits are the server's concurrency limit, shared out as seats.
  if (v.get('enable-priority-and-fairness') !== false) {
    const total = int('max-requests-inflight') + int('max-mutating-requests-inflight');
    if (total <= 0)
      throw new FlagError(
        '--max-requests-inflight plus --max-mutating-requests-inflight must be positive when --enable-priority-and-fairness is true',
      );
  }
  // Transport flags read again where the listener is built (src/server/app.ts); checked here so
  // that a bad value is a flag error (exit status 2), as kube-apiserver's validation makes it.
  try {
    opensslCiphers(list('tls-cipher-suites'));
    hstsHeaderValue(list('strict-transport-security-directives'));
    compileOrigins(list('cors-allowed-origins'));
    for (const v of list('tls-sni-cert-key')) parseSniCertKey(v);
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const goaway = goawayChanceError(v.get('goaway-chance') as number);
  if (goaway !== undefined) throw new FlagError(goaway);
  let apiEnablement: ApiEnablement;
  try {
    apiEnablement = ApiEnablement.parse(v.get('runtime-config') as Readonly<Record<string, string>>, KINDS);
  } catch (err) {
    if (!(err instanceof RuntimeConfigError)) throw err;
    throw new FlagError(err.message);
  }
  const needed = apiEnablement.disabledOf(CONTROLLER_RESOURCES);
  if (needed.length > 0) {
    throw new FlagError(
      `--runtime-config: ${needed.join(', ')} must stay enabled: the server's own controllers use them`,
    );
  }
  // kube-apiserver's start-up errors for unknown or overlapping admission plugin names.
  const admissionErrors = pluginFlagErrors(
    list('enable-admission-plugins'),
    list('disable-admission-plugins'),
  );
  if (admissionErrors.length > 0) throw new FlagError(admissionErrors.join('; '));
  const etcdPrefix = str('etcd-prefix').replace(/\/+$/, '');
  const resolvePath = (p: string): string => (p === '' ? '' : resolve(cwd, p));

  const options: ServerOptions = {
    securePort,
    bindAddress,
    advertiseAddress,
    serviceClusterIPRanges,
    serviceNodePortRange,
    certDir: resolvePath(str('cert-dir')),
    tlsCertFile: resolvePath(str('tls-cert-file')),
    tlsPrivateKeyFile: resolvePath(str('tls-private-key-file')),
    tlsMinVersion,
    http2MaxStreamsPerConnection: int('http2-max-streams-per-connection'),
    clientCaFile: resolvePath(str('client-ca-file')),
    anonymousAuth: bool('anonymous-auth'),
    authorizationModes,
    authorizationConfig,
    etcdServers: list('etcd-servers'),
    etcdCaFile: resolvePath(str('etcd-cafile')),
    etcdCertFile: resolvePath(str('etcd-certfile')),
    etcdKeyFile: resolvePath(str('etcd-keyfile')),
    etcdPrefix,
    etcdCompactionIntervalMs: int('etcd-compaction-interval'),
    etcdHealthcheckTimeoutMs: int('etcd-healthcheck-timeout'),
    etcdReadycheckTimeoutMs: int('etcd-readycheck-timeout'),
    storageBackend,
    storageMediaType: storageMedia,
    eventTtlMs: int('event-ttl'),
    requestTimeoutMs: int('request-timeout'),
    minRequestTimeoutSeconds: int('min-request-timeout'),
    maxRequestsInflight: int('max-requests-inflight'),
    maxMutatingRequestsInflight: int('max-mutating-requests-inflight'),
    watchCache: bool('watch-cache'),
    defaultWatchCacheSize: int('default-watch-cache-size'),
    runtimeConfig: v.get('runtime-config') as Readonly<Record<string, string>>,
    apiEnablement,
    shutdownDelayMs: int('shutdown-delay-duration'),
    dataDir: resolve(cwd, str('data-dir') === '' ? '.capstan' : str('data-dir')),
    serviceAccount: parseServiceAccountFlags(v, resolvePath),
    encryptionProviderConfig: resolvePath(str('encryption-provider-config')),
    audit: parseAuditFlags(v, resolvePath),
    admissionControlConfigFile: resolvePath(str('admission-control-config-file')),
    controllers: parseControllerSelection(list('controllers'), SERVER_CONTROLLERS),
    flags: v,
    changed: parsed.changed,
  };
  return { help: false, options };
}

/** Warnings about flags that are accepted but do not act yet, for the start log. */
export function notImplementedWarnings(options: ServerOptions): string[] {
  const warnings: string[] = [];
  for (const spec of SERVER_FLAGS) {
    if (spec.notImplemented === true && options.changed.has(spec.name)) {
      warnings.push(`flag --${spec.name} is accepted but not implemented yet; it has no effect`);
    }
  }
  const enabled = ((options.flags.get('enable-admission-plugins') as string[] | undefined) ?? []).filter(
    (n) => n !== '',
  );
  for (const name of unimplementedPlugins(enabled)) {
    warnings.push(`admission plugin ${name} is accepted but not implemented yet; it has no effect`);
  }
  return warnings;
}
