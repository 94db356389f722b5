/**
 * A watch whose events are mapped one by one; everything else is the inner watch's. Store
 * wrappers (`prefixed()`, the value-mapping stores of value-mapping.ts, the custom resources'
 * converting store) use it to rewrite keys or values; a mapping may be asynchronous (a conversion
 * webhook).
 */
import type { Watch, WatchEvent } from './interface.js';

/** `inner` with every event passed through `map` (progress events included), in order. */
export class MappedWatch implements Watch {
  readonly #inner: Watch;
  readonly #map: (event: WatchEvent) => WatchEvent | Promise<WatchEvent>;

  constructor(inner: Watch, map: (event: WatchEvent) => WatchEvent | Promise<WatchEvent>) {
    this.#inner = inner;
    this.#map = map;
  }

  requestProgress(): void {
    this.#inner.requestProgress();
  }

  close(): void {
    this.#inner.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    // A hand-written iterator rather than an async generator: a generator would queue `return()`
    // behind a pending `next()`, so a consumer breaking out could not end a quiet watch.
    const inner = this.#inner[Symbol.asyncIterator]();
    const map = this.#map;
    return {
      async next(): Promise<IteratorResult<WatchEvent>> {
        const step = await inner.next();
        return step.done === true ? step : { done: false, value: await map(step.value) };
      },
      async return(value?: unknown): Promise<IteratorResult<WatchEvent>> {
        if (inner.return !== undefined) return inner.return(value);
        return { done: true, value: undefined };
      },
    };
  }
}
