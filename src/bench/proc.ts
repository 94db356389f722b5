/**
 * CPU time and resident memory of a local server process, read from Linux's `/proc`. Used for
 * the server the bench spawned or one named with `--server-pid`; elsewhere (no `/proc`, another
 * machine) the figures are simply absent.
 */
import { readFileSync } from 'node:fs';

/**
 * Clock ticks per second of `/proc/<pid>/stat` times. Linux fixes USER_HZ at 100 on every
 * architecture Node runs on, so there is no need to ask `getconf CLK_TCK`.
 */
const TICKS_PER_SECOND = 100;

/** One reading of a process. */
export interface ProcReading {
  /** User + system CPU time so far, milliseconds (10 ms resolution). */
  readonly cpuMs: number;
  /** Resident set size, bytes. */
  readonly rssBytes: number;
}

/**
 * Parses `/proc/<pid>/stat` (CPU) and `/proc/<pid>/status` (VmRSS) texts. The command name in
 * `stat` may hold spaces and parentheses, so fields are counted after the last `)`.
 * @throws Error when either text lacks its fields.
 */
export function parseProc(statText: string, statusText: string): ProcReading {
  const rest = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime field 14, stime field 15 (1-based, man proc).
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  const kb = /VmRSS:\s+(\d+) kB/.exec(statusText)?.[1];
  if (!Number.isFinite(utime) || !Number.isFinite(stime) || kb === undefined)
    throw new Error('unrecognized /proc stat or status text');
  return { cpuMs: ((utime + stime) * 1000) / TICKS_PER_SECOND, rssBytes: Number(kb) * 1024 };
}

/** Reads process `pid`; undefined when it cannot (no /proc, process gone). */
export function readProc(pid: number): ProcReading | undefined {
  try {
    return parseProc(readFileSync(`/proc/${pid}/stat`, 'utf8'), readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** What a {@link ProcSampler} saw between start and stop. */
export interface ProcFigures {
  /** CPU time the process used in the interval, milliseconds. */
  readonly cpuMs: number;
  readonly rssStartBytes: number;
  readonly rssPeakBytes: number;
  readonly rssEndBytes: number;
}

/**
 * Samples a process every `intervalMs` (default 50) from construction until {@link stop}:
 * CPU used and peak RSS. Peak RSS is a sampled peak, so a spike shorter than the interval can
 * be missed; the interval is the trade between that and the sampler's own cost.
 */
export class ProcSampler {
  readonly #pid: number;
  readonly #start: ProcReading | undefined;
  #peak = 0;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(pid: number | undefined, intervalMs = 50) {
    this.#pid = pid ?? -1;
    this.#start = pid === undefined ? undefined : readProc(pid);
    if (this.#start === undefined) return;
    this.#peak = this.#start.rssBytes;
    this.#timer = setInterval(() => this.#sample(), intervalMs);
    this.#timer.unref();
  }

  #sample(): ProcReading | undefined {
    const r = readProc(this.#pid);
    if (r !== undefined && r.rssBytes > this.#peak) this.#peak = r.rssBytes;
    return r;
  }

  /** Stops sampling; undefined when the process could not be read (not local, no /proc). */
  stop(): ProcFigures | undefined {
    clearInterval(this.#timer);
    const start = this.#start;
    const end = start === undefined ? undefined : this.#sample();
    if (start === undefined || end === undefined) return undefined;
    return {
      cpuMs: end.cpuMs - start.cpuMs,
      rssStartBytes: start.rssBytes,
      rssPeakBytes: this.#peak,
      rssEndBytes: end.rssBytes,
    };
  }
}
