/**
 * `--request-timeout` and `?timeout=` (kube's request-deadline and timeout filters), and
 * `--shutdown-send-retry-after`, through raw HTTPS against real servers; `--livez-grace-period`
 * on the server's health checks with a clock the test controls.
 *
 * The slow request is a real one: a LIST at a resourceVersion the store has not reached, which
 * the server holds for 3 s (waiting for its watch cache) before answering 504 `Too large
 * resource version`. A deadline shorter than that must answer first with 504 `Timeout`.
 */
import { connect as h2connect } from 'node:http2';
import fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { installHealthRoutes } from '../../src/http/health.js';
import { serverHealthChecks } from '../../src/server/health-checks.js';
import { ServerLifecycle } from '../../src/server/lifecycle.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

const FAR_FUTURE =
  '/api/v1/namespaces/default/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan';
const TIMEOUT_MESSAGE =
  'Timeout: request did not complete within requested timeout - context deadline exceeded';

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await work();
  return [result, performance.now() - start];
}

// The tests of this server run concurrently: each waits seconds on its own slow request.
describe('request deadline', () => {
  let server: TestServer;
  let tls: ReturnType<typeof adminTls>;
  beforeAll(async () => {
    server = await startTestServer({ args: ['--request-timeout=2s'] });
    tls = adminTls(server.kubeconfigPath);
  });
  afterAll(async () => {
    await server.close();
  });

  it.concurrent(
    '--request-timeout=2s cuts the slow request at ~2 s (?timeout=0s means the server deadline)',
    async ({ expect }) => {
      const [res, ms] = await timed(() => adminFetch(`${server.url}${FAR_FUTURE}&timeout=0s`, tls));
      expect(res.status).toBe(504);
      expect(JSON.parse(res.body)).toMatchObject({ reason: 'Timeout', message: TIMEOUT_MESSAGE });
      expect(ms).toBeGreaterThan(1_800);
      expect(ms).toBeLessThan(2_900);
    },
  );

  it.concurrent(
    '?timeout=1s cuts the request at ~1 s with kube Status, and the late answer is dropped quietly',
    async ({ expect }) => {
      const logsBefore = server.logs.length;
      const [res, ms] = await timed(() => adminFetch(`${server.url}${FAR_FUTURE}&timeout=1s`, tls));
      expect(res.status).toBe(504);
      expect(JSON.parse(res.body)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: TIMEOUT_MESSAGE,
        reason: 'Timeout',
        details: {},
        code: 504,
      });
      expect(ms).toBeGreaterThan(900);
      expect(ms).toBeLessThan(1_900);
      // The handler fails at 3 s into nothing: not a line logged for it, and the server lives.
      await new Promise((resolve) => setTimeout(resolve, 2_300));
      expect(server.logs.slice(logsBefore)).toEqual([]);
      const after = await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, tls, {
        http2: false,
      });
      expect(after.status).toBe(200);
    },
  );

  it.concurrent('a fast request with a deadline is answered normally', async ({ expect }) => {
    const res = await adminFetch(`${server.url}/api/v1/namespaces?timeout=30s`, tls);
    expect(res.status).toBe(200);
  });

  it.concurrent('a malformed ?timeout= is 400 with kube message', async ({ expect }) => {
    for (const http2 of [true, false]) {
      const res = await adminFetch(`${server.url}/api/v1/namespaces?timeout=soon`, tls, { http2 });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        code: 400,
        message: 'invalid timeout specified in the request URL - time: invalid duration "soon"',
      });
    }
  });

  it.concurrent('watches outlive --request-timeout', async ({ expect }) => {
    const controller = new AbortController();
    const { request } = await import('node:https');
    const events: string[] = [];
    const opened = new Promise<void>((resolve, reject) => {
      const req = request(
        `${server.url}/api/v1/namespaces/default/configmaps?watch=1`,
        { ...tls, agent: false, signal: controller.signal },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.setEncoding('utf8');
          res.on('data', (c: string) => events.push(c));
          res.on('error', () => undefined);
          resolve();
        },
      );
      req.on('error', (err) => {
        if (!controller.signal.aborted) reject(err);
      });
      req.end();
    });
    await opened;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const created = await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-deadline' } }),
    });
    expect(created.status).toBe(201);
    await expect.poll(() => events.join(''), { timeout: 2_000 }).toContain('"after-deadline"');
    expect(events.join('')).not.toContain(TIMEOUT_MESSAGE);
    controller.abort();
  });
});

