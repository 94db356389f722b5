/**
 * CORS (`--cors-allowed-origins`) and HSTS (`--strict-transport-security-directives`), as
 * kube-apiserver's outermost filters: a request whose `Origin` matches one of the origin
 * regular expressions gets kube's CORS headers, and a preflight (`OPTIONS`) from it is answered
 * 204 at once, before authentication; HSTS adds its header to every response.
 */
import type { FastifyInstance } from 'fastify';

const ALLOW_METHODS = 'POST, GET, OPTIONS, PUT, DELETE, PATCH';
const ALLOW_HEADERS =
  'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since';
const EXPOSE_HEADERS = 'Date';

/**
 * Compiles `--cors-allowed-origins`.
 * @throws Error naming the entry for an invalid regular expression.
 */
export function compileOrigins(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => {
    try {
      return new RegExp(p);
    } catch {
      throw new Error(`--cors-allowed-origins: invalid regular expression ${JSON.stringify(p)}`);
    }
  });
}

/**
 * Validates `--strict-transport-security-directives` and returns the header value.
 * @throws Error with kube's message for an unknown directive.
 */
export function hstsHeaderValue(directives: readonly string[]): string | undefined {
  if (directives.length === 0) return undefined;
  for (const d of directives) {
    if (!/^max-age=\d+$/.test(d) && d !== 'includeSubDomains' && d !== 'preload') {
      throw new Error(
        '--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information',
      );
    }
  }
  return directives.join('; ');
}

/** Installs the CORS and HSTS hooks (before the request pipeline); no-ops when both are off. */
export function installCorsAndHsts(
  app: FastifyInstance,
  origins: readonly RegExp[],
  hsts: string | undefined,
): void {
  if (hsts !== undefined) {
    app.addHook('onRequest', (_request, reply, done) => {
      void reply.header('strict-transport-security', hsts);
      done();
    });
  }
  if (origins.length === 0) return;
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined || !origins.some((re) => re.test(origin))) {
      done();
      return;
    }
    void reply
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-methods', ALLOW_METHODS)
      .header('access-control-allow-headers', ALLOW_HEADERS)
      .header('access-control-expose-headers', EXPOSE_HEADERS)
      .header('access-control-allow-credentials', 'true');
    if (request.method === 'OPTIONS') {
      void reply.code(204).send();
      return;
    }
    done();
  });
}
