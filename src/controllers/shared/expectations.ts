/**
 * Controller expectations, as kube's `ControllerExpectations`: after a controller creates or
 * deletes N pods it records that it expects to see N adds or deletes in its informer; until they
 * arrive (or 5 minutes pass) its cache is known to be behind, and the controller does not act on
 * counts again, so a stale cache never makes it create or delete twice.
 */

/** How long an expectation is trusted before the controller acts anyway (kube: 5 minutes). */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  /** Keys of pods expected to go (UID-tracked deletions, as kube's UIDTrackingControllerExpectations). */
  readonly deleting: Set<string>;
  readonly since: number;
}

/** Expectations by controller key (`namespace/name`). */
export class Expectations {
  readonly #byKey = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when the controller may act: nothing outstanding, never set, or expired. */
  satisfied(key: string): boolean {
    const e = this.#byKey.get(key);
    if (e === undefined) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return this.now() - e.since > EXPECTATIONS_TIMEOUT_MS;
  }

  /** Expects `n` creations (replaces what was expected). */
  expectCreations(key: string, n: number): void {
    this.#byKey.set(key, { add: n, del: 0, deleting: new Set(), since: this.now() });
  }

  /** Expects the deletion of the pods with `podKeys`. */
  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.#byKey.set(key, { add: 0, del: podKeys.length, deleting: new Set(podKeys), since: this.now() });
  }

  /** A creation was seen (or will never happen: a failed create). */
  creationObserved(key: string): void {
    const e = this.#byKey.get(key);
    if (e !== undefined) e.add--;
  }

  /** A deletion was seen (or will never happen). Counted once per pod key. */
  deletionObserved(key: string, podKey: string): void {
    const e = this.#byKey.get(key);
    if (e === undefined || !e.deleting.delete(podKey)) return;
    e.del--;
  }

  /** Forgets the controller (it was deleted). */
  delete(key: string): void {
    this.#byKey.delete(key);
  }
}
