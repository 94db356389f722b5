/**
 * CPU usage as a rate (`usageNanoCores`) from cumulative core-nanoseconds, as kubelet's CRI stats
 * provider computes it when the runtime does not: the difference from the previous sample of the
 * same key over the time between them.
 *
 * Per key the newest sample is kept with the rate it gave. A sample less than
 * {@link MIN_WINDOW_NS} after the kept one answers the kept rate and is not kept (two scrapes a
 * few milliseconds apart would give a noisy rate); the first sample of a key, and a counter that
 * went backwards (a new container under the same key), answer undefined and start over.
 */

/** The shortest window a rate is computed over: 1 s. */
export const MIN_WINDOW_NS = 1e9;

interface Sample {
  readonly usage: number;
  /** Nanoseconds. */
  readonly at: number;
  readonly rate: number | undefined;
}

/** Rates per key (container id, pod uid, `node`). */
export class CpuRates {
  readonly #last = new Map<string, Sample>();

  /**
   * The rate (core-nanoseconds per second) since the previous sample of `key`, recording this
   * one. `usage` in core-nanoseconds, `atNs` in nanoseconds since the epoch.
   */
  rate(key: string, usage: number, atNs: number): number | undefined {
    const prev = this.#last.get(key);
    if (prev !== undefined && atNs - prev.at < MIN_WINDOW_NS && usage >= prev.usage) return prev.rate;
    const rate =
      prev === undefined || usage < prev.usage
        ? undefined
        : Math.round(((usage - prev.usage) / (atNs - prev.at)) * 1e9);
    this.#last.set(key, { usage, at: atNs, rate });
    return rate;
  }

  /** Forgets every key not in `keep` (gone containers and pods). */
  prune(keep: ReadonlySet<string>): void {
    for (const key of this.#last.keys()) if (!keep.has(key)) this.#last.delete(key);
  }
}
