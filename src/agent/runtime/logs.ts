/**
 * Container logs as kubelet serves them from CRI log files (`<RFC3339Nano> <stream> <P|F>
 * <text>` per line; P marks a partial line continued by the next): the text, with `timestamps`
 * each line prefixed by its time, `tailLines` the last lines only, `limitBytes` a cap, `follow`
 * streaming new lines until the container stops.
 */
import { existsSync, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/** The request's options (kubelet's PodLogOptions subset). */
export interface LogOptions {
  readonly follow: boolean;
  readonly timestamps: boolean;
  readonly tailLines?: number;
  readonly limitBytes?: number;
  readonly sinceSeconds?: number;
}

/** One decoded CRI log line. */
interface LogLine {
  readonly time: string;
  readonly text: string;
}

/**
 * Decodes CRI log text into whole lines (partial lines joined). `rest` is the text not taken
 * yet: an unfinished last line, and the partial lines no full line has ended (decoded again
 * with what follows); `pending` is those partial lines joined, without a newline (kubelet writes
 * a partial line as it is, so the text of a container that exits mid-line is still shown).
 */
export function decodeCriLog(text: string): { lines: LogLine[]; rest: string; pending?: LogLine } {
  const lines: LogLine[] = [];
  let partial = '';
  let partialTime = '';
  let partialStart = -1;
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) break;
    const lineStart = start;
    const raw = text.slice(start, nl);
    start = nl + 1;
    const s1 = raw.indexOf(' ');
    const s2 = raw.indexOf(' ', s1 + 1);
    const s3 = raw.indexOf(' ', s2 + 1);
    if (s1 < 0 || s2 < 0) continue;
    const time = raw.slice(0, s1);
    const tag = s3 < 0 ? raw.slice(s2 + 1) : raw.slice(s2 + 1, s3);
    const content = s3 < 0 ? '' : raw.slice(s3 + 1);
    if (tag === 'P') {
      if (partialStart < 0) {
        partialStart = lineStart;
        partialTime = time;
      }
      partial += content;
      continue;
    }
    lines.push({ time: partialStart < 0 ? time : partialTime, text: `${partial}${content}\n` });
    partial = '';
    partialStart = -1;
  }
  if (partialStart < 0) return { lines, rest: text.slice(start) };
  return { lines, rest: text.slice(partialStart), pending: { time: partialTime, text: partial } };
}

function render(line: LogLine, timestamps: boolean): string {
  return timestamps ? `${line.time} ${line.text}` : line.text;
}

/**
 * Writes a log file to `out` by the options. When following, `running()` is asked every
 * 250 ms whether the container still runs; the stream ends once it does not and the file is
 * drained, or when `signal` aborts (the client went away).
 */
export async function writeLogs(
  path: string,
  opts: LogOptions,
  out: Writable,
  running: () => Promise<boolean>,
  signal: AbortSignal,
): Promise<void> {
  let budget = opts.limitBytes ?? Infinity;
  const emit = (s: string): boolean => {
    if (budget <= 0) return false;
    const buf = Buffer.from(s);
    const part = buf.length > budget ? buf.subarray(0, budget) : buf;
    budget -= part.length;
    out.write(part);
    return budget > 0;
  };
  const since = opts.sinceSeconds ? Date.now() - opts.sinceSeconds * 1000 : 0;
  const text = existsSync(path) ? await readFile(path, 'utf8') : '';
  const first = decodeCriLog(text);
  let offset = Buffer.byteLength(text);
  let rest = first.rest;
  // Without follow, partial lines no full line ended are shown as they are; a follower waits
  // for their end (or for the container's).
  const all = !opts.follow && first.pending ? [...first.lines, first.pending] : first.lines;
  let chosen = since ? all.filter((l) => Date.parse(l.time) >= since) : all;
  if (opts.tailLines !== undefined && opts.tailLines >= 0)
    chosen = chosen.slice(Math.max(0, chosen.length - opts.tailLines));
  for (const l of chosen) if (!emit(render(l, opts.timestamps))) return;
  if (!opts.follow) return;
  while (!signal.aborted) {
    const size = existsSync(path) ? statSync(path).size : 0;
    if (size > offset) {
      const fh = await open(path, 'r');
      try {
        const buf = Buffer.alloc(size - offset);
        await fh.read(buf, 0, buf.length, offset);
        offset = size;
        const decoded = decodeCriLog(rest + buf.toString('utf8'));
        rest = decoded.rest;
        for (const l of decoded.lines) if (!emit(render(l, opts.timestamps))) return;
      } finally {
        await fh.close();
      }
      continue;
    }
    if (!(await running())) {
      // One last look for lines written just before the exit.
      if ((existsSync(path) ? statSync(path).size : 0) > offset) continue;
      const { pending } = decodeCriLog(rest);
      if (pending) emit(render(pending, opts.timestamps));
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
