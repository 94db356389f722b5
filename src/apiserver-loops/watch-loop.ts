/**
 * The list-then-watch loop small controllers share: list a key span, hand every object to the
 * controller, watch from the list's revision and hand over every change, and after a watch
 * failure (compaction, store unavailable) wait and list again. States: listing → watching →
 * (failure) waiting → listing …; `stop()` ends it from any state.
 */
import type { KeySpan, Watch } from '../../storage/interface.js';
import type { ResourceContext } from '../resource/context.js';
import { decodeStored, type KubeObject } from '../api/object.js';

/** One observed change: the object as it now is, or undefined when it was deleted. */
export interface Observed {
  readonly key: string;
  readonly obj: KubeObject | undefined;
  /** The last known state of a deleted object. */
  readonly previous: KubeObject | undefined;
}

/** A running loop. */
export interface WatchLoop {
  stop(): Promise<void>;
}

/**
 * Runs `onChange` for every object in `span` now and on every later change, one call at a time
 * (a slow `onChange` delays the next event, never loses it). Errors of `onChange` are the
 * controller's to handle; thrown ones are dropped.
 */
export function watchLoop(
  ctx: ResourceContext,
  span: KeySpan,
  onChange: (change: Observed) => Promise<void>,
  retryMs = 1000,
): WatchLoop {
  let stopped = false;
  let watch: Watch | undefined;
  let wake: (() => void) | undefined;
  const safe = async (c: Observed): Promise<void> => {
    try {
      await onChange(c);
    } catch {
      // The controller retries on its own terms; the loop keeps going.
    }
  };
  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        const listed = await ctx.store.range(span);
        for (const kv of listed.items) {
          if (stopped) return;
          await safe({ key: kv.key, obj: decodeStored(kv.value, kv.modRevision), previous: undefined });
        }
        if (stopped) return;
        const w = ctx.store.watch(span, { fromRevision: listed.revision + 1n });
        watch = w;
        if (stopped) w.close();
        for await (const ev of w) {
          if (stopped) return;
          if (ev.type === 'put') {
            await safe({
              key: ev.kv.key,
              obj: decodeStored(ev.kv.value, ev.kv.modRevision),
              previous: undefined,
            });
          } else if (ev.type === 'delete') {
            const prev = ev.prevKv;
            await safe({
              key: prev.key,
              obj: undefined,
              previous: decodeStored(prev.value, prev.modRevision),
            });
          }
        }
      } catch {
        if (stopped) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, retryMs).unref();
        });
        wake = undefined;
      }
    }
  };
  const loop = run();
  return {
    async stop() {
      stopped = true;
      watch?.close();
      wake?.();
      await loop;
    },
  };
}
