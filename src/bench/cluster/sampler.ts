/**
 * CPU time and resident memory of a set of processes (a whole stack), from `/proc`: the summed
 * RSS sampled every half second (its peak is the figure) and the CPU the set used between start
 * and stop. A process that starts after the sampler counts all of its CPU; one that exits keeps
 * its last reading.
 */
import { readProc } from '../proc.js';

/** What a {@link GroupSampler} saw. */
export interface GroupFigures {
  /** CPU seconds the processes used in the interval. */
  readonly cpuSeconds: number;
  /** Peak of the summed RSS, MiB. */
  readonly peakRssMiB: number;
  /** The summed RSS at stop, MiB. */
  readonly endRssMiB: number;
}

const MIB = 1024 * 1024;

/** Samples `pids()` (read anew each time: processes may join) from construction to {@link stop}. */
export class GroupSampler {
  readonly #pids: () => readonly number[];
  readonly #startCpu = new Map<number, number>();
  readonly #lastCpu = new Map<number, number>();
  #peak = 0;
  #last = 0;
  #first = true;
  readonly #timer: NodeJS.Timeout;

  constructor(pids: () => readonly number[], intervalMs = 500) {
    this.#pids = pids;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
    this.#timer.unref();
  }

  #sample(): void {
    let rss = 0;
    for (const pid of this.#pids()) {
      const r = readProc(pid);
      if (r === undefined) continue;
      if (!this.#startCpu.has(pid)) this.#startCpu.set(pid, this.#first ? r.cpuMs : 0);
      this.#lastCpu.set(pid, r.cpuMs);
      rss += r.rssBytes;
    }
    this.#first = false;
    this.#last = rss;
    if (rss > this.#peak) this.#peak = rss;
  }

  /** Stops sampling (one last sample first). */
  stop(): GroupFigures {
    this.#sample();
    clearInterval(this.#timer);
    let cpuMs = 0;
    for (const [pid, start] of this.#startCpu) cpuMs += (this.#lastCpu.get(pid) ?? start) - start;
    return { cpuSeconds: cpuMs / 1000, peakRssMiB: this.#peak / MIB, endRssMiB: this.#last / MIB };
  }
}
