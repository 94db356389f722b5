/**
 * Reading a kubeconfig: the server URL and credentials of its current context, for tools and
 * tests that talk to a server the way kubectl does (`capstan bench`, the measuring tools, the
 * test harness's raw HTTPS helper).
 *
 * Kept apart from `kubeconfig.ts` (which the server imports at start) because it loads the YAML
 * parser: the server never reads kubeconfigs, so it should not pay for that module.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/** The server and credentials of one kubeconfig context. PEM strings, never file paths. */
export interface KubeconfigCredentials {
  /** `https://host:port` (as written; may carry a path prefix). */
  readonly server: string;
  /** PEM of the CA to trust; undefined: the system's trust store. */
  readonly ca: string | undefined;
  /** Client certificate and key PEM; both or neither. */
  readonly cert: string | undefined;
  readonly key: string | undefined;
  /** The files of `cert` and `key` when the kubeconfig names files (absolute paths). */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Bearer token (`token` or `tokenFile`). */
  readonly token: string | undefined;
  /** `insecure-skip-tls-verify: true`: do not verify the serving certificate. */
  readonly insecureSkipTlsVerify: boolean;
  /** The context that was read. */
  readonly context: string;
}

/** A kubeconfig that cannot be used; `code` is stable. */
export class KubeconfigError extends Error {
  readonly code = 'KUBECONFIG_INVALID';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeconfigError';
  }
}

type Dict = Readonly<Record<string, unknown>>;

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The `name`d entry of a kubeconfig list (`clusters`, `users`, `contexts`), unwrapped. */
function named(doc: Dict, list: string, inner: string, name: string, path: string): Dict {
  const entries = doc[list];
  if (Array.isArray(entries)) {
    for (const e of entries as unknown[]) {
      if (isDict(e) && e['name'] === name) {
        const body = e[inner];
        return isDict(body) ? body : {};
      }
    }
  }
  throw new KubeconfigError(`kubeconfig ${path}: no ${inner} named ${JSON.stringify(name)}`);
}

function str(d: Dict, field: string): string | undefined {
  const v = d[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Inline `<field>-data` (base64) or the file `<field>` (relative to the kubeconfig's directory,
 * as kubectl resolves it); undefined when neither is set.
 */
function pem(d: Dict, field: string, base: string): string | undefined {
  const data = str(d, `${field}-data`);
  if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
  const file = pemFile(d, field, base);
  return file === undefined ? undefined : readFileSync(file, 'utf8');
}

/** The absolute path of the file `<field>` when `<field>-data` is not set. */
function pemFile(d: Dict, field: string, base: string): string | undefined {
  const file = str(d, `${field}-data`) === undefined ? str(d, field) : undefined;
  return file === undefined ? undefined : isAbsolute(file) ? file : resolve(base, file);
}

/**
 * Parses kubeconfig `text` (read from `path`, used for relative file references and messages)
 * and returns the server and credentials of `context` (default: `current-context`).
 *
 * Supports embedded and file certificate data, `token` and `tokenFile`, and
 * `insecure-skip-tls-verify`; exec and auth-provider plugins are not supported (they fail with
 * a KubeconfigError naming them, rather than sending requests without credentials).
 * @throws KubeconfigError when the text is not a kubeconfig, the context, cluster or user is
 *   missing, the cluster has no server, or only one of certificate and key is given.
 */
export function parseKubeconfigCredentials(
  text: string,
  path: string,
  context?: string,
): KubeconfigCredentials {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path} is not YAML`, { cause: err });
  }
  if (!isDict(doc)) throw new KubeconfigError(`kubeconfig ${path} is not a mapping`);
  const contextName = context ?? str(doc, 'current-context');
  if (contextName === undefined) throw new KubeconfigError(`kubeconfig ${path} has no current-context`);
  const ctx = named(doc, 'contexts', 'context', contextName, path);
  const clusterName = str(ctx, 'cluster');
  const userName = str(ctx, 'user');
  if (clusterName === undefined)
    throw new KubeconfigError(`kubeconfig ${path}: context ${contextName} names no cluster`);
  const cluster = named(doc, 'clusters', 'cluster', clusterName, path);
  const user = userName === undefined ? {} : named(doc, 'users', 'user', userName, path);
  const server = str(cluster, 'server');
  if (server === undefined)
    throw new KubeconfigError(`kubeconfig ${path}: cluster ${clusterName} has no server`);
  if (user['exec'] !== undefined || user['auth-provider'] !== undefined)
    throw new KubeconfigError(`kubeconfig ${path}: exec and auth-provider credentials are not supported`);
  const base = dirname(path);
  const cert = pem(user, 'client-certificate', base);
  const key = pem(user, 'client-key', base);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(
      `kubeconfig ${path}: user ${userName ?? ''} has a client certificate without a key or a key without a certificate`,
    );
  const certFile = pemFile(user, 'client-certificate', base);
  const keyFile = pemFile(user, 'client-key', base);
  const tokenFile = str(user, 'tokenFile');
  const token =
    str(user, 'token') ??
    (tokenFile === undefined ? undefined : readFileSync(resolve(base, tokenFile), 'utf8').trim());
  return {
    server,
    ca: pem(cluster, 'certificate-authority', base),
    cert,
    key,
    ...(certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : {}),
    token,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    context: contextName,
  };
}

/**
 * Reads the kubeconfig at `path` and returns its current (or the given) context's server and
 * credentials. See {@link parseKubeconfigCredentials} for what is supported.
 * @throws KubeconfigError as parseKubeconfigCredentials, and when the file cannot be read
 *   (`cause` holds the fs error).
 */
export function readKubeconfigCredentials(path: string, context?: string): KubeconfigCredentials {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read kubeconfig ${path}`, { cause: err });
  }
  return parseKubeconfigCredentials(text, path, context);
}
