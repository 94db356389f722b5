/**
 * A long-lived HTTP/2 session to a test server with the admin credentials, for tests that send
 * thousands of writes: one TLS handshake, then many requests in flight on one connection.
 * @kubernetes/client-node makes a new connection per request, which costs several milliseconds
 * of TLS per write and dominates tests that write 10,000 objects.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { adminTls } from './https.js';

/** A whole response. */
export interface H2Response {
  readonly status: number;
  readonly body: string;
}

/** An HTTP/2 session; reconnects lazily when the server closed it (e.g. across a restart). */
export class H2Session {
  readonly #origin: string;
  readonly #tls: ReturnType<typeof adminTls>;
  #session: ClientHttp2Session | undefined;

  /** @param url the server's https URL; @param kubeconfigPath the admin kubeconfig it wrote. */
  constructor(url: string, kubeconfigPath: string) {
    this.#origin = new URL(url).origin;
    this.#tls = adminTls(kubeconfigPath);
  }

  #live(): ClientHttp2Session {
    const s = this.#session;
    if (s !== undefined && !s.closed && !s.destroyed) return s;
    const session = connect(this.#origin, this.#tls);
    // Errors surface on the streams; an idle session's error only means "reconnect next time".
    session.on('error', () => undefined);
    session.on('close', () => {
      if (this.#session === session) this.#session = undefined;
    });
    this.#session = session;
    return session;
  }

  /** One request with an optional JSON body; resolves with the whole response. */
  request(method: string, path: string, body?: unknown): Promise<H2Response> {
    return new Promise((resolve, reject) => {
      const stream = this.#live().request({
        ':method': method,
        ':path': path,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      });
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c: string) => (text += c));
      stream.on('end', () => resolve({ status, body: text }));
      stream.on('error', reject);
      stream.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** Like {@link request}, but rejects unless the status is `want`. */
  async expect(want: number, method: string, path: string, body?: unknown): Promise<H2Response> {
    const res = await this.request(method, path, body);
    if (res.status !== want) throw new Error(`${method} ${path}: ${res.status}, want ${want}: ${res.body}`);
    return res;
  }

  /** Closes the session (in-flight requests finish first). */
  close(): Promise<void> {
    const s = this.#session;
    this.#session = undefined;
    if (s === undefined || s.closed) return Promise.resolve();
    return new Promise((resolve) => s.close(resolve));
  }
}
