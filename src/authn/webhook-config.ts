/**
 * The kubeconfig-format file of a webhook (`--authentication-token-webhook-config-file`): the
 * current context's cluster (or the first) is the remote service, its user the credentials the
 * API server presents. Paths in the file are relative to the file.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import type { HttpsTrust } from './https-json.js';

/** Where and how to call a webhook. */
export interface WebhookTarget extends HttpsTrust {
  readonly server: string;
  /** Bearer token the API server sends (`users[].user.token`). */
  readonly token?: string;
}

/** A webhook configuration that cannot be used; names the file. */
export class WebhookConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookConfigError';
  }
}

type Named<T> = { readonly name?: string } & T;
interface KubeconfigShape {
  readonly clusters?: Named<{ readonly cluster?: Record<string, unknown> }>[];
  readonly users?: Named<{ readonly user?: Record<string, unknown> }>[];
  readonly contexts?: Named<{ readonly context?: { readonly cluster?: string; readonly user?: string } }>[];
  readonly 'current-context'?: string;
}

/**
 * Reads a webhook kubeconfig.
 * @throws WebhookConfigError when unreadable, not YAML, without a cluster server, or naming
 *   unreadable credential files.
 */
export function readWebhookConfig(path: string): WebhookTarget {
  const at = `webhook config ${JSON.stringify(path)}`;
  let doc: KubeconfigShape;
  try {
    doc = parse(readFileSync(path, 'utf8')) as KubeconfigShape;
  } catch (err) {
    throw new WebhookConfigError(`${at}: unreadable or not YAML`, { cause: err });
  }
  if (doc === null || typeof doc !== 'object') throw new WebhookConfigError(`${at}: not a kubeconfig`);
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context;
  const cluster = (doc.clusters?.find((c) => c.name === ctx?.cluster) ?? doc.clusters?.[0])?.cluster;
  const user = (doc.users?.find((u) => u.name === ctx?.user) ?? doc.users?.[0])?.user ?? {};
  const server = cluster?.['server'];
  if (typeof server !== 'string' || server === '')
    throw new WebhookConfigError(`${at}: no cluster with a server`);
  if (!server.startsWith('https://')) throw new WebhookConfigError(`${at}: the server must be an https URL`);
  const base = dirname(path);
  const material = (obj: Record<string, unknown>, file: string, data: string): string | undefined => {
    const d = obj[data];
    if (typeof d === 'string' && d !== '') return Buffer.from(d, 'base64').toString('utf8');
    const f = obj[file];
    if (typeof f !== 'string' || f === '') return undefined;
    try {
      return readFileSync(resolve(base, f), 'utf8');
    } catch (err) {
      throw new WebhookConfigError(`${at}: unable to read ${file} ${JSON.stringify(f)}`, { cause: err });
    }
  };
  const ca = material(cluster ?? {}, 'certificate-authority', 'certificate-authority-data');
  const cert = material(user, 'client-certificate', 'client-certificate-data');
  const key = material(user, 'client-key', 'client-key-data');
  const token = typeof user['token'] === 'string' ? user['token'] : undefined;
  return {
    server,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(token === undefined ? {} : { token }),
    ...(cluster?.['insecure-skip-tls-verify'] === true ? { insecureSkipVerify: true } : {}),
  };
}
