/**
 * `--shutdown-send-retry-after`, as kube-apiserver's WithRetryAfter filter: once the server has
 * stopped accepting requests during shutdown (the listener stays open until the requests in
 * flight are answered), every new request except health probes and metrics scrapes is answered 429 with
 * `Retry-After: 5`, and its connection is closed (`Connection: close` on HTTP/1.1, GOAWAY on
 * HTTP/2, where the Connection header is not allowed), so the client retries on another server
 * instead of meeting a refused connection.
 */
import type { Http2ServerRequest } from 'node:http2';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** kube's plain-text body (`http.Error` appends the newline). */
const MESSAGE = 'The apiserver is shutting down, please try again later.\n';
/** kube's exempt path prefixes (plain prefix match): health probes and metrics scraping. */
const EXEMPT_PREFIXES = ['/readyz', '/livez', '/healthz', '/metrics'];

function exempt(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0] ?? '';
  // kube also exempts its own loopback client, known by its user agent.
  const agent = request.headers['user-agent'] ?? '';
  return agent.startsWith('kube-apiserver/') || EXEMPT_PREFIXES.some((p) => path.startsWith(p));
}

/**
 * An onRequest hook: answers 429 when `rejecting()` is true and the request is not a health
 * probe; returns true when it answered.
 */
export function retryAfterOnShutdown(
  rejecting: () => boolean,
): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    if (!rejecting() || exempt(request)) return false;
    void reply.code(429).header('Retry-After', '5').header('X-Content-Type-Options', 'nosniff');
    if (request.raw.httpVersionMajor === 2) {
      const session = (request.raw as unknown as Http2ServerRequest).stream.session;
      reply.raw.once('finish', () => session?.close());
    } else {
      void reply.header('Connection', 'close');
    }
    void reply.type('text/plain; charset=utf-8').send(MESSAGE);
    return true;
  };
}
