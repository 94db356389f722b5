/**
 * Options of the etcd backend, their defaults, and the `etcd3` client configuration built from
 * them. Everything the client is told lives here, so the fault-handling choices are in one place.
 */
import { readFile } from 'node:fs/promises';
import type { IOptions } from 'etcd3';
import { HostGates, passThroughPolicy } from './host-gate.js';
import type { ChannelTls } from './kv-channel.js';

/** Client TLS material for etcd, as the server flags `--etcd-cafile/certfile/keyfile` give it. */
export interface EtcdTlsOptions {
  /** PEM CA bundle that signed the etcd server certificates. Unset: the system roots. */
  readonly caFile?: string;
  /** PEM client certificate (chain) for etcd's client-certificate authentication. */
  readonly certFile?: string;
  /** PEM private key of `certFile`. Required exactly when `certFile` is set. */
  readonly keyFile?: string;
}

/** Options of {@link openEtcdStore}. */
export interface EtcdStoreOptions {
  /**
   * etcd client URLs (`http://host:port`, `https://host:port`) or bare `host:port`. Several
   * members of one cluster may be listed; calls go to a random healthy one. Keys are used as
   * given (the server adds `--etcd-prefix` through a key-prefix wrapper).
   */
  readonly endpoints: readonly string[];
  /** TLS for the client connection. Set: every endpoint is dialled with TLS. */
  readonly tls?: EtcdTlsOptions;
  /**
   * How long `openEtcdStore` keeps trying to reach etcd before it rejects with
   * `UnavailableError` (milliseconds, default 20 000, as kube-apiserver's etcd dial timeout).
   */
  readonly dialTimeoutMs?: number;
  /** Deadline of each unary call (milliseconds, default 30 000). */
  readonly requestTimeoutMs?: number;
  /** Deadline of {@link Store.checkHealth} (milliseconds, default 2 000). */
  readonly healthTimeoutMs?: number;
  /**
   * Secret for continue tokens. Unset (the normal case): a random secret stored once in etcd
   * under {@link CONTINUE_SECRET_KEY} and shared by every replica on the same etcd, so a token
   * from one replica opens on another. Set: this secret (at least 16 bytes); every replica must
   * then be given the same one.
   */
  readonly continueSecret?: Uint8Array;
  /**
   * Events a watch buffers for a slow consumer before it stops reading from etcd; it resumes
   * from history once half of them are consumed (default 10 000).
   */
  readonly watchBufferLimit?: number;
  /**
   * How long a watch keeps reconnecting without success before it ends with
   * `UnavailableError` (milliseconds, default 60 000).
   */
  readonly watchRetryLimitMs?: number;
}

/** {@link EtcdStoreOptions} with defaults applied. */
export interface ResolvedEtcdOptions {
  readonly endpoints: readonly string[];
  readonly dialTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly healthTimeoutMs: number;
  readonly continueSecret: Uint8Array | undefined;
  readonly watchBufferLimit: number;
  readonly watchRetryLimitMs: number;
}

const DEFAULTS = {
  dialTimeoutMs: 20_000,
  requestTimeoutMs: 30_000,
  healthTimeoutMs: 2_000,
  watchBufferLimit: 10_000,
  watchRetryLimitMs: 60_000,
} as const;

/**
 * gRPC channel options. Unlimited receive size: a range of many large objects exceeds gRPC's
 * 4 MiB default (etcd bounds requests itself). Keepalive detects a silently dead connection
 * under a long watch; 30 s stays above etcd's default minimum ping interval (5 s), below which
 * etcd would close the connection. Short reconnect backoff: a restarted etcd is used at once.
 * A 16 MiB HTTP/2 receive window: with the default 64 KiB, about 25 events of 1 KiB objects
 * (with their previous values) fill a watch stream's window, etcd's send blocks until this
 * process gets round to reading, and etcd then parks the watcher as slow and replays it in
 * batches every 100 ms; during write bursts that delayed every watcher behind the caches.
 */
const GRPC_OPTIONS = {
  'grpc-node.flow_control_window': 16 << 20,
  'grpc.max_receive_message_length': -1,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2_000,
} as const;

/**
 * Validates `options` and applies defaults.
 * @throws RangeError for no endpoints, non-positive limits, a short secret, or a cert without key.
 */
export function resolveOptions(options: EtcdStoreOptions): ResolvedEtcdOptions {
  if (options.endpoints.length === 0) throw new RangeError('etcd: at least one endpoint is required');
  const tls = options.tls;
  if (tls !== undefined && (tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new RangeError('etcd: a client certificate and its key must be given together');
  }
  if (options.continueSecret !== undefined && options.continueSecret.byteLength < 16) {
    throw new RangeError('etcd: continueSecret must be at least 16 bytes');
  }
  const resolved: ResolvedEtcdOptions = {
    endpoints: options.endpoints,
    dialTimeoutMs: options.dialTimeoutMs ?? DEFAULTS.dialTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    healthTimeoutMs: options.healthTimeoutMs ?? DEFAULTS.healthTimeoutMs,
    continueSecret: options.continueSecret,
    watchBufferLimit: options.watchBufferLimit ?? DEFAULTS.watchBufferLimit,
    watchRetryLimitMs: options.watchRetryLimitMs ?? DEFAULTS.watchRetryLimitMs,
  };
  for (const name of [
    'dialTimeoutMs',
    'requestTimeoutMs',
    'healthTimeoutMs',
    'watchBufferLimit',
    'watchRetryLimitMs',
  ] as const) {
    if (!(resolved[name] > 0)) throw new RangeError(`etcd: ${name} must be positive`);
  }
  return resolved;
}

/**
 * The `etcd3` client options for one connection pool, with the TLS `material` {@link readTls} read.
 *
 * Fault handling is ours, not the client's: its default global policy retries "recoverable"
 * errors three times, which could apply a blind write twice or turn a write that did apply into
 * a reported conflict, so the global policy passes calls through and the store retries only
 * idempotent reads. Its default per-host circuit breaker would fail every call for 5 s after
 * three errors even with a single endpoint; {@link HostGates} instead skips a failing member
 * only while another one is believed healthy.
 */
export function clientOptions(options: EtcdStoreOptions, material: ChannelTls | undefined): IOptions {
  const gates = new HostGates(options.endpoints.length);
  const faultHandling = {
    global: passThroughPolicy(),
    host: (host: string) => gates.policyFor(host),
  } as unknown as NonNullable<IOptions['faultHandling']>;
  const base: IOptions = {
    hosts: [...options.endpoints],
    grpcOptions: GRPC_OPTIONS,
    faultHandling,
  };
  if (material === undefined) return base;
  const { ca, cert, key } = material;
  // etcd3 types the CA as required, but gRPC falls back to the system roots when it is absent.
  const credentials = { rootCertificate: ca as Buffer, privateKey: key, certChain: cert };
  return { ...base, credentials: credentials as NonNullable<IOptions['credentials']> };
}

/** The PEM files of `options.tls`, read; undefined without TLS. */
export async function readTls(options: EtcdStoreOptions): Promise<ChannelTls | undefined> {
  const tls = options.tls;
  if (tls === undefined) return undefined;
  const [ca, cert, key] = await Promise.all([
    tls.caFile === undefined ? undefined : readFile(tls.caFile),
    tls.certFile === undefined ? undefined : readFile(tls.certFile),
    tls.keyFile === undefined ? undefined : readFile(tls.keyFile),
  ]);
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}
