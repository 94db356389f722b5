/**
 * kube's batch mode (`plugin/pkg/audit/buffered`): events go to a bounded queue and the request
 * never waits; a drain hands them to the delegate in batches of at most `maxBatchSize`, when a
 * batch is full or `maxBatchWait` after the first queued event (at once when the batch size is
 * 1, the log's default), at most `throttleQps` batches a second (burst `throttleBurst`) when
 * throttling is on. A full queue drops the event (reported). With `asyncDelegate` (the webhook)
 * batches are sent concurrently; otherwise one after another. Shutdown drains everything queued
 * and waits for the batches in flight, so no event accepted before it is lost.
 */
import type { AuditBackend, PluginErrorLog, Stored } from './backend.js';
import type { AuditEvent } from './event.js';

/** kube's `BatchConfig`. */
export interface BatchConfig {
  readonly bufferSize: number;
  readonly maxBatchSize: number;
  readonly maxBatchWaitMs: number;
  readonly throttleEnable: boolean;
  readonly throttleQps: number;
  readonly throttleBurst: number;
  readonly asyncDelegate: boolean;
}

/** A token bucket: `take()` resolves when a token is available. */
class TokenBucket {
  #tokens: number;
  #last = performance.now();
  readonly #qps: number;
  readonly #burst: number;
  constructor(qps: number, burst: number) {
    this.#qps = qps;
    this.#burst = Math.max(1, burst);
    this.#tokens = this.#burst;
  }
  /** Milliseconds to wait before the next token (0: one was taken now). */
  take(): number {
    const now = performance.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }
}

/** The batch-mode wrapper of `delegate`. */
export class BufferedBackend implements AuditBackend {
  readonly name: string;
  readonly #delegate: AuditBackend;
  readonly #config: BatchConfig;
  readonly #log: PluginErrorLog;
  readonly #throttle: TokenBucket | undefined;
  #queue: AuditEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #scheduled = false;
  #draining: Promise<void> | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(delegate: AuditBackend, config: BatchConfig, log: PluginErrorLog) {
    this.#delegate = delegate;
    this.#config = config;
    this.#log = log;
    this.name = `buffered<${delegate.name}>`;
    this.#throttle = config.throttleEnable
      ? new TokenBucket(config.throttleQps, config.throttleBurst)
      : undefined;
  }

  processEvents(events: readonly AuditEvent[]): Stored {
    if (this.#closed) {
      this.#log(`audit backend ${this.name}: audit backend shut down; ${events.length} event(s) dropped`);
      return true;
    }
    for (const ev of events) {
      if (this.#queue.length >= this.#config.bufferSize) {
        this.#log(`audit backend ${this.name}: audit buffer queue blocked; event ${ev.auditID} dropped`);
        return true;
      }
      this.#queue.push(ev);
    }
    this.#schedule();
    return true;
  }

  #schedule(): void {
    const { maxBatchSize, maxBatchWaitMs } = this.#config;
    if (this.#queue.length >= maxBatchSize || maxBatchSize <= 1 || maxBatchWaitMs <= 0) {
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        void this.#drain(false);
      });
      return;
    }
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.#drain(true);
      }, maxBatchWaitMs);
      this.#timer.unref();
    }
  }

  /** Sends full batches (and, when `all`, the partial one at the end). */
  #drain(all: boolean): Promise<void> {
    // A delegate that coalesces takes the whole queue at once when nothing paces batches:
    // everything queued by the time a batch goes, including what queued during the last write.
    const coalescing =
      this.#delegate.coalesces === true && this.#throttle === undefined && !this.#config.asyncDelegate;
    const run = async (): Promise<void> => {
      const batchSize = (): number =>
        coalescing ? Math.max(this.#config.maxBatchSize, this.#queue.length) : this.#config.maxBatchSize;
      while (this.#queue.length >= batchSize() || (all && this.#queue.length > 0)) {
        const batch = this.#queue.splice(0, batchSize());
        const wait = this.#throttle?.take() ?? 0;
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.#send(batch);
        if (!this.#config.asyncDelegate) await Promise.all(this.#inFlight);
      }
      if (this.#queue.length > 0) this.#schedule();
    };
    const previous = this.#draining ?? Promise.resolve();
    const next = previous.then(run, run).finally(() => {
      if (this.#draining === next) this.#draining = undefined;
    });
    this.#draining = next;
    return next;
  }

  #send(batch: AuditEvent[]): void {
    let r: Stored;
    try {
      r = this.#delegate.processEvents(batch);
    } catch (err) {
      this.#log(`audit backend ${this.name} failed`, err);
      return;
    }
    if (!(r instanceof Promise)) return;
    const p = r.catch((err: unknown) => this.#log(`audit backend ${this.name} failed`, err));
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  async shutdown(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#drain(true);
    await Promise.all(this.#inFlight);
    await this.#delegate.shutdown();
  }
}
