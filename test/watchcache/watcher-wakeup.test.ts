/**
 * A client watcher's stream must not sleep on queued events. Events offered while the stream
 * is handing out a batch (the HTTP loop writing it, or waiting for the socket to drain) were
 * left in the queue until the next event arrived: after a burst of writes (a scheduler binding
 * pods), the last events reached no watcher (informers, kubectl, the bench) for as long as the
 * type stayed quiet — a minute in `capstan bench scheduler`.
 */
import { describe, expect, it } from 'vitest';
import { CacheEvent } from '../../src/watchcache/cache-event.js';
import type { WatchFrames } from '../../src/watchcache/frames.js';
import { ObjectVersion } from '../../src/watchcache/object-version.js';
import { CacheWatcher } from '../../src/watchcache/watcher.js';

const frames: WatchFrames = {
  object: (type, version) => Buffer.from(`${type} ${version.key}@${version.revision}\n`),
  value: (type, value) => Buffer.from(`${type} ${JSON.stringify(value.metadata)}\n`),
};

function put(name: string, revision: bigint): CacheEvent {
  const v = new ObjectVersion(`/pods/default/${name}`, Buffer.from('{}'), revision);
  return new CacheEvent('put', revision, v, undefined, 0);
}

/** Resolves with the next batch, or 'idle' when none comes within `ms`. */
async function nextWithin(it: AsyncIterator<Buffer>, ms: number): Promise<string> {
  const timer = new Promise<string>((resolve) => setTimeout(() => resolve('idle'), ms));
  const next = it.next().then((r) => (r.done === true ? 'done' : r.value.toString('utf8')));
  return Promise.race([next, timer]);
}

describe('CacheWatcher stream', () => {
  it('sends events offered while the previous batch was being written, without a later event', async () => {
    const watcher = new CacheWatcher({
      scope: { prefix: '/pods/', selection: { everything: true, matches: () => true } },
      capacity: 100,
      bookmarks: false,
      kind: 'Pod',
      apiVersion: 'v1',
      startRevision: 0n,
      frames,
      onEnd: () => undefined,
    });
    const it = watcher.frames()[Symbol.asyncIterator]();
    const first = nextWithin(it, 1000);
    watcher.offer(put('a', 1n));
    expect(await first).toBe('ADDED /pods/default/a@1\n');
    // The consumer holds the batch (writing it): an event arrives before it asks for more.
    watcher.offer(put('b', 2n));
    expect(await nextWithin(it, 1000)).toBe('ADDED /pods/default/b@2\n');
    watcher.end();
    expect(await nextWithin(it, 1000)).toBe('done');
  });
});
