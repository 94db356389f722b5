/**
 * The two stores the kubectl suite runs on, as servers that can be stopped and started again
 * on the same data: the embedded LevelDB store in a temporary data dir, and a local etcd
 * (Debian's `/usr/bin/etcd`, one per suite) that outlives the servers it backs.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ETCD_BINARY, startEtcd, type LocalEtcd } from '../../../tools/etcd-local.js';
import { startTestServer, type TestServer } from '../../support/server.js';

/** A store for the suite's servers. */
export interface Backend {
  readonly name: string;
  /**
   * Starts a server on this backend's data (data dir, certificates, store); a second call
   * after the first server closed serves the same data.
   */
  start(): Promise<TestServer>;
  /** Removes what the backend created (close its servers first). Idempotent. */
  cleanup(): Promise<void>;
}

/** True when etcd is installed; the etcd suite must not skip when `CAPSTAN_REQUIRE_ETCD=1`. */
export const HAVE_ETCD = existsSync(ETCD_BINARY);
/** `CAPSTAN_REQUIRE_ETCD=1`: a missing etcd fails the etcd suite instead of skipping it. */
export const REQUIRE_ETCD = process.env['CAPSTAN_REQUIRE_ETCD'] === '1';

/** The embedded LevelDB store under a temporary `--data-dir`. */
export function levelDbBackend(): Backend {
  let dataDir: Promise<string> | undefined;
  return {
    name: 'embedded LevelDB',
    async start() {
      return startTestServer({ store: 'leveldb', dataDir: await (dataDir ??= tempDir()) });
    },
    async cleanup() {
      const dir = dataDir;
      dataDir = undefined;
      if (dir !== undefined) await rm(await dir, { recursive: true, force: true });
    },
  };
}

/** An external etcd, started once; every server of the suite uses it and the same data dir. */
export function etcdBackend(): Backend {
  let state: Promise<{ etcd: LocalEtcd; dataDir: string }> | undefined;
  return {
    name: 'external etcd',
    async start() {
      const { etcd, dataDir } = await (state ??= (async () => ({
        etcd: await startEtcd(),
        dataDir: await tempDir(),
      }))());
      return startTestServer({ store: 'etcd', etcd, dataDir });
    },
    async cleanup() {
      const started = state;
      state = undefined;
      // A failed start left nothing to remove (startEtcd cleans up after itself).
      const ready = await started?.catch(() => undefined);
      if (ready === undefined) return;
      await ready.etcd.stop();
      await rm(ready.dataDir, { recursive: true, force: true });
    },
  };
}

function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'capstan-kubectl-'));
}
