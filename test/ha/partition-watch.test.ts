/**
 * A watch on an etcd member cut off from its peers: one Capstan server on a three-member etcd,
 * each a host in its own network namespace. Each member in turn is partitioned from the other two;
 * a write acknowledged through the quorum must still reach a client watch on the server while the
 * partition lasts, whichever member the server's etcd watch was on.
 * kube's etcd client asks etcd to end a watch when its member has no leader (gRPC metadata
 * `hasleader: true`, clientv3.WithRequireLeader); without that the member keeps the stream open
 * and silent, and the server's watch cache stalls until the partition heals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import { haHostsUnavailable } from '../support/ha-hosts.js';
import { ETCD_BINARY, FaultCluster, type ServerHost } from './fault-cluster.js';

const why = haHostsUnavailable() ?? (existsSync(ETCD_BINARY) ? undefined : `${ETCD_BINARY} missing`);
if (why !== undefined && (process.env['CI'] === 'true' || process.env['CAPSTAN_REQUIRE_ETCD'] === '1'))
  throw new Error(`the partition test cannot run: ${why}`);

const NS = 'ha-partition';

describe.skipIf(why !== undefined)('a server whose etcd watch member is partitioned', () => {
  let c: FaultCluster;

  beforeAll(async () => {
    c = await FaultCluster.start(['--controllers='], 1);
    const a = await c.servers[0]!.call('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    expect(a.status, JSON.stringify(a.json)).toBe(201);
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
  }, 120_000);

  it('still delivers writes to its watches while the partition lasts', async () => {
    const s = c.servers[0]!;
    // The server's watch streams (one per watched resource) are spread over the members: cut off
    // each member in turn, so one of the rounds cuts off the stream that carries ConfigMaps.
    for (const [round, cut] of c.etcd.entries()) {
      const list = await s.call('GET', `/api/v1/namespaces/${NS}/configmaps`);
      const from = (list.json['metadata'] as { resourceVersion: string }).resourceVersion;
      c.net.partition(
        cut.host,
        c.etcd.filter((e) => e !== cut).map((e) => e.host),
      );
      try {
        // Acknowledged through the quorum (a call to the cut-off member fails; try again).
        let name = '';
        for (let i = 0; name === ''; i++) {
          const a = await s.call('POST', `/api/v1/namespaces/${NS}/configmaps`, {
            metadata: { name: `cm-${round}-${i}` },
          });
          if (a.status === 201) name = `cm-${round}-${i}`;
          else if (i > 20) throw new Error(`no write acknowledged: ${JSON.stringify(a.json)}`);
        }
        const seen = await firstEvent(
          s,
          `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${from}`,
        );
        expect(seen, `${cut.host.name} cut off`).toContain(`"name":"${name}"`);
      } finally {
        c.net.heal(cut.host);
      }
      await cut.waitHealthy();
    }
  }, 300_000);
});

/** The first line of a watch, or why none came within 40 s. */
function firstEvent(s: ServerHost, path: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const req = request(`${s.url}${path}`, { ...s.tls, agent: false }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\n')) {
          clearTimeout(timer);
          req.destroy();
          resolve(text.slice(0, text.indexOf('\n')));
        }
      });
    });
    req.on('error', () => resolve('error'));
    // Well beyond etcd's no-leader detection (three election timeouts, 3 s) and the re-open.
    const timer = setTimeout(() => {
      req.destroy();
      resolve('nothing within 40 s');
    }, 40_000);
    req.end();
  });
}
