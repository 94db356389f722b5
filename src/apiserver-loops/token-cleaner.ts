/**
 * The bootstrap token cleaner (kube-controller-manager's `tokencleaner`): deletes Secrets of
 * type `bootstrap.kubernetes.io/token` in `kube-system` whose `expiration` has passed. It scans
 * the namespace's bootstrap-token Secrets every `intervalMs` (and on {@link TokenCleaner.tick});
 * each delete is guarded by the mod revision it read, so a Secret updated meanwhile is left for
 * the next scan.
 */
import type { Store } from '../../storage/interface.js';
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import {
  BOOTSTRAP_NAMESPACE,
  BOOTSTRAP_SECRET_PREFIX,
  BOOTSTRAP_TOKEN_SECRET_TYPE,
  bootstrapSecretExpired,
  type SecretLike,
} from '../authn/bootstrap-token.js';

/** A running cleaner. */
export interface TokenCleaner {
  /** One scan now; resolves with the names deleted. */
  tick(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Options of {@link startTokenCleaner}. */
export interface TokenCleanerOptions {
  /** The handlers' store (JSON values, keys `/secrets/<ns>/<name>`). */
  readonly store: Store;
  readonly intervalMs?: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown) => void;
}

/** Starts the cleaner. */
export function startTokenCleaner(options: TokenCleanerOptions): TokenCleaner {
  const now = options.now ?? Date.now;
  const prefix = `/secrets/${BOOTSTRAP_NAMESPACE}/${BOOTSTRAP_SECRET_PREFIX}`;
  let running: Promise<string[]> | undefined;
  const scan = async (): Promise<string[]> => {
    const deleted: string[] = [];
    const { items } = await options.store.range({ prefix });
    for (const kv of items) {
      let secret: SecretLike;
      try {
        secret = JSON.parse(Buffer.from(kv.value).toString('utf8')) as SecretLike;
      } catch {
        continue;
      }
      if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || !bootstrapSecretExpired(secret, now())) continue;
      try {
        await options.store.delete(kv.key, { ifModRevision: kv.modRevision });
        deleted.push(kv.key.slice(kv.key.lastIndexOf('/') + 1));
      } catch (err) {
        if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
      }
    }
    return deleted;
  };
  const tick = (): Promise<string[]> =>
    (running ??= scan().finally(() => {
      running = undefined;
    }));
  const timer = setInterval(() => {
    tick().catch((err: unknown) => options.onError?.(err));
  }, options.intervalMs ?? 30_000);
  timer.unref();
  return {
    tick,
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
