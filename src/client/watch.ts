/**
 * Watch decoding: a watch response is a stream of JSON `WatchEvent` objects, one per line (as
 * kube-apiserver frames them). {@link HttpWatchStream} splits the bytes on newlines, parses each
 * event once, and hands them out through an async iterator; it pauses the HTTP/2 stream when the
 * consumer falls behind. An `ERROR` event (e.g. 410 Expired) is thrown from the iterator as an
 * {@link ApiStatusError}; the server or network ending the stream ends the iteration.
 */
import { constants, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { Status } from '../api/types/meta-v1.js';
import { ApiStatusError } from './errors.js';
import { TransportError } from './transport.js';

/** The event types a consumer sees (`ERROR` is thrown instead). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/** One watch event; for BOOKMARK only `metadata.resourceVersion` (and annotations) is meaningful. */
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** A running watch: iterate it (once); `close()` ends it from this side. */
export interface WatchStream<T> extends AsyncIterable<WatchEvent<T>> {
  close(): void;
}

/** Pause reading above this many undelivered events. */
const HIGH_WATER = 1024;
const NEWLINE = 0x0a;

/** A watch over one HTTP/2 stream. */
export class HttpWatchStream<T> implements WatchStream<T>, AsyncIterator<WatchEvent<T>> {
  readonly #stream: ClientHttp2Stream;
  readonly #context: string;
  #status = 0;
  /** Undelivered events, consumed from #head. */
  #queue: WatchEvent<T>[] = [];
  #head = 0;
  /** Bytes of an incomplete line. */
  #partial: Buffer[] = [];
  #error: Error | undefined;
  #ended = false;
  #closedByUs = false;
  #paused = false;
  #waiter: { resolve: (r: IteratorResult<WatchEvent<T>>) => void; reject: (e: Error) => void } | undefined;

  /**
   * @param stream the opened request (its response not yet read).
   * @param context names the watch in errors (`watch pods`).
   */
  constructor(stream: ClientHttp2Stream, context: string) {
    this.#stream = stream;
    this.#context = context;
    stream.on('response', this.#onResponse);
    stream.on('data', this.#onData);
    stream.on('end', this.#onEnd);
    stream.on('close', this.#onEnd);
    stream.on('error', this.#onError);
  }

  readonly #onResponse = (h: IncomingHttpHeaders): void => {
    this.#status = Number(h[constants.HTTP2_HEADER_STATUS]);
  };

  readonly #onData = (chunk: Buffer): void => {
    if (this.#status !== 200) {
      this.#partial.push(chunk); // the failure body, decoded at the end
      return;
    }
    let start = 0;
    let nl = chunk.indexOf(NEWLINE, start);
    while (nl !== -1) {
      let line: Buffer;
      if (this.#partial.length > 0) {
        this.#partial.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.#partial);
        this.#partial = [];
      } else {
        line = chunk.subarray(start, nl);
      }
      if (line.length > 0) this.#decode(line);
      if (this.#error !== undefined) return;
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) this.#partial.push(chunk.subarray(start));
    if (!this.#paused && this.#queue.length - this.#head >= HIGH_WATER) {
      this.#paused = true;
      this.#stream.pause();
    }
  };

  #decode(line: Buffer): void {
    let ev: { type?: unknown; object?: unknown };
    try {
      ev = JSON.parse(line.toString('utf8')) as { type?: unknown; object?: unknown };
    } catch (err) {
      this.#fail(new Error(`${this.#context}: undecodable watch event`, { cause: err }));
      return;
    }
    if (ev.type === 'ERROR') {
      const status = (ev.object ?? {}) as Status;
      this.#fail(new ApiStatusError(status.code ?? 500, status, this.#context));
      return;
    }
    const event = ev as WatchEvent<T>;
    const w = this.#waiter;
    if (w !== undefined) {
      this.#waiter = undefined;
      w.resolve({ value: event, done: false });
    } else {
      this.#queue.push(event);
    }
  }

  readonly #onEnd = (): void => {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#error === undefined && !this.#closedByUs) {
      if (this.#status !== 200 && this.#status !== 0) {
        this.#error = ApiStatusError.fromResponse(this.#status, Buffer.concat(this.#partial), this.#context);
      } else if (this.#status === 0) {
        this.#error = new TransportError('CLIENT_UNREACHABLE', `${this.#context}: no response`);
      }
    }
    this.#settle();
  };

  readonly #onError = (err: Error): void => {
    if (this.#closedByUs) return;
    // A stream that ran and then broke (server gone, session reset) simply ends: the caller
    // resumes from its last resourceVersion. Before a response it is a connection failure.
    if (this.#status === 0)
      this.#error ??= new TransportError('CLIENT_UNREACHABLE', `${this.#context}: ${err.message}`, {
        cause: err,
      });
    this.#onEnd();
  };

  #fail(err: Error): void {
    this.#error ??= err;
    this.#ended = true;
    this.#stream.close(constants.NGHTTP2_CANCEL);
    this.#settle();
  }

  /** Wakes a waiting consumer when nothing more will come. */
  #settle(): void {
    const w = this.#waiter;
    if (w === undefined || this.#head < this.#queue.length) return;
    this.#waiter = undefined;
    if (this.#error !== undefined && !this.#closedByUs) w.reject(this.#error);
    else w.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#head < this.#queue.length) {
      const value = this.#queue[this.#head++]!;
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      if (this.#paused && this.#queue.length - this.#head < HIGH_WATER / 2) {
        this.#paused = false;
        this.#stream.resume();
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#ended || this.#closedByUs) {
      if (this.#error !== undefined && !this.#closedByUs) {
        const err = this.#error;
        this.#error = undefined; // thrown once
        return Promise.reject(err);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    return this;
  }

  /** Ends the watch; a pending or later `next()` reports done. Idempotent. */
  close(): void {
    if (this.#closedByUs) return;
    this.#closedByUs = true;
    this.#queue = [];
    this.#head = 0;
    if (!this.#stream.closed && !this.#stream.destroyed) this.#stream.close(constants.NGHTTP2_CANCEL);
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.resolve({ value: undefined, done: true });
  }
}

/** A watch that failed before it opened (no session): its iterator throws `err`. */
export class FailedWatchStream<T> implements WatchStream<T> {
  readonly #err: Error;
  #thrown = false;
  constructor(err: Error) {
    this.#err = err;
  }
  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    return {
      next: () => {
        if (this.#thrown) return Promise.resolve({ value: undefined, done: true });
        this.#thrown = true;
        return Promise.reject(this.#err);
      },
    };
  }
  close(): void {
    this.#thrown = true;
  }
}
