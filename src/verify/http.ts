/**
 * The HTTP side of `capstan verify`: JSON requests and watch streams over the client library's
 * HTTP/2 transport (any server a kubeconfig names: client certificates, bearer tokens, CA data),
 * each exchange kept in a transcript that a counterexample prints. Verify checks the wire, so it
 * uses raw requests and reads watch bytes itself (an ERROR event or an unparsable line is data
 * here, not an exception), without client-side rate limits.
 */
import { constants, type IncomingHttpHeaders } from 'node:http2';
import { Client } from '../client/client.js';
import { configFromCredentials } from '../client/config.js';
import type { KubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import { VerifyError } from './rules.js';

/** The fields of Kubernetes JSON (objects, lists, Status) that verify reads. */
export interface KubeJson {
  readonly kind?: string;
  readonly code?: number;
  readonly message?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly resourceVersion?: string;
    readonly continue?: string;
    readonly remainingItemCount?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly items?: readonly unknown[];
  readonly data?: Readonly<Record<string, string>>;
}

/** A parsed JSON response. */
export interface JsonResponse {
  readonly status: number;
  readonly body: KubeJson | undefined;
}

/** One exchange of the transcript. */
export interface Exchange {
  readonly request: string;
  response: string;
}

/** A watch event as received. */
export interface WireEvent {
  readonly type: string;
  readonly object: KubeJson | undefined;
}

/** An open watch. */
export interface WatchStream {
  readonly status: number;
  /** Events so far (grows as they arrive). */
  readonly events: readonly WireEvent[];
  /** Whether the stream has ended. */
  readonly ended: boolean;
  /** Resolves once `done(events)` holds, the stream ends, or `timeoutMs` passes. */
  until(done: (events: readonly WireEvent[]) => boolean, timeoutMs: number): Promise<void>;
  close(): void;
}

const BODY_SHOWN = 600;

function shorten(text: string): string {
  return text.length <= BODY_SHOWN ? text : `${text.slice(0, BODY_SHOWN)}… (${text.length} bytes)`;
}

/** A client of one server that records what it sends and receives. */
export class VerifyHttp {
  readonly #client: Client;
  #transcript: Exchange[] = [];

  constructor(creds: KubeconfigCredentials) {
    this.#client = new Client({ ...configFromCredentials(creds), qps: -1 });
  }

  /** The exchanges since the last {@link resetTranscript}. */
  get transcript(): readonly Exchange[] {
    return this.#transcript;
  }

  /** Starts a new transcript (each run has its own). */
  resetTranscript(): void {
    this.#transcript = [];
  }

  /** One JSON request. */
  async send(method: string, path: string, body?: unknown): Promise<JsonResponse> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const entry: Exchange = {
      request: `${method} ${path}${text === undefined ? '' : ` ${text}`}`,
      response: '',
    };
    this.#transcript.push(entry);
    let res;
    try {
      res = await this.#client.request({
        method,
        path,
        ...(text === undefined ? {} : { body: text, contentType: 'application/json' }),
      });
    } catch (err) {
      entry.response = 'no response';
      throw new VerifyError('VERIFY_UNREACHABLE', err instanceof Error ? err.message : String(err), {
        cause: err,
      });
    }
    const raw = res.body.toString('utf8');
    entry.response = `${res.status} ${shorten(raw)}`;
    let parsed: KubeJson | undefined = undefined;
    try {
      parsed = raw === '' ? undefined : (JSON.parse(raw) as KubeJson);
    } catch {
      parsed = undefined;
    }
    if (res.status === 401 || res.status === 403)
      throw new VerifyError(
        'VERIFY_SETUP',
        `${method} ${path.split('?')[0]}: HTTP ${res.status}: ${shorten(raw)}`,
      );
    return { status: res.status, body: parsed };
  }

  /** Opens a watch; resolves once the response headers arrived. */
  async watch(path: string): Promise<WatchStream> {
    const entry: Exchange = { request: `WATCH ${path}`, response: '' };
    this.#transcript.push(entry);
    const events: WireEvent[] = [];
    let buffer = '';
    let ended = false;
    let wake: (() => void) | undefined;
    const stream = this.#stream(path, (chunk) => {
      buffer += chunk.toString('utf8');
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line === '') continue;
        try {
          events.push(JSON.parse(line) as WireEvent);
        } catch {
          events.push({ type: 'UNPARSABLE', object: { message: line } });
        }
      }
      wake?.();
    });
    void stream.ended.then(() => {
      ended = true;
      if (buffer.trim() !== '') {
        try {
          events.push(JSON.parse(buffer) as WireEvent);
        } catch {
          events.push({ type: 'UNPARSABLE', object: { message: buffer } });
        }
      }
      wake?.();
    });
    const status = await stream.status;
    if (status === 0) throw new VerifyError('VERIFY_UNREACHABLE', `WATCH ${path}: no response`);
    entry.response = `${status}`;
    return {
      status,
      events,
      get ended() {
        return ended;
      },
      until: async (done, timeoutMs) => {
        const deadline = Date.now() + timeoutMs;
        while (!done(events) && !ended && Date.now() < deadline) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          wake = undefined;
        }
        entry.response = `${status}, events: ${shorten(events.map(eventLine).join(' | '))}`;
      },
      close: () => stream.close(),
    };
  }

  /**
   * A streaming GET whose body chunks go to `onChunk`; stream errors end it (`ended`), never
   * throw. `status` is 0 when the stream closed without a response.
   */
  #stream(
    path: string,
    onChunk: (chunk: Buffer) => void,
  ): { status: Promise<number>; ended: Promise<void>; close(): void } {
    let stream;
    try {
      stream = this.#client.transport.open({ method: 'GET', path, headers: { accept: 'application/json' } });
    } catch (err) {
      throw new VerifyError('VERIFY_UNREACHABLE', err instanceof Error ? err.message : String(err), {
        cause: err,
      });
    }
    const s = stream;
    const status = new Promise<number>((resolve) => {
      s.once('response', (h: IncomingHttpHeaders) => resolve(Number(h[constants.HTTP2_HEADER_STATUS])));
      s.once('close', () => resolve(0));
    });
    const ended = new Promise<void>((resolve) => s.once('close', () => resolve()));
    s.on('data', onChunk);
    s.on('error', () => undefined);
    return { status, ended, close: () => s.close(constants.NGHTTP2_CANCEL) };
  }

  /** Closes the connection (open watches are cut after a second). */
  close(): void {
    void this.#client.close();
  }
}

/** One event in a line: `ADDED a(v=x)@12`. */
export function eventLine(e: WireEvent): string {
  const m = e.object?.metadata;
  if (e.type === 'ERROR') return `ERROR ${e.object?.code ?? ''} ${e.object?.message ?? ''}`;
  if (e.type === 'UNPARSABLE') return `UNPARSABLE ${e.object?.message ?? ''}`;
  const v = e.object?.data?.['v'];
  return `${e.type} ${m?.name ?? ''}${v === undefined ? '' : `(v=${v})`}@${m?.resourceVersion ?? '?'}`;
}
