/**
 * The log backend (kube's `plugin/pkg/audit/log`): each event is one line, `json` (the Event) or
 * `legacy` (kube's `AUDIT:` text), appended to `--audit-log-path` (rotated, see rotating-file.ts)
 * or written to standard output for `-`. A batch is written with one write.
 */
import type { AuditBackend, PluginErrorLog } from './backend.js';
import { jsonLine, legacyLine, type AuditEvent } from './event.js';
import { RotatingFile, type RotationOptions } from './rotating-file.js';

/** `--audit-log-format`. */
export type LogFormat = 'json' | 'legacy';

/** Where the lines go. */
export interface LineSink {
  write(data: string): void;
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

/** The log backend over `sink`. */
export function logBackend(sink: LineSink, format: LogFormat, log: PluginErrorLog): AuditBackend {
  const line = format === 'legacy' ? legacyLine : jsonLine;
  let closed = false;
  return {
    name: 'log',
    coalesces: true,
    processEvents(events) {
      if (closed) return false;
      let text = '';
      for (const ev of events) text += line(ev);
      try {
        sink.write(text);
        return true;
      } catch (err) {
        log(`Error in audit plugin 'log' affecting ${events.length} audit events: ${(err as Error).message}`);
        return false;
      }
    },
    shutdown() {
      if (!closed) {
        closed = true;
        sink.close();
      }
      return Promise.resolve();
    },
  };
}

/** Test and documentation helper: the lines of `events` as the backend writes them. */
export function formatLines(events: readonly AuditEvent[], format: LogFormat): string {
  return events.map(format === 'legacy' ? legacyLine : jsonLine).join('');
}
