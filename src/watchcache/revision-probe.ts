/**
 * The store's current revision for reads that must see every write completed before they
 * began (Most Recent gets and lists served from a watch cache): one linearizable round trip to
 * storage, shared by every caller that asked while the previous one was out.
 *
 * A caller may share only a probe that started after it asked: a probe already in flight may
 * have been answered before a write that completed just before the caller came. So callers that
 * arrive while a probe is out wait for the next one, which starts as soon as that one is back;
 * under load each round trip serves every read that arrived during the one before it. With an
 * embedded store a probe is a memory read, and sharing it changes nothing.
 */
import type { Store } from '../../storage/interface.js';

/** See the module comment. One per store. */
export class RevisionProbe {
  readonly #store: Pick<Store, 'currentRevision'>;
  /** The probe out now, if any. */
  #out: Promise<bigint> | undefined;
  /** The probe that starts when {@link #out} is back, shared by everyone who asked meanwhile. */
  #next: Promise<bigint> | undefined;

  constructor(store: Pick<Store, 'currentRevision'>) {
    this.#store = store;
  }

  /** A revision at least that of every write completed before this call. */
  current(): Promise<bigint> {
    const out = this.#out;
    if (out === undefined) return this.#start();
    if (this.#next === undefined) {
      const startNext = (): Promise<bigint> => {
        this.#next = undefined;
        return this.#start();
      };
      this.#next = out.then(startNext, startNext);
    }
    return this.#next;
  }

  #start(): Promise<bigint> {
    const probe = this.#store.currentRevision();
    this.#out = probe;
    const back = (): void => {
      if (this.#out === probe) this.#out = undefined;
    };
    probe.then(back, back);
    return probe;
  }
}
