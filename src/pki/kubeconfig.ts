/**
 * The admin kubeconfig: one cluster, one user (the admin client certificate), one context,
 * everything embedded as `*-data` so the file works from any directory and on any machine that
 * reaches the server.
 */
import { rename, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** What goes into a kubeconfig. */
export interface KubeconfigInput {
  /** `https://host:port`. */
  readonly server: string;
  /** PEM the client trusts for the serving certificate. */
  readonly caPem: string;
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  /** Cluster, user and context names; default `capstan`, `capstan-admin`, `capstan`. */
  readonly clusterName?: string;
  readonly userName?: string;
  readonly contextName?: string;
}

/**
 * The URL clients on this machine use for a listener on `bindAddress:port`: loopback for the
 * wildcard addresses (and an empty one), else the address itself (IPv6 in brackets).
 */
export function localServerUrl(bindAddress: string, port: number): string {
  if (bindAddress === '' || bindAddress === '0.0.0.0') return `https://127.0.0.1:${port}`;
  if (bindAddress === '::') return `https://[::1]:${port}`;
  // An IPv4 address or a host name has no colon, an IPv6 address has. (node:net's isIPv6 would
  // compile its large IPv6 pattern on this start-up path.)
  return bindAddress.includes(':') ? `https://[${bindAddress}]:${port}` : `https://${bindAddress}:${port}`;
}

function b64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

/** YAML double-quoted scalar (names may contain `:`); JSON string syntax is valid YAML. */
function quoted(s: string): string {
  return JSON.stringify(s);
}

/** The kubeconfig text (YAML) for `input`. */
export function renderKubeconfig(input: KubeconfigInput): string {
  const cluster = quoted(input.clusterName ?? 'capstan');
  const user = quoted(input.userName ?? 'capstan-admin');
  const context = quoted(input.contextName ?? 'capstan');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${cluster}`,
    '  cluster:',
    `    server: ${quoted(input.server)}`,
    `    certificate-authority-data: ${b64(input.caPem)}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    client-certificate-data: ${b64(input.clientCertPem)}`,
    `    client-key-data: ${b64(input.clientKeyPem)}`,
    'contexts:',
    `- name: ${context}`,
    '  context:',
    `    cluster: ${cluster}`,
    `    user: ${user}`,
    `current-context: ${context}`,
    'preferences: {}',
    '',
  ].join('\n');
}

/**
 * Writes a kubeconfig (mode 0600, it holds a private key) through a temporary file and a
 * rename, creating the directory when missing.
 */
export async function writeKubeconfig(path: string, input: KubeconfigInput): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, renderKubeconfig(input), { mode: 0o600 });
  await rename(tmp, path);
}
