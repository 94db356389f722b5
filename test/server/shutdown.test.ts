/**
 * Graceful shutdown never waits for a connection that has no request in flight: idle
 * keep-alive connections (HTTP/1.1 and HTTP/2), connections that never finished (or never
 * started) their TLS handshake, and HTTP/1.1 connections that carried a watch, whose reply is
 * hijacked and so never reaches fastify's onResponse. Each used to hold `close()` until the
 * grace period (`--request-timeout`, 60 s by default) ran out.
 */
import { connect as h2connect } from 'node:http2';
import { Agent, request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { adminTls, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Opens an HTTP/1.1 keep-alive request on `agent`; resolves once the response head arrived. */
function http1(url: string, agent: Agent, tls: ReturnType<typeof adminTls>): Promise<void> {
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

describe('graceful shutdown', () => {
  it('does not wait for idle, half-open or watch-carrying connections', async () => {
    // A long grace period: a stop that waited for any of these connections would take 30 s.
    // The in-process controllers run too: stopped during their first list, their informers once
    // held the stop for 5 s (see test/client/informer.test.ts).
    server = await startTestServer({ args: ['--request-timeout=30s'] });
    const tls = adminTls(server.kubeconfigPath);
    const { port } = new URL(server.url);
    const sockets: Socket[] = [];

    // 1. HTTP/1.1 keep-alive: one connection with a finished request, one carrying a watch.
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    await http1(`${server.url}/api/v1/namespaces`, idleAgent, tls);
    const watchAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    await http1(`${server.url}/api/v1/namespaces/default/configmaps?watch=1`, watchAgent, tls);
    // 2. An idle HTTP/2 session after one request.
    const session = h2connect(server.url, tls);
    session.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      const s = session.request({ ':path': '/version' });
      s.on('data', () => undefined);
      s.on('end', resolve);
    });
    // 3. A TCP connection that never starts TLS, and a TLS connection that never sends a request.
    const raw = netConnect(Number(port), '127.0.0.1');
    raw.on('error', () => undefined);
    sockets.push(raw);
    const silent = tlsConnect({
      port: Number(port),
      host: '127.0.0.1',
      ca: tls.ca,
      ALPNProtocols: ['http/1.1'],
    });
    silent.on('error', () => undefined);
    sockets.push(silent);
    await new Promise<void>((resolve) => silent.once('secureConnect', () => resolve()));

    const started = Date.now();
    await server.close();
    const took = Date.now() - started;
    idleAgent.destroy();
    watchAgent.destroy();
    session.destroy();
    for (const s of sockets) s.destroy();
    expect(server.logs.join('\n')).not.toContain('still open');
    expect(took).toBeLessThan(5_000);
  });
});
