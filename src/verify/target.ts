/**
 * The server `capstan verify` checks: one named by a kubeconfig, or a Capstan started in this
 * process on memory-level, on LevelDB in a temporary data dir, or on an etcd URL (the offline
 * use: nothing to start by hand).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readKubeconfigCredentials, type KubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import { ServerLog } from '../server/log.js';
import { parseServerArgs } from '../server/options.js';
import { startServer } from '../server/server.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';

/** A server to check, and how to let it go. */
export interface VerifyTarget {
  readonly creds: KubeconfigCredentials;
  /** For reports. */
  readonly description: string;
  close(): Promise<void>;
}

/** The server of a kubeconfig (its current context, or `context`). */
export function kubeconfigTarget(path: string, context: string | undefined): VerifyTarget {
  const creds = readKubeconfigCredentials(path, context);
  return {
    creds,
    description: `${creds.server} (kubeconfig ${path}, context ${creds.context})`,
    close: async () => undefined,
  };
}

/**
 * Starts Capstan in this process on 127.0.0.1 and a random port.
 * @param store `memory`, `leveldb`, or an etcd URL.
 * @param extraArgs more `capstan server` flags.
 */
export async function inProcessTarget(
  store: string,
  extraArgs: readonly string[] = [],
): Promise<VerifyTarget> {
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-verify-'));
  try {
    // A bare API server: controllers' own writes (kube-root-ca.crt in every namespace) are not
    // the model's; `extraArgs` may still name some.
    const args = [
      '--secure-port=0',
      '--bind-address=127.0.0.1',
      `--data-dir=${dataDir}`,
      '--controllers=',
      ...extraArgs,
    ];
    if (store !== 'memory' && store !== 'leveldb')
      args.push(`--etcd-servers=${store}`, `--etcd-prefix=/capstan-verify-${Date.now()}`);
    const parsed = parseServerArgs(args);
    if (parsed.help) throw new Error('unreachable: --help');
    const server = await startServer(parsed.options, {
      log: new ServerLog(() => undefined),
      ...(store === 'memory' ? { store: await openMemoryStore() } : {}),
    });
    const creds = readKubeconfigCredentials(server.kubeconfigPath);
    return {
      creds,
      description: `in-process Capstan on ${store} (${server.url})`,
      close: async () => {
        await server.shutdown();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
