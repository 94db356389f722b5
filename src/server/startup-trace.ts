/**
 * Start-up phases on stderr when `CAPSTAN_STARTUP_TRACE=1`: `startup <phase> <ms>` with the time
 * since the process started (`performance.now()`) and the CPU time used, for `tools/measure-startup.ts` and for anyone
 * asking where a server's start goes. The first requests are traced too (`startup request …`):
 * when they arrived, how long they took and their status, which shows what a client that polls
 * `/healthz` and then reads discovery waits for. Without the variable it does nothing.
 */
import type { FastifyInstance } from 'fastify';

const enabled = process.env['CAPSTAN_STARTUP_TRACE'] === '1';

/** How many requests {@link traceFirstRequests} reports. */
const TRACED_REQUESTS = 40;
/** How many connections (accepted, then through their TLS handshake) it reports. */
const TRACED_CONNECTIONS = 10;

/** Records that `phase` was reached now, with the process's CPU time (user + system) so far. */
export function startupTrace(phase: string): void {
  if (!enabled) return;
  const { user, system } = process.cpuUsage();
  const cpu = ((user + system) / 1000).toFixed(1);
  process.stderr.write(`startup ${phase} ${performance.now().toFixed(1)} cpu ${cpu}\n`);
}

/** Reports the first requests `app` answers (arrival, duration, status), when tracing is on. */
export function traceFirstRequests(app: FastifyInstance): void {
  if (!enabled) return;
  let left = TRACED_REQUESTS;
  // When the first connections were accepted and their TLS handshakes done: a busy event loop
  // shows as a late accept.
  let connections = 0;
  app.server.on('connection', () => {
    if (connections++ < TRACED_CONNECTIONS) startupTrace(`tcp connection ${connections}`);
  });
  let handshakes = 0;
  app.server.on('secureConnection', () => {
    if (handshakes++ < TRACED_CONNECTIONS) startupTrace(`tls connection ${handshakes}`);
  });
  const arrived = new WeakMap<object, number>();
  app.addHook('onRequest', (request, _reply, done) => {
    if (left > 0) arrived.set(request, performance.now());
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const at = arrived.get(request);
    if (at !== undefined && left-- > 0) {
      const took = (performance.now() - at).toFixed(1);
      process.stderr.write(
        `startup request ${request.method} ${request.url} ${reply.statusCode} at ${at.toFixed(1)} took ${took}\n`,
      );
    }
    done();
  });
}
