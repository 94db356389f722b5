/**
 * Health endpoints `/healthz`, `/livez`, `/readyz`, and one path per check
 * (`/livez/<check>`, `/readyz/<check>`, `/healthz/<check>`), with kube-apiserver's output so that
 * probes, kubeadm and humans read them alike:
 * - success: `ok` (200); with `?verbose`: one `[+]<check> ok` line per check, then
 *   `<endpoint> check passed`;
 * - `?exclude=<check>` (repeatable) skips a check, listed as `[+]<check> excluded: ok`; an unknown
 *   name adds `warn: some health checks cannot be excluded: no matches for "<name>"`;
 * - failure: always verbose, `[-]<check> failed: reason withheld` for failing checks, last line
 *   `<endpoint> check failed`, status 500 (reasons go to the log, never to the client);
 * - `/<endpoint>/<check>`: `ok`, or 500 `internal server error: <reason>` (for operators).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** A named check: resolves when healthy, throws (or rejects) with the reason when not. */
export interface HealthCheck {
  readonly name: string;
  check(): void | Promise<void>;
}

/** The checks of each endpoint, in output order. */
export interface HealthEndpoints {
  readonly healthz: readonly HealthCheck[];
  readonly livez: readonly HealthCheck[];
  readonly readyz: readonly HealthCheck[];
}

/** Receives the reasons of failed checks (the client never sees them). */
export type HealthFailureLog = (
  endpoint: string,
  failures: readonly { name: string; reason: string }[],
) => void;

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function excludedNames(query: unknown): Set<string> {
  const raw = (query as Record<string, string | string[] | undefined>)['exclude'];
  if (raw === undefined) return new Set();
  return new Set(Array.isArray(raw) ? raw : [raw]);
}

function send(reply: FastifyReply, code: number, body: string): FastifyReply {
  return reply
    .code(code)
    .header('content-type', 'text/plain; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

async function runRoot(
  endpoint: string,
  checks: readonly HealthCheck[],
  request: FastifyRequest,
  reply: FastifyReply,
  log: HealthFailureLog,
): Promise<FastifyReply> {
  const excluded = excludedNames(request.query);
  const outcomes = await Promise.all(
    checks.map(async (c): Promise<string | undefined> => {
      if (excluded.has(c.name)) return undefined;
      try {
        await c.check();
        return undefined;
      } catch (err) {
        return reasonOf(err);
      }
    }),
  );
  let out = '';
  const failures: { name: string; reason: string }[] = [];
  checks.forEach((c, i) => {
    if (excluded.delete(c.name)) {
      out += `[+]${c.name} excluded: ok\n`;
      return;
    }
    const reason = outcomes[i];
    if (reason === undefined) {
      out += `[+]${c.name} ok\n`;
    } else {
      out += `[-]${c.name} failed: reason withheld\n`;
      failures.push({ name: c.name, reason });
    }
  });
  if (excluded.size > 0) {
    const names = [...excluded].map((n) => JSON.stringify(n)).join(',');
    out += `warn: some health checks cannot be excluded: no matches for ${names}\n`;
  }
  if (failures.length > 0) {
    log(endpoint, failures);
    return send(reply, 500, `${out}${endpoint} check failed\n`);
  }
  const verbose = Object.prototype.hasOwnProperty.call(request.query ?? {}, 'verbose');
  return send(reply, 200, verbose ? `${out}${endpoint} check passed\n` : 'ok');
}

/**
 * Registers the three endpoints and their per-check paths on `app` (one wildcard route per
 * endpoint: check names contain slashes, and 3 routes build faster than 60). Checks of one
 * request run concurrently; output keeps the declared order. An unknown check name is a 404.
 */
export function installHealthRoutes(
  app: FastifyInstance,
  endpoints: HealthEndpoints,
  log: HealthFailureLog,
): void {
  for (const endpoint of ['healthz', 'livez', 'readyz'] as const) {
    const checks = endpoints[endpoint];
    const byName = new Map(checks.map((c) => [c.name, c]));
    app.get(`/${endpoint}`, (request, reply) => runRoot(endpoint, checks, request, reply, log));
    app.get(`/${endpoint}/*`, async (request, reply) => {
      const name = (request.params as Record<string, string | undefined>)['*'] ?? '';
      const c = byName.get(name);
      if (c === undefined) return reply.callNotFound();
      try {
        await c.check();
        return send(reply, 200, 'ok');
      } catch (err) {
        log(endpoint, [{ name: c.name, reason: reasonOf(err) }]);
        return send(reply, 500, `internal server error: ${reasonOf(err)}\n`);
      }
    });
  }
}
