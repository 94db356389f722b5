/**
 * `--encryption-provider-config`: kube-apiserver's EncryptionConfiguration
 * (`apiserver.config.k8s.io/v1`, YAML or JSON), parsed and checked with kube's rules:
 *
 * ```yaml
 * apiVersion: apiserver.config.k8s.io/v1
 * kind: EncryptionConfiguration
 * resources:
 *   - resources: [secrets, configmaps, '*.apps']     # resource.group; '*.group', '*.*'
 *     providers:                                     # the first encrypts, all decrypt
 *       - aesgcm: { keys: [{ name: key1, secret: <base64 16/24/32 bytes> }] }
 *       - aescbc: { keys: [...] }                    # 16/24/32 bytes
 *       - secretbox: { keys: [...] }                 # 32 bytes
 *       - identity: {}
 * ```
 *
 * `kms` providers are refused (Capstan has no KMS plugin client). Each provider entry names
 * exactly one provider; keys have unique names within a provider.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

/** A provider kind Capstan implements. */
export type ProviderKind = 'identity' | 'aescbc' | 'aesgcm' | 'secretbox';

/** One key of a provider. */
export interface ProviderKey {
  readonly name: string;
  readonly secret: Buffer;
}

/** One provider entry, in order. */
export interface ProviderConfig {
  readonly kind: ProviderKind;
  /** Empty for identity. */
  readonly keys: readonly ProviderKey[];
}

/** One `resources` entry. */
export interface ResourceEncryption {
  /** `resource.group` names as written (`secrets`, `deployments.apps`, `*.apps`, `*.*`). */
  readonly resources: readonly string[];
  readonly providers: readonly ProviderConfig[];
}

/** A parsed configuration. */
export interface EncryptionConfig {
  readonly resources: readonly ResourceEncryption[];
}

/** The file is unusable; the message says where (never a key). Code is stable. */
export class EncryptionConfigError extends Error {
  readonly code = 'ENCRYPTION_CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'EncryptionConfigError';
  }
}

const KEY_SIZES: Readonly<Record<Exclude<ProviderKind, 'identity'>, readonly number[]>> = {
  aescbc: [16, 24, 32],
  aesgcm: [16, 24, 32],
  secretbox: [32],
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(where: string, why: string): never {
  throw new EncryptionConfigError(`${where}: ${why}`);
}

function parseProvider(where: string, raw: unknown): ProviderConfig {
  if (!isObject(raw)) fail(where, 'must be an object');
  const names = Object.keys(raw);
  if (names.length !== 1) fail(where, 'exactly one provider must be specified');
  const kind = names[0] ?? '';
  if (kind === 'kms') fail(`${where}.kms`, 'KMS providers are not supported by Capstan');
  if (kind === 'identity') return { kind, keys: [] };
  if (kind !== 'aescbc' && kind !== 'aesgcm' && kind !== 'secretbox')
    fail(where, `unknown provider ${JSON.stringify(kind)}`);
  const body = raw[kind];
  if (!isObject(body) || !Array.isArray(body['keys']) || body['keys'].length === 0) {
    fail(`${where}.${kind}.keys`, 'at least one key is required');
  }
  const seen = new Set<string>();
  const keys = (body['keys'] as unknown[]).map((k, i): ProviderKey => {
    const kw = `${where}.${kind}.keys[${i}]`;
    if (!isObject(k)) fail(kw, 'must be an object');
    const name = k['name'];
    if (typeof name !== 'string' || name === '') fail(`${kw}.name`, 'is required');
    if (name.includes(':')) fail(`${kw}.name`, 'may not contain ":"');
    if (seen.has(name)) fail(`${kw}.name`, `duplicate key name ${JSON.stringify(name)}`);
    seen.add(name);
    const secret = k['secret'];
    if (typeof secret !== 'string' || secret === '') fail(`${kw}.secret`, 'is required');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(secret)) fail(`${kw}.secret`, 'must be base64');
    const bytes = Buffer.from(secret, 'base64');
    if (!KEY_SIZES[kind].includes(bytes.length)) {
      fail(`${kw}.secret`, `key of ${bytes.length} bytes; ${kind} takes ${KEY_SIZES[kind].join(', ')} bytes`);
    }
    return { name, secret: bytes };
  });
  return { kind, keys };
}

/**
 * Parses configuration text.
 * @throws EncryptionConfigError on anything kube-apiserver would refuse (or a KMS provider).
 */
export function parseEncryptionConfig(text: string, where = 'encryption provider config'): EncryptionConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    fail(where, 'not valid YAML or JSON');
  }
  if (!isObject(doc)) fail(where, 'must be an EncryptionConfiguration object');
  if (doc['kind'] !== 'EncryptionConfiguration') fail(`${where}.kind`, 'must be EncryptionConfiguration');
  if (
    doc['apiVersion'] !== 'apiserver.config.k8s.io/v1' &&
    doc['apiVersion'] !== 'apiserver.config.k8s.io/v1beta1'
  ) {
    fail(`${where}.apiVersion`, 'must be apiserver.config.k8s.io/v1');
  }
  const entries = doc['resources'];
  if (!Array.isArray(entries) || entries.length === 0)
    fail(`${where}.resources`, 'at least one entry is required');
  const resources = entries.map((e: unknown, i): ResourceEncryption => {
    const ew = `${where}.resources[${i}]`;
    if (!isObject(e)) fail(ew, 'must be an object');
    const names = e['resources'];
    if (
      !Array.isArray(names) ||
      names.length === 0 ||
      !names.every((n) => typeof n === 'string' && n !== '')
    ) {
      fail(`${ew}.resources`, 'at least one resource name is required');
    }
    const providers = e['providers'];
    if (!Array.isArray(providers) || providers.length === 0)
      fail(`${ew}.providers`, 'at least one provider is required');
    return {
      resources: names as string[],
      providers: providers.map((p: unknown, j) => parseProvider(`${ew}.providers[${j}]`, p)),
    };
  });
  return { resources };
}

/** Reads and parses `--encryption-provider-config`. */
export async function loadEncryptionConfig(path: string): Promise<EncryptionConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new EncryptionConfigError(
      `--encryption-provider-config ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseEncryptionConfig(text, `--encryption-provider-config ${path}`);
}
