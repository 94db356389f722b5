/**
 * The single-node cluster's storage: the local-path provisioner (a Capstan controller, off by
 * default elsewhere, as it is no kube-controller-manager controller) runs in the cluster's
 * controller manager, and its `local-path` StorageClass is made here as an administrator. The
 * provisioner's own identity (kube's `persistent-volume-binder` role) may read classes but not
 * create them, and the cluster keeps kube's bootstrap policy unchanged.
 */
import type { StorageClass } from '../api/types/storage-v1.js';
import { Client, STORAGE_CLASSES, isAlreadyExists } from '../client/index.js';
import { ANN_DEFAULT_CLASS } from '../controllers/persistentvolume/annotations.js';
import { CLASS_NAME, localPathClass } from '../controllers/local-path/volume.js';
import type { CommandIo, Companion } from '../server/run.js';
import type { ServingServer } from '../server/server.js';

/** The provisioner's controller name, added to a cluster's `--controllers` default. */
export const LOCAL_PATH_CONTROLLER = 'local-path-provisioner';

/** `--controllers=*,local-path-provisioner` unless the user chose the controllers. */
export function withLocalPathController(serverArgs: readonly string[]): string[] {
  if (serverArgs.some((a) => a === '--controllers' || a.startsWith('--controllers='))) return [...serverArgs];
  return [...serverArgs, `--controllers=*,${LOCAL_PATH_CONTROLLER}`];
}

/**
 * Runs `next` while making the `local-path` StorageClass when it is missing: the cluster default
 * unless another class already is. `next` (the node) does not wait for it.
 */
export function withLocalPathClass(next: Companion): Companion {
  return async (server, io) => {
    const making = makeLocalPathClass(server, io);
    try {
      return await next(server, io);
    } finally {
      await making;
    }
  };
}

/** Makes the `local-path` StorageClass when it is missing; reports a failure through `io`. */
async function makeLocalPathClass(server: ServingServer, io: CommandIo): Promise<void> {
  let client: Client | undefined;
  try {
    client = new Client(await server.loopbackConfig('capstan:cluster-storage', ['system:masters']));
    const classes = client.resource<StorageClass>(STORAGE_CLASSES);
    const existing = await classes.list();
    if (!existing.items.some((c) => c.metadata.name === CLASS_NAME)) {
      const hasDefault = existing.items.some((c) => c.metadata.annotations?.[ANN_DEFAULT_CLASS] === 'true');
      await classes.create(localPathClass(!hasDefault)).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    }
  } catch (err) {
    io.err(`storage: could not make the StorageClass ${CLASS_NAME}: ${String(err)}`);
  } finally {
    await client?.close();
  }
}
