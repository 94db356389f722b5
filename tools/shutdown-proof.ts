/**
 * The shutdown proof: N graceful stops of an in-process server, each with watches and keep-alive
 * connections open, each timed against the configured grace period (`--request-timeout`).
 *
 *   npm run build && node dist/tools/shutdown-proof.js [--stops 200] [--grace 10s]
 *
 * Before each stop the server carries every kind of connection that used to hold a stop up:
 * an idle HTTP/1.1 keep-alive connection, an HTTP/1.1 watch, an idle HTTP/2 session, an HTTP/2
 * session with two watches (one whose reader is paused), a TCP connection that never starts
 * TLS and a TLS connection that never sends a request. The servers share one cert dir (the PKI
 * is generated once) and each runs on its own in-memory store. Exit status 1 when any stop took
 * longer than the grace period or logged connections still open.
 * `test/server/shutdown-proof.test.ts` runs the same stop a few times in CI.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { summarize } from '../src/bench/stats.js';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs } from '../src/server/options.js';
import { startServer } from '../src/server/server.js';

/** One stop's outcome. */
export interface StopResult {
  /** From `shutdown()` to its end (ms). */
  readonly tookMs: number;
  /** The grace period the stop was configured with (ms). */
  readonly graceMs: number;
  /** Open TLS connections just before the stop. */
  readonly openConnections: number;
  /** Warning and error lines the server logged. */
  readonly logs: readonly string[];
}

interface Tls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

function http1(url: string, agent: Agent, tls: Tls): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, ...tls }, (res) => {
      res.on('data', () => undefined);
      res.on('error', () => undefined);
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a stream on `session`; resolves once its response head arrived. */
function h2stream(session: ClientHttp2Session, path: string, paused: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = session.request({ ':path': path });
    s.on('error', () => undefined);
    s.once('response', () => resolve());
    s.once('error', reject);
    if (paused) s.pause();
    else s.on('data', () => undefined);
  });
}

/**
 * Starts a server (memory store, `certDir` shared), opens the connections of the module
 * comment, stops it and times the stop.
 */
export async function stopWithOpenConnections(certDir: string, grace = '10s'): Promise<StopResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-shutdown-'));
  const logs: string[] = [];
  const cleanups: (() => void)[] = [];
  try {
    const parsed = parseServerArgs([
      '--secure-port=0',
      '--bind-address=127.0.0.1',
      `--data-dir=${dataDir}`,
      `--cert-dir=${certDir}`,
      `--request-timeout=${grace}`,
    ]);
    if (parsed.help) throw new Error('unreachable');
    const server = await startServer(parsed.options, {
      store: await openMemoryStore(),
      log: new ServerLog((line) => logs.push(line)),
    });
    const creds = readKubeconfigCredentials(server.kubeconfigPath);
    if (creds.ca === undefined || creds.cert === undefined || creds.key === undefined) {
      throw new Error('the admin kubeconfig has no credentials');
    }
    const tls: Tls = { ca: creds.ca, cert: creds.cert, key: creds.key };
    const port = server.port;

    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => idle.destroy());
    await http1(`${server.url}/api/v1/namespaces`, idle, tls);
    const watch1 = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => watch1.destroy());
    await http1(`${server.url}/api/v1/namespaces/default/configmaps?watch=1`, watch1, tls);

    const quiet = h2connect(server.url, tls);
    quiet.on('error', () => undefined);
    cleanups.push(() => quiet.destroy());
    await new Promise<void>((resolve) => {
      const s = quiet.request({ ':path': '/version' });
      s.on('data', () => undefined);
      s.on('end', resolve);
    });
    const watching = h2connect(server.url, tls);
    watching.on('error', () => undefined);
    cleanups.push(() => watching.destroy());
    await h2stream(watching, '/api/v1/namespaces/default/configmaps?watch=1', false);
    await h2stream(watching, '/api/v1/namespaces?watch=1&allowWatchBookmarks=true', true);

    const raw: Socket = netConnect(port, '127.0.0.1');
    raw.on('error', () => undefined);
    cleanups.push(() => raw.destroy());
    const silent = tlsConnect({ port, host: '127.0.0.1', ca: tls.ca, ALPNProtocols: ['http/1.1'] });
    silent.on('error', () => undefined);
    cleanups.push(() => silent.destroy());
    await new Promise<void>((resolve) => silent.once('secureConnect', () => resolve()));

    const graceMs = parsed.options.requestTimeoutMs;
    const openConnections = server.app.server.listening ? await connectionCount(server.app.server) : 0;
    const started = performance.now();
    await server.shutdown();
    return { tookMs: performance.now() - started, graceMs, openConnections, logs };
  } finally {
    for (const c of cleanups) c();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function connectionCount(server: {
  getConnections(cb: (err: Error | null, n: number) => void): void;
}): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err === null ? n : -1)));
}

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const stops = Number(flag('stops', '200'));
  const grace = flag('grace', '10s');
  const certDir = await mkdtemp(join(tmpdir(), 'capstan-shutdown-pki-'));
  const times: number[] = [];
  let failures = 0;
  try {
    for (let i = 0; i < stops; i++) {
      const r = await stopWithOpenConnections(certDir, grace);
      times.push(r.tookMs);
      const stuck = r.logs.filter((l) => l.includes('still open') || l.includes('did not finish closing'));
      if (r.tookMs > r.graceMs || stuck.length > 0) {
        failures++;
        console.log(`stop ${i + 1}: ${r.tookMs.toFixed(0)} ms (grace ${r.graceMs} ms) ${stuck.join(' | ')}`);
      }
    }
  } finally {
    await rm(certDir, { recursive: true, force: true });
  }
  const t = summarize(times);
  console.log(
    `${stops} stops, grace ${grace}: p50 ${t.p50.toFixed(0)} ms, p99 ${t.p99.toFixed(0)} ms, max ${t.max.toFixed(0)} ms; over the grace period or stuck: ${failures}`,
  );
  if (failures > 0) process.exitCode = 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  void main();
}