describe('--shutdown-send-retry-after', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ args: ['--shutdown-send-retry-after=true'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers requests arriving during shutdown 429 with Retry-After while in-flight ones finish', async () => {
    const tls = adminTls(server.kubeconfigPath);
    // In flight across the shutdown: answered by its handler (504 Too large resource version).
    const slow = adminFetch(`${server.url}${FAR_FUTURE}`, tls, { http2: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopping = server.server.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 200));

    for (const http2 of [false, true]) {
      const refused = await adminFetch(`${server.url}/api/v1/namespaces`, tls, { http2 });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('5');
      if (!http2) expect(refused.headers['connection']).toBe('close');
      expect(refused.body).toBe('The apiserver is shutting down, please try again later.\n');
    }
    // Health probes and metrics are exempt: readyz answers, and fails for the shutdown.
    const ready = await adminFetch(`${server.url}/readyz?verbose`, tls, { http2: false });
    expect(ready.status).toBe(500);
    expect(ready.body).toContain('[-]shutdown failed');
    expect((await adminFetch(`${server.url}/metrics`, tls)).status).toBe(200);

    const [done, ms] = await timed(() => slow);
    // Control for the deadline tests: without one, this request really takes ~3 s.
    expect(ms).toBeGreaterThan(2_000);
    expect(done.status).toBe(504);
    expect(done.body).toContain('Too large resource version');
    await stopping;
  });
});

describe('--shutdown-watch-termination-grace-period', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ args: ['--shutdown-watch-termination-grace-period=1s'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('ends 300 watches cleanly, paced over the grace period instead of all at once', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const session = h2connect(server.url, tls);
    session.on('error', () => undefined);
    const count = 300;
    const ends: number[] = [];
    let errors = 0;
    const open: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const stream = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1' });
      stream.on('data', () => undefined);
      stream.on('end', () => ends.push(performance.now()));
      stream.on('error', () => errors++);
      open.push(
        new Promise((resolve, reject) =>
          stream.on('response', (h) =>
            h[':status'] === 200 ? resolve() : reject(new Error(String(h[':status']))),
          ),
        ),
      );
    }
    await Promise.all(open);
    await server.server.shutdown();
    await expect.poll(() => ends.length, { timeout: 2_000 }).toBe(count);
    expect(errors).toBe(0);
    // 300 watches over 1 s: max(300/s, kube's floor of 200/s) = 300/s, so ~1 s from first to last.
    const spread = Math.max(...ends) - Math.min(...ends);
    expect(spread).toBeGreaterThan(700);
    expect(spread).toBeLessThan(1_600);
    session.close();
  });
});

describe('--livez-grace-period', () => {
  it('/livez passes unfinished post-start hooks within the grace period, /readyz does not', async () => {
    const store = await openMemoryStore();
    const lifecycle = new ServerLifecycle(['slow-hook']);
    let clock = lifecycle.startedAtMs;
    const endpoints = (livezGraceMs: number) =>
      serverHealthChecks({
        store,
        lifecycle,
        storeHealthTimeoutMs: 1_000,
        storeReadyTimeoutMs: 1_000,
        livezGraceMs,
        now: () => clock,
      });
    const graced = fastify();
    installHealthRoutes(graced, endpoints(10_000), () => undefined);
    const strict = fastify();
    installHealthRoutes(strict, endpoints(0), () => undefined);
    try {
      clock += 5_000;
      expect((await graced.inject('/livez')).statusCode).toBe(200);
      expect((await graced.inject('/readyz')).statusCode).toBe(500);
      const noGrace = await strict.inject('/livez');
      expect(noGrace.statusCode).toBe(500);
      expect(noGrace.body).toContain('[-]poststarthook/slow-hook failed');

      clock += 6_000; // past the grace period, the hook still unfinished
      const late = await graced.inject('/livez');
      expect(late.statusCode).toBe(500);
      expect(late.body).toContain('[-]poststarthook/slow-hook failed');

      lifecycle.completeHook('slow-hook');
      lifecycle.markStarted();
      expect((await graced.inject('/livez')).statusCode).toBe(200);
    } finally {
      await graced.close();
      await strict.close();
      await store.close();
    }
  });
});
