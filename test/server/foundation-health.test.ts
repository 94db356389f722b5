/**
 * Health endpoints: kube-apiserver's output format for passing, excluded and failing checks
 * (through `inject` with controlled checks), and the server's own checks, including readiness
 * failing first during graceful shutdown (over real TLS).
 */
import fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installHealthRoutes, type HealthCheck } from '../../src/http/health.js';
import { POST_START_HOOKS } from '../../src/server/lifecycle.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

function check(name: string, failure?: string): HealthCheck {
  return {
    name,
    check: () => {
      if (failure !== undefined) throw new Error(failure);
    },
  };
}

async function appWith(checks: HealthCheck[]): Promise<{ app: FastifyInstance; failures: string[] }> {
  const failures: string[] = [];
  const app = fastify();
  installHealthRoutes(app, { healthz: checks, livez: checks, readyz: checks }, (endpoint, fs) =>
    failures.push(...fs.map((f) => `${endpoint}:${f.name}:${f.reason}`)),
  );
  await app.ready();
  return { app, failures };
}

describe('health output format', () => {
  it('answers ok, or the verbose listing', async () => {
    const { app } = await appWith([check('ping'), check('etcd')]);
    const plain = await app.inject('/livez');
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toBe('ok');
    expect(plain.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(plain.headers['x-content-type-options']).toBe('nosniff');
    const verbose = await app.inject('/readyz?verbose');
    expect(verbose.body).toBe('[+]ping ok\n[+]etcd ok\nreadyz check passed\n');
  });

  it('excludes checks, and warns about names it does not know', async () => {
    const { app } = await appWith([check('ping'), check('etcd', 'down')]);
    const res = await app.inject('/healthz?verbose&exclude=etcd&exclude=nope');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(
      '[+]ping ok\n[+]etcd excluded: ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n',
    );
  });

  it('fails verbosely with reasons withheld, and logs the reasons', async () => {
    const { app, failures } = await appWith([check('ping'), check('etcd', 'connection refused')]);
    const res = await app.inject('/readyz');
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n');
    expect(failures).toEqual(['readyz:etcd:connection refused']);
  });

  it('serves each check on its own path', async () => {
    const { app } = await appWith([check('ping'), check('etcd', 'connection refused')]);
    expect((await app.inject('/livez/ping')).body).toBe('ok');
    const failed = await app.inject('/livez/etcd');
    expect(failed.statusCode).toBe(500);
    expect(failed.body).toBe('internal server error: connection refused\n');
  });
});

describe('server health checks', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('lists the checks kube-apiserver lists, with shutdown in readyz only', async () => {
    // With RBAC: kube-apiserver runs the rbac/bootstrap-roles hook only with the RBAC authorizer.
    server = await startTestServer({ args: ['--authorization-mode=RBAC'] });
    const tls = adminTls(server.kubeconfigPath);
    for (let i = 0; i < 200 && (await adminFetch(`${server.url}/readyz`, tls)).status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const names = (body: string): string[] =>
      body
        .split('\n')
        .filter((l) => l.startsWith('[+]'))
        .map((l) => l.slice(3, l.lastIndexOf(' ok')));
    const hooks = POST_START_HOOKS.map((h) => `poststarthook/${h}`);
    const livez = await adminFetch(`${server.url}/livez?verbose`, tls);
    expect(livez.status).toBe(200);
    expect(names(livez.body)).toEqual(['ping', 'log', 'etcd', ...hooks, 'autoregister-completion']);
    const readyz = await adminFetch(`${server.url}/readyz?verbose`, tls);
    expect(names(readyz.body)).toEqual([
      'ping',
      'log',
      'etcd',
      ...hooks,
      'autoregister-completion',
      'shutdown',
    ]);
    expect((await adminFetch(`${server.url}/healthz`, tls)).body).toBe('ok');
    expect((await adminFetch(`${server.url}/readyz/poststarthook/rbac/bootstrap-roles`, tls)).body).toBe(
      'ok',
    );
    expect((await adminFetch(`${server.url}/livez/etcd`, tls)).body).toBe('ok');
  });

  it('fails readyz first during a graceful shutdown, while livez stays ok', async () => {
    server = await startTestServer({ args: ['--shutdown-delay-duration=2s'] });
    const tls = adminTls(server.kubeconfigPath);
    const stopping = server.server.shutdown();
    const readyz = await adminFetch(`${server.url}/readyz`, tls);
    expect(readyz.status).toBe(500);
    expect(readyz.body).toContain('[-]shutdown failed: reason withheld\n');
    expect(readyz.body.endsWith('readyz check failed\n')).toBe(true);
    expect((await adminFetch(`${server.url}/livez`, tls)).status).toBe(200);
    expect((await adminFetch(`${server.url}/readyz/shutdown`, tls)).body).toBe(
      'internal server error: process is shutting down\n',
    );
    await stopping;
    await expect(adminFetch(`${server.url}/livez`, tls)).rejects.toThrow();
  });

  it('fails the etcd check when the store is unhealthy', async () => {
    server = await startTestServer();
    const tls = adminTls(server.kubeconfigPath);
    const store = server.server.rootStore;
    const original = store.checkHealth.bind(store);
    store.checkHealth = () => Promise.reject(new Error('disk on fire'));
    try {
      const res = await adminFetch(`${server.url}/readyz?verbose`, tls);
      expect(res.status).toBe(500);
      expect(res.body).toContain('[-]etcd failed: reason withheld\n');
      expect(res.body).not.toContain('disk on fire');
      expect(server.logs.join('\n')).toContain('readyz check etcd failed: disk on fire');
    } finally {
      store.checkHealth = original;
    }
  });
});
