/**
 * How the shared suite gets stores, and the per-test harness that opens and closes them.
 */
import { afterEach } from 'vitest';
import type { Store } from '../../../storage/interface.js';

/** What a backend's test file hands to `storeSuite`. */
export interface StoreFactory {
  /** A ready store. With {@link StoreFactory.sharedKeyspace}, other tests' keys may be visible. */
  open(): Promise<Store>;
  /**
   * Close `store` and open the same data again. Present exactly for persistent backends (a
   * lifecycle test checks that), which then run the reopen tests.
   */
  reopen?(store: Store): Promise<Store>;
  /** Release what the factory made (directories, processes) once the suite is done. */
  cleanup(): Promise<void>;
  /**
   * Stores from `open()` share one key space and revision counter (one etcd for the whole file):
   * every test then works under a key namespace of its own and makes no claim about revisions
   * or keys outside it. Unset: each `open()` returns a fresh, empty store.
   */
  readonly sharedKeyspace?: boolean;
  /**
   * A store on never-written storage, for the fresh-store traits when the key space is shared.
   * Unset with a shared key space: those traits are not checked.
   */
  openFresh?(): Promise<Store>;
  /** Runs of the model-based property; default: by capabilities, or `CAPSTAN_PROPERTY_RUNS`. */
  readonly propertyRuns?: number;
  /** A fixed fast-check seed for this backend (CAPSTAN_PROPERTY_SEED still overrides it). */
  readonly propertySeed?: number;
}

/** A store opened for one test, with the test's key namespace. */
export interface TestStore {
  /** The store; replaced by {@link TestStore.reopen}. */
  readonly store: Store;
  /** The test's key namespace: `''` on a fresh store, unique on a shared one. */
  readonly ns: string;
  /** `name` inside the namespace. */
  readonly k: (name: string) => string;
  /** Closes and reopens the same data (only when the factory can). */
  readonly reopen: () => Promise<Store>;
}

let namespaces = 0;

/** A namespace no other test in this process uses. */
export function uniqueNamespace(): string {
  namespaces += 1;
  return `t${namespaces}-${Math.random().toString(36).slice(2, 8)}/`;
}

/**
 * Registers an `afterEach` that closes every store opened through the returned opener, so a
 * failing test never leaks a store (or its watches) into the next.
 */
export function useStores(factory: StoreFactory): {
  open(): Promise<TestStore>;
  /**
   * True when {@link openFresh} can give a never-written store. Tests that need one are only
   * declared then (a test never skips at run time: under CI a skip would hide a gap).
   */
  readonly canOpenFresh: boolean;
  openFresh(): Promise<Store>;
} {
  const opened = new Set<Store>();
  afterEach(async () => {
    const stores = [...opened];
    opened.clear();
    await Promise.all(stores.map((store) => store.close()));
  });
  return {
    async open(): Promise<TestStore> {
      let store = await factory.open();
      opened.add(store);
      const ns = factory.sharedKeyspace === true ? uniqueNamespace() : '';
      return {
        get store() {
          return store;
        },
        ns,
        k: (name) => ns + name,
        reopen: async () => {
          if (factory.reopen === undefined) throw new Error('this factory cannot reopen');
          opened.delete(store);
          store = await factory.reopen(store);
          opened.add(store);
          return store;
        },
      };
    },
    canOpenFresh: factory.sharedKeyspace !== true || factory.openFresh !== undefined,
    openFresh(): Promise<Store> {
      const pending = factory.sharedKeyspace === true ? factory.openFresh?.() : factory.open();
      if (pending === undefined) throw new Error('this factory cannot open a fresh store');
      return pending.then((store) => (opened.add(store), store));
    },
  };
}

/** Rejects with a descriptive error when `pending` takes longer than `ms`: a hang guard, not a timing assertion. */
export async function withDeadline<T>(pending: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([pending, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns true (hang guard `ms`). */
export async function eventually(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
