/**
 * Where and as whom a {@link Client} connects: from a kubeconfig ({@link loadKubeconfig}), from a
 * pod's service account ({@link inClusterConfig}), or built in code (the server's loopback).
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import {
  KubeconfigError,
  parseKubeconfigCredentials,
  type KubeconfigCredentials,
} from '../pki/kubeconfig-credentials.js';

/** Server URL, trust and credentials of a client, and its client-side limits. */
export interface ClientConfig {
  /** `https://host:port`, optionally with a path prefix. */
  readonly server: string;
  /** PEM of the CA(s) to trust; absent: the system roots. */
  readonly caData?: Buffer;
  /** PEM client certificate; with `keyData`. */
  readonly certData?: Buffer;
  readonly keyData?: Buffer;
  /**
   * The files `certData` and `keyData` were read from (a kubeconfig naming files, not data):
   * re-read every 5 minutes, as client-go's file-based client certificates are, and on
   * `Transport.reloadClientCertificate()`; a changed pair is used from the next request on.
   */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Bearer token. */
  readonly token?: string;
  /** Bearer token file, re-read when it changes (projected service-account tokens rotate); wins over `token`. */
  readonly tokenFile?: string;
  /**
   * The current bearer token, asked for on every request: credentials held in memory that rotate
   * (client-go's token sources); wins over `tokenFile` and `token`.
   */
  readonly tokenSource?: () => string;
  readonly insecureSkipTlsVerify?: boolean;
  /** e.g. `capstan-controller-manager/v1.33 (linux/amd64)`. */
  readonly userAgent?: string;
  /** Client-side requests per second (default 5, as client-go); negative: unlimited. */
  readonly qps?: number;
  /** Client-side burst (default 10). */
  readonly burst?: number;
  /** Per-request timeout in ms (not watches); absent or 0: none. */
  readonly timeoutMs?: number;
  /**
   * The HTTP/2 health check, as client-go's: a PING every this many ms on an open session
   * (default `$HTTP2_READ_IDLE_TIMEOUT_SECONDS`, else 30 s; 0: off) ...
   */
  readonly http2ReadIdleTimeoutMs?: number;
  /**
   * ... and the session is dropped (its requests fail, its watches end and resume on a new one)
   * when the PING is not answered within this many ms (default `$HTTP2_PING_TIMEOUT_SECONDS`,
   * else 15 s).
   */
  readonly http2PingTimeoutMs?: number;
}

/** client-go's defaults (`rest.DefaultQPS`, `rest.DefaultBurst`). */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;

/** Where a pod's service-account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The server and credentials of a kubeconfig context (default: `current-context`). Certificates
 * and keys may be embedded (`*-data`) or files (relative to the kubeconfig's directory); a
 * `tokenFile` is kept as a file so that rotations are seen.
 * @throws KubeconfigError when the file cannot be read or is not a usable kubeconfig (exec and
 *   auth-provider users are refused).
 */
export function loadKubeconfig(path: string, opts: { context?: string } = {}): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read kubeconfig ${path}`, { cause: err });
  }
  const creds = parseKubeconfigCredentials(text, path, opts.context);
  const tokenFile = userTokenFile(text, creds.context);
  return {
    server: creds.server,
    ...(creds.ca === undefined ? {} : { caData: Buffer.from(creds.ca) }),
    ...(creds.cert === undefined ? {} : { certData: Buffer.from(creds.cert) }),
    ...(creds.key === undefined ? {} : { keyData: Buffer.from(creds.key) }),
    ...(creds.certFile === undefined || creds.keyFile === undefined
      ? {}
      : { certFile: creds.certFile, keyFile: creds.keyFile }),
    ...(tokenFile !== undefined
      ? { tokenFile: isAbsolute(tokenFile) ? tokenFile : resolve(dirname(path), tokenFile) }
      : creds.token === undefined
        ? {}
        : { token: creds.token }),
    ...(creds.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  };
}

/** The `tokenFile` of the context's user when it has no inline `token` (already validated text). */
function userTokenFile(text: string, context: string): string | undefined {
  const doc = parse(text) as Record<string, unknown>;
  const find = (list: string, name: unknown): Record<string, unknown> | undefined => {
    const entries = doc[list];
    if (!Array.isArray(entries)) return undefined;
    for (const e of entries as Record<string, unknown>[]) {
      if (e !== null && typeof e === 'object' && e['name'] === name) {
        const inner = e[list.slice(0, -1)];
        return inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : undefined;
      }
    }
    return undefined;
  };
  const user = find('users', find('contexts', context)?.['user']);
  if (user === undefined || (typeof user['token'] === 'string' && user['token'] !== '')) return undefined;
  const file = user['tokenFile'];
  return typeof file === 'string' && file !== '' ? file : undefined;
}

/**
 * The configuration of credentials already read from a kubeconfig (`src/pki`'s
 * `readKubeconfigCredentials`, as the measuring tools use); a token is kept as a string.
 */
export function configFromCredentials(creds: KubeconfigCredentials): ClientConfig {
  return {
    server: creds.server,
    ...(creds.ca === undefined ? {} : { caData: Buffer.from(creds.ca) }),
    ...(creds.cert === undefined ? {} : { certData: Buffer.from(creds.cert) }),
    ...(creds.key === undefined ? {} : { keyData: Buffer.from(creds.key) }),
    ...(creds.token === undefined ? {} : { token: creds.token }),
    ...(creds.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  };
}

/**
 * The configuration of a process in a pod: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`,
 * the service account's CA, and its (rotating) token file.
 * @param opts.env and opts.dir override the environment and the mount directory (tests).
 * @throws Error when the variables are unset or the CA cannot be read.
 */
export function inClusterConfig(
  opts: { env?: Readonly<Record<string, string | undefined>>; dir?: string } = {},
): ClientConfig {
  const env = opts.env ?? process.env;
  const dir = opts.dir ?? SERVICE_ACCOUNT_DIR;
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || host === '' || port === undefined || port === '')
    throw new Error(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set',
    );
  let caData: Buffer;
  try {
    caData = readFileSync(join(dir, 'ca.crt'));
  } catch (err) {
    throw new Error(`in-cluster config: cannot read ${join(dir, 'ca.crt')}`, { cause: err });
  }
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { server: `https://${hostPart}:${port}`, caData, tokenFile: join(dir, 'token') };
}

/** Credentials for {@link withIdentity}: a client certificate, or a bearer token. */
export type Identity = { readonly certData: Buffer; readonly keyData: Buffer } | { readonly token: string };

/** A copy of `config` authenticating as `identity` instead (its other credentials dropped). */
export function withIdentity(config: ClientConfig, identity: Identity): ClientConfig {
  const {
    certData: _c,
    keyData: _k,
    certFile: _cf,
    keyFile: _kf,
    token: _t,
    tokenFile: _f,
    tokenSource: _s,
    ...rest
  }: ClientConfig = config;
  return 'token' in identity
    ? { ...rest, token: identity.token }
    : { ...rest, certData: identity.certData, keyData: identity.keyData };
}
