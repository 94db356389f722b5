/**
 * `--goaway-chance` and `--max-connection-bytes-per-sec` on a real server: HTTP/2 clients see
 * GOAWAY on about the given share of their requests (never none over hundreds), and a watch of a
 * throttled connection delivers its events no faster than the budget, while a plain list is not
 * throttled. Plus kube's bound on the chance and the budget's arithmetic.
 */
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlagError } from '../../src/flags/flags.js';
import { ByteBudget } from '../../src/server/connection-limits.js';
import { parseServerArgs } from '../../src/server/options.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

const RATE = 4000;
let server: TestServer;
let tls: ReturnType<typeof adminTls>;

beforeAll(async () => {
  server = await startTestServer({
    args: ['--goaway-chance=0.02', `--max-connection-bytes-per-sec=${RATE}`],
  });
  tls = adminTls(server.kubeconfigPath);
  for (let i = 0; i < 12; i++) {
    const res = await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: `cm-${i}` }, data: { blob: 'x'.repeat(1000) } }),
    });
    expect(res.status).toBe(201);
  }
});
afterAll(() => server?.close());

describe('flags', () => {
  it("refuses a goaway chance outside [0, 0.02] with kube-apiserver's message", () => {
    expect(() => parseServerArgs(['--goaway-chance=0.03'])).toThrow(FlagError);
    expect(() => parseServerArgs(['--goaway-chance=-0.01'])).toThrow(
      '--goaway-chance can not be less than 0 or greater than 0.02',
    );
    expect(() => parseServerArgs(['--goaway-chance=0.02'])).not.toThrow();
  });

  it('ByteBudget allows one second of burst, then paces at the rate', () => {
    let now = 0;
    const b = new ByteBudget(1000, () => now);
    expect(b.take(600)).toBe(0);
    expect(b.take(400)).toBe(0);
    expect(b.take(500)).toBe(500);
    now += 1000;
    expect(b.take(0)).toBe(0);
    expect(b.take(600)).toBe(100);
  });
});

describe('--goaway-chance=0.02', () => {
  it('sends GOAWAY on some HTTP/2 requests, and each client reconnects', async () => {
    let goaways = 0;
    let session: ClientHttp2Session | undefined;
    const open = (): ClientHttp2Session => {
      const s = h2connect(server.url, tls);
      s.on('error', () => undefined);
      s.on('goaway', () => goaways++);
      return s;
    };
    for (let i = 0; i < 500; i++) {
      if (session === undefined || session.closed || session.destroyed) session = open();
      const s = session;
      const status = await new Promise<number>((resolve, reject) => {
        const stream = s.request({ ':path': '/version' });
        let code = 0;
        stream.on('response', (h) => (code = Number(h[':status'])));
        stream.on('data', () => undefined);
        stream.on('end', () => resolve(code));
        stream.on('error', (err: Error & { code?: string }) =>
          // Sent before the GOAWAY arrived: refused, safe to retry (client-go does).
          err.code === 'ERR_HTTP2_STREAM_ERROR' && err.message.includes('REFUSED_STREAM')
            ? resolve(0)
            : reject(err),
        );
      });
      if (status === 0) {
        i--;
        s.destroy();
        continue;
      }
      expect(status).toBe(200);
    }
    session?.destroy();
    // 10 expected; none in 500 has a probability of 4e-5.
    expect(goaways).toBeGreaterThan(0);
    expect(goaways).toBeLessThan(40);
  });
});

describe(`--max-connection-bytes-per-sec=${RATE}`, () => {
  it('paces a watch to the budget; a list is not throttled', async () => {
    const started = performance.now();
    const list = await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, tls, {
      http2: false,
    });
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThan(12_000);
    expect(performance.now() - started).toBeLessThan(1_000);

    const watchStarted = performance.now();
    const bytes = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${server.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0`,
        { ...tls, agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
            if (text.split('\n').filter((l) => l.includes('"ADDED"')).length >= 12) {
              req.destroy();
              resolve(Buffer.byteLength(text));
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    const took = performance.now() - watchStarted;
    // One second of burst, then RATE bytes per second.
    expect(bytes).toBeGreaterThan(12_000);
    expect(took).toBeGreaterThan(((bytes - RATE) / RATE) * 1000 * 0.8);
  }, 30_000);
});
