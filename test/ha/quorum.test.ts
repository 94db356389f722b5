/**
 * Quorum loss (issue 34, item 6): three Capstan servers on a three-member etcd, each a host in its
 * own network namespace. With two members killed, a write through any server gets a 5xx Status
 * within `--request-timeout` (5 s here) rather than hanging, and `/readyz` fails naming its etcd
 * check; when the members come back, writes through every server succeed again without any
 * server being restarted, and `/readyz` passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { haHostsUnavailable } from '../support/ha-hosts.js';
import { ETCD_BINARY, FaultCluster, until } from './fault-cluster.js';

const why = haHostsUnavailable() ?? (existsSync(ETCD_BINARY) ? undefined : `${ETCD_BINARY} missing`);
if (why !== undefined && (process.env['CI'] === 'true' || process.env['CAPSTAN_REQUIRE_ETCD'] === '1'))
  throw new Error(`the quorum test cannot run: ${why}`);

const TIMEOUT_MS = 5_000;
const NS = 'ha-quorum';

describe.skipIf(why !== undefined)('three servers when etcd loses quorum', () => {
  let c: FaultCluster;

  beforeAll(async () => {
    c = await FaultCluster.start([`--request-timeout=${TIMEOUT_MS / 1000}s`, '--controllers=']);
    const a = await c.servers[0]!.call('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    expect(a.status, JSON.stringify(a.json)).toBe(201);
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
  }, 120_000);

  const cm = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

  it('answers writes with a 5xx in time and fails /readyz on etcd, then recovers without a restart', async () => {
    for (const [i, s] of c.servers.entries()) {
      const a = await s.call('POST', `/api/v1/namespaces/${NS}/configmaps`, cm(`before-${i}`));
      expect(a.status).toBe(201);
    }
    // Two of three members gone: no quorum.
    await Promise.all(c.etcd.slice(1).map((e) => e.proc.kill('SIGKILL')));

    for (const [i, s] of c.servers.entries()) {
      const a = await s.call('POST', `/api/v1/namespaces/${NS}/configmaps`, cm(`during-${i}`), 60_000);
      expect(a.failure, `${s.host.name}: ${a.error ?? ''}`).toBeUndefined();
      expect(a.status, `${s.host.name}: ${JSON.stringify(a.json)}`).toBeGreaterThanOrEqual(500);
      expect(a.json['kind']).toBe('Status');
      // Within --request-timeout, with slack for a loaded machine.
      expect(a.ms, s.host.name).toBeLessThan(TIMEOUT_MS + 3_000);
      const read = await s.call('GET', `/api/v1/namespaces/${NS}/configmaps/before-0`, undefined, 60_000);
      expect(read.failure).toBeUndefined();
      expect(read.ms).toBeLessThan(TIMEOUT_MS + 3_000);
    }
    for (const s of c.servers) {
      await until(`${s.host.name} /readyz fails`, async () => {
        const r = await s.call('GET', '/readyz?verbose', undefined, 30_000);
        return r.status === 500;
      });
      const r = await s.call('GET', '/readyz?verbose', undefined, 30_000);
      expect(String(r.json['text'])).toMatch(/\[-\]etcd failed/);
      const etcd = await s.call('GET', '/readyz/etcd', undefined, 30_000);
      expect(etcd.status).toBe(500);
    }

    await Promise.all(c.etcd.slice(1).map((e) => (e.proc.start(), e.waitHealthy())));
    for (const [i, s] of c.servers.entries()) {
      await until(
        `a write through ${s.host.name} after quorum returned`,
        async () => {
          const a = await s.call('POST', `/api/v1/namespaces/${NS}/configmaps`, cm(`after-${i}`));
          return a.status === 201 || a.status === 409;
        },
        60_000,
      );
      await until(`${s.host.name} /readyz passes`, async () => {
        const r = await s.call('GET', '/readyz', undefined, 10_000);
        return r.status === 200;
      });
      // The same process all along.
      expect(s.proc.starts).toBe(1);
      expect(s.proc.running).toBe(true);
    }
  }, 300_000);
});
