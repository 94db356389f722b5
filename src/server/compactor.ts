/**
 * Periodic compaction (`--etcd-compaction-interval`), kube-apiserver's algorithm: every interval,
 * compact to the revision observed one interval earlier, so at least one interval of history is
 * always retained (watch resumption and continue tokens of that age keep working).
 *
 * Several servers over one etcd coordinate through one key, `compact_rev_key` at the root of the
 * keyspace (not under `--etcd-prefix`, the key kube-apiserver uses, so Capstan and kube-apiserver
 * replicas share the duty): each tick writes the key only if it is unchanged since this server's
 * last look (a compare on its mod revision). Whoever wins compacts to the revision it recorded one
 * tick before; the others adopt the winner's state and try again next tick. So the store is
 * compacted about once per interval, whatever the number of servers.
 *
 * State machine per tick (`lastMod` = mod revision of the key last seen, `lastRev` = store
 * revision recorded at the last tick; both 0 at start):
 * - txn(key unchanged since lastMod → put lastRev) succeeds at revision R:
 *   compact(lastRev) when lastRev > 0; then lastMod = R, lastRev = R.
 * - the compare fails (another server wrote it): lastMod = the key's mod revision,
 *   lastRev = the store's revision at the failure.
 */
import { AlreadyExistsError, CompactedError, ConflictError } from '../../storage/errors.js';
import type { Store } from '../../storage/interface.js';

/** The coordination key, as kube-apiserver names it. */
export const COMPACT_REV_KEY = 'compact_rev_key';

/** Receives compaction failures (the loop keeps going). */
export type CompactorLog = (message: string, err?: unknown) => void;

/** A running compaction loop. */
export interface Compactor {
  /** Runs one tick now (tests; the timer calls the same). Resolves when the tick is done. */
  tick(): Promise<void>;
  /** Stops the timer and waits for a running tick. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts compacting `store` (the root store, not a prefixed view) every `intervalMs`; the timer
 * does not keep the process alive. `intervalMs` ≤ 0 returns a compactor that never compacts.
 */
export function startCompactor(store: Store, intervalMs: number, log: CompactorLog): Compactor {
  let lastMod = 0n;
  let lastRev = 0n;
  let running: Promise<void> | undefined;
  let stopped = false;

  const attempt = async (): Promise<void> => {
    try {
      const result = await store.txn({
        key: COMPACT_REV_KEY,
        ifModRevision: lastMod,
        then: { op: 'put', value: Buffer.from(lastRev.toString(), 'utf8') },
      });
      const compactTo = lastRev;
      lastMod = result.revision;
      lastRev = result.revision;
      if (compactTo > 0n) await store.compact(compactTo);
    } catch (err) {
      if (err instanceof ConflictError) {
        lastMod = err.current?.modRevision ?? 0n;
        lastRev = err.revision;
      } else if (err instanceof AlreadyExistsError) {
        // The key exists but this server has not seen it yet (a fresh server joining others).
        const seen = await store.get(COMPACT_REV_KEY);
        lastMod = seen.kv?.modRevision ?? 0n;
        lastRev = seen.revision;
      } else if (!(err instanceof CompactedError)) {
        // CompactedError: another server compacted further already; nothing to do this tick.
        throw err;
      }
    }
  };

  const once = async (): Promise<void> => {
    try {
      await attempt();
    } catch (err) {
      log('compaction failed', err);
    }
  };

  const tick = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = intervalMs > 0 ? setInterval(() => void tick(), intervalMs) : undefined;
  timer?.unref();

  return {
    tick,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      await running;
    },
  };
}
