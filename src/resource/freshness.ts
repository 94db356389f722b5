/**
 * Waiting for a resourceVersion the server has not reached yet. kube-apiserver waits up to about
 * 3 s for its watch cache to catch up before answering 504 `Too large resource version` with
 * `Retry-After`; replicas sharing a store see each other's writes a moment late, so a client
 * that read from one replica and asks another must not fail at once.
 */
import type { Store } from '../../storage/interface.js';
import { tooLargeResourceVersion } from '../api/errors.js';

/**
 * The store's current revision once it is at least `revision`, polling with a short back-off.
 * @throws ApiError 504 (`Too large resource version`, retryAfterSeconds 1) after `timeoutMs`.
 */
export async function awaitStoreRevision(store: Store, revision: bigint, timeoutMs: number): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    const current = await store.currentRevision();
    if (current >= revision) return current;
    const left = deadline - Date.now();
    if (left <= 0) throw tooLargeResourceVersion(revision, current);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, 200);
  }
}
