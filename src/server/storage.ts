/**
 * Storage selection: etcd when `--etcd-servers` is given, memory with `--storage-backend=memory`,
 * else the embedded LevelDB store in `<data-dir>/store`. Resources see the store through `--etcd-prefix` (kube-apiserver's key
 * layout, `/registry/<resource>/...`); the compactor works on the root store, where its
 * coordination key lives.
 *
 * Backends are imported lazily: the etcd client (gRPC) costs tens of milliseconds to load and the
 * embedded default never needs it.
 */
import { join } from 'node:path';
import type { Store } from '../../storage/interface.js';
import { prefixed } from '../../storage/prefixed.js';
import type { ServerOptions } from './options.js';

/** The opened store in its two views. */
export interface OpenedStore {
  /** The whole keyspace (compaction, coordination keys). Closing it closes the resource view. */
  readonly root: Store;
  /** The keyspace under `--etcd-prefix`, for resources. */
  readonly resources: Store;
  /** Where the data lives, for the start message: a directory or etcd endpoints. */
  readonly location: string;
}

/** The options storage selection reads. */
export type StorageOptions = Pick<
  ServerOptions,
  | 'etcdServers'
  | 'storageBackend'
  | 'etcdCaFile'
  | 'etcdCertFile'
  | 'etcdKeyFile'
  | 'etcdPrefix'
  | 'dataDir'
  | 'etcdHealthcheckTimeoutMs'
>;

/** Wraps an opened root store with the resource prefix. */
export function storeViews(root: Store, etcdPrefix: string, location: string): OpenedStore {
  return { root, resources: etcdPrefix === '' ? root : prefixed(root, etcdPrefix), location };
}

/**
 * Opens the store the options select.
 * @throws UnavailableError (storage) when the store cannot be opened or reached.
 */
export async function openStore(options: StorageOptions): Promise<OpenedStore> {
  if (options.etcdServers.length > 0) {
    const { openEtcdStore } = await import('../../storage/etcd/index.js');
    const wantsTls =
      options.etcdCaFile !== '' ||
      options.etcdCertFile !== '' ||
      options.etcdServers.some((e) => e.startsWith('https://'));
    const tls = wantsTls
      ? {
          ...(options.etcdCaFile === '' ? {} : { caFile: options.etcdCaFile }),
          ...(options.etcdCertFile === ''
            ? {}
            : { certFile: options.etcdCertFile, keyFile: options.etcdKeyFile }),
        }
      : undefined;
    const root = await openEtcdStore({
      endpoints: options.etcdServers,
      ...(tls === undefined ? {} : { tls }),
      healthTimeoutMs: options.etcdHealthcheckTimeoutMs,
    });
    return storeViews(root, options.etcdPrefix, options.etcdServers.join(','));
  }
  if (options.storageBackend === 'memory') {
    const { openMemoryStore } = await import('../../storage/mvcc/index.js');
    return storeViews(await openMemoryStore(), options.etcdPrefix, 'memory');
  }
  const { openLevelStore } = await import('../../storage/mvcc/index.js');
  const path = join(options.dataDir, 'store');
  return storeViews(await openLevelStore(path), options.etcdPrefix, path);
}
