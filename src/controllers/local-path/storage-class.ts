/**
 * The provisioner's StorageClass: made once its caches are synced when no class named
 * `local-path` exists, marked the cluster default unless another class already is. Under RBAC the
 * controller's identity may not create classes: it says so once and provisions for a class an
 * administrator makes (`provisioner: capstan.dev/local-path`).
 */
import type { StorageClass } from '../../api/types/storage-v1.js';
import { STORAGE_CLASSES, isAlreadyExists, isForbidden, type SharedInformer } from '../../client/index.js';
import type { ControllerContext } from '../context.js';
import { ANN_DEFAULT_CLASS } from '../persistentvolume/annotations.js';
import { CLASS_NAME, localPathClass } from './volume.js';

const RETRY_MS = 10_000;

/** Makes the class when missing; retries transient failures until `ctx.signal` aborts. */
export function ensureDefaultClass(ctx: ControllerContext, classes: SharedInformer<StorageClass>): void {
  const client = ctx.client.resource<StorageClass>(STORAGE_CLASSES);
  const attempt = async (): Promise<void> => {
    await ctx.informers.waitForSync(ctx.signal);
    if (classes.store.get(CLASS_NAME) !== undefined) return;
    const hasDefault = classes.store
      .list()
      .some((c) => c.metadata.annotations?.[ANN_DEFAULT_CLASS] === 'true');
    try {
      await client.create(localPathClass(!hasDefault));
    } catch (err) {
      if (isAlreadyExists(err)) return;
      if (isForbidden(err)) {
        ctx.log.warn(
          `may not create the StorageClass ${CLASS_NAME} (${String(err)}); create it to use this provisioner`,
        );
        return;
      }
      throw err;
    }
  };
  const run = (): void => {
    attempt().catch((err: unknown) => {
      if (ctx.signal.aborted) return;
      ctx.log.error(`creating the StorageClass ${CLASS_NAME}`, err);
      const cancel = (): void => clearTimeout(timer);
      const timer = setTimeout(() => {
        ctx.signal.removeEventListener('abort', cancel);
        run();
      }, RETRY_MS);
      timer.unref();
      ctx.signal.addEventListener('abort', cancel, { once: true });
    });
  };
  run();
}
