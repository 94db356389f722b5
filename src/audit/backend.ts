/**
 * Audit backends (kube's `audit.Backend`): where events go. A backend takes a batch of events
 * and says whether it stored them all; a blocking backend answers synchronously when it can (the
 * log) or with a promise (the webhook). The mode wrappers are kube's:
 * - `blocking-strict`: the backend itself; a failed write fails the request (when it is the
 *   RequestReceived stage's);
 * - `blocking`: failures are reported and ignored ({@link ignoreErrors});
 * - `batch`: events are queued and written asynchronously (src/audit/buffered.ts).
 */
import type { AuditEvent } from './event.js';

/** A backend's answer: true when every event was stored. */
export type Stored = boolean | Promise<boolean>;

/** Where audit events go. */
export interface AuditBackend {
  /** Stores `events` (never throws: failures are reported through the backend's log and answered false). */
  processEvents(events: readonly AuditEvent[]): Stored;
  /** Flushes what is queued and releases files and timers; idempotent. */
  shutdown(): Promise<void>;
  /** For logs: `log`, `buffered<log>`, ... */
  readonly name: string;
  /**
   * Batch boundaries mean nothing to this backend (the log: lines are lines), so batch mode may
   * hand it everything queued in one call (one write instead of one per event).
   */
  readonly coalesces?: boolean;
}

/** Reports a backend failure (kube's `HandlePluginError`). */
export type PluginErrorLog = (message: string, err?: unknown) => void;

/** kube's `blocking` mode: stores, reports failures, always answers true. */
export function ignoreErrors(delegate: AuditBackend): AuditBackend {
  return {
    name: `ignoreErrors<${delegate.name}>`,
    processEvents(events) {
      const r = delegate.processEvents(events);
      return r instanceof Promise ? r.then(() => true) : true;
    },
    shutdown: () => delegate.shutdown(),
  };
}

/** Several backends as one (the log and the webhook); stored when all stored. */
export function unionBackend(backends: readonly AuditBackend[]): AuditBackend {
  if (backends.length === 1 && backends[0] !== undefined) return backends[0];
  return {
    name: `union[${backends.map((b) => b.name).join(',')}]`,
    processEvents(events) {
      let ok = true;
      let pending: Promise<boolean>[] | undefined;
      for (const b of backends) {
        const r = b.processEvents(events);
        if (r instanceof Promise) (pending ??= []).push(r);
        else ok = r && ok;
      }
      if (pending === undefined) return ok;
      return Promise.all(pending).then((all) => all.every(Boolean) && ok);
    },
    async shutdown() {
      await Promise.all(backends.map((b) => b.shutdown()));
    },
  };
}
