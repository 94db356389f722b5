/**
 * The log backend (kube's `plugin/pkg/audit/log`): each event is one line, `json` (the Event) or
 * `legacy` (kube's `AUDIT:` text), appended to `--audit-log-path` (rotated, see rotating-file.ts)
 * or written to standard output for `-`. A batch is written with one write: synchronously in the
 * blocking modes (the request waits for its event), in the background in batch mode, where the
 * file write runs on libuv's thread pool while the event loop serves requests.
 */
import type { AuditBackend, PluginErrorLog } from './backend.js';
import { jsonLine, legacyLine, type AuditEvent } from './event.js';
import { RotatingFile, type RotationOptions } from './rotating-file.js';

/** `--audit-log-format`. */
export type LogFormat = 'json' | 'legacy';

/** Where the lines go. */
export interface LineSink {
  write(data: Buffer): void;
  /** Appends `data` without blocking the event loop (after every write issued before it). */
  writeAsync?(data: Buffer): Promise<void>;
  close(): void;
}

/**
 * Standard output. `process.stdout` writes files and pipes synchronously on Linux, so a
 * blocking event is out before the reply; a terminal write error surfaces as a stream error.
 */
export const STDOUT_SINK: LineSink = {
  write: (data) => {
    process.stdout.write(data);
  },
  close: () => undefined,
};

/** Opens `path` (`-`: standard output); throws kube's `ensureLogFile` failure when it cannot. */
export function openLogSink(path: string, rotation: RotationOptions): LineSink {
  if (path === '-') return STDOUT_SINK;
  try {
    return new RotatingFile(path, rotation);
  } catch (err) {
    throw new Error(`ensureLogFile: ${(err as Error).message}`, { cause: err });
  }
}

/** The log backend over `sink`; `background`: write without blocking (batch mode). */
export function logBackend(
  sink: LineSink,
  format: LogFormat,
  log: PluginErrorLog,
  background = false,
): AuditBackend {
  const line = lineFormat(format);
  const writeAsync = background ? sink.writeAsync?.bind(sink) : undefined;
  let closed = false;
  let last: Promise<unknown> = Promise.resolve();
  const failed = (events: readonly AuditEvent[], err: unknown): false => {
    log(`Error in audit plugin 'log' affecting ${events.length} audit events: ${(err as Error).message}`);
    return false;
  };
  return {
    name: 'log',
    coalesces: true,
    processEvents(events) {
      if (closed) return false;
      // Each line encoded on its own, then one copy: a batch built as one string is a deep rope
      // that its byte count and its encoding each had to walk (about 1 µs more per event).
      const data = Buffer.concat(events.map((ev) => Buffer.from(line(ev))));
      if (writeAsync !== undefined) {
        const written = writeAsync(data).then(
          () => true,
          (err: unknown) => failed(events, err),
        );
        last = written;
        return written;
      }
      try {
        sink.write(data);
        return true;
      } catch (err) {
        return failed(events, err);
      }
    },
    async shutdown() {
      if (closed) return;
      closed = true;
      await last;
      sink.close();
    },
  };
}

function lineFormat(format: LogFormat): (ev: AuditEvent) => string {
  return format === 'legacy' ? legacyLine : jsonLine;
}

/** Test and documentation helper: the lines of `events` as the backend writes them. */
export function formatLines(events: readonly AuditEvent[], format: LogFormat): string {
  return events.map(lineFormat(format)).join('');
}
