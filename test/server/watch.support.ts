/**
 * Helpers of the watch tests: a line reader over a real watch stream (fetch), and the watch
 * cache of a type for tests that need it ready before they start.
 */
import { expect } from 'vitest';
import type { Store } from '../../storage/interface.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { WatchCaches, type WatchCachesOptions } from '../../src/watchcache/cache-set.js';
import type { TypeCache } from '../../src/watchcache/type-cache.js';
import type { KObj } from './resources.support.js';

/** A watch over a real socket, read event by event. */
export interface WatchReader {
  readonly response: Response;
  /** The next event, or undefined when the stream ended. */
  next(): Promise<KObj | undefined>;
  /** The next `n` events, fewer when the stream ends first. */
  take(n: number): Promise<KObj[]>;
  close(): Promise<void>;
}

/** Opens `base + path` and reads newline-separated JSON events. */
export async function openWatchStream(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<WatchReader> {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, { ...init, signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let buffer = '';
  const decoder = new TextDecoder();
  const next = async (): Promise<KObj | undefined> => {
    for (;;) {
      const nl = buffer.indexOf('\n');
      if (nl >= 0) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        return JSON.parse(text) as KObj;
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    response,
    next,
    async take(n) {
      const events: KObj[] = [];
      while (events.length < n) {
        const event = await next();
        if (event === undefined) break;
        events.push(event);
      }
      return events;
    },
    async close() {
      controller.abort();
      await reader.cancel().catch(() => undefined);
    },
  };
}

/** Watch caches for `store` with test-friendly defaults. */
export function testCaches(store: Store, overrides: Partial<WatchCachesOptions> = {}): WatchCaches {
  return new WatchCaches({ store, defaultSize: 100, bookmarkIntervalMs: 100, ...overrides });
}

/** The configmaps cache of `caches`, started and ready. */
export async function readyCache(
  caches: WatchCaches,
  plural = 'configmaps',
  group = '',
  version = 'v1',
): Promise<TypeCache> {
  const type = loadRegistry().byResource(group, version, plural);
  if (type === undefined) throw new Error(`no type ${plural}`);
  const cache = caches.for(type);
  if (cache === undefined) throw new Error('cache disabled');
  for (let i = 0; i < 300 && !cache.ready; i++) await new Promise((r) => setTimeout(r, 10));
  expect(cache.ready).toBe(true);
  return cache;
}
