/**
 * Test wrappers of a {@link Store}: one call replaced (every other member is the store's own),
 * a gate that holds watch events back while shut, and a counter of reads.
 */
import type { Store, Watch, WatchEvent } from '../../storage/interface.js';

/** `store` with the calls in `overrides` replaced; every other member is the store's, bound to it. */
export function overriding(store: Store, overrides: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof Store];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `store`, counting its `get` calls in `counter.gets`. */
export function countingGets(store: Store, counter: { gets: number }): Store {
  return overriding(store, {
    get: (...args) => {
      counter.gets++;
      return store.get(...args);
    },
  });
}

/** Holds watch events back while shut ({@link heldWatch}); open at first. */
export class Gate {
  #passed: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  shut(): void {
    this.#passed = new Promise((resolve) => (this.#release = resolve));
  }

  open(): void {
    this.#release?.();
  }

  /** Resolves once the gate is open. */
  get passed(): Promise<void> {
    return this.#passed;
  }
}

/** `inner`, each of whose events waits for `gate` to be open before it is delivered. */
export function heldWatch(inner: Watch, gate: Gate): Watch {
  const it = inner[Symbol.asyncIterator]();
  return {
    requestProgress: () => inner.requestProgress(),
    close: () => inner.close(),
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<WatchEvent>> => {
        const r = await it.next();
        await gate.passed;
        return r;
      },
      return: () => it.return?.() ?? Promise.resolve({ done: true, value: undefined }),
    }),
  };
}
