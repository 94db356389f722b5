/**
 * Three Capstan servers in this process over one local etcd, advertising 127.0.0.2, .3 and .4:
 * - the lease endpoint reconciler lists exactly the live servers in `default/kubernetes`
 *   (Endpoints and EndpointSlice): all three; two as soon as one begins a graceful shutdown;
 *   and a server that loses storage without shutting down (its store closed under it, as a
 *   killed server) drops out once its address lease expires (TTL 2 s here, kube's 15 s);
 * - each server keeps the kube-apiserver identity Lease in `kube-system`, and collects expired
 *   identity Leases at start;
 * - a write through one server is seen, in order, by a watch on another and by a consistent
 *   list on a third; a watch resumed on another server from the last resourceVersion seen
 *   misses nothing;
 * - cluster IPs stay unique under concurrent creates on different servers.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityLeaseName } from '../../src/apiserver-loops/apiserver-identity.js';
import { ETCD_BINARY, startEtcd, type LocalEtcd } from '../../tools/etcd-local.js';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

const etcdMissing = !existsSync(ETCD_BINARY);
if (etcdMissing && (process.env['CI'] === 'true' || process.env['CAPSTAN_REQUIRE_ETCD'] === '1'))
  throw new Error(`etcd required: ${ETCD_BINARY} missing`);

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
const NS = 'ha-test';

interface Member {
  readonly address: string;
  readonly server: TestServer;
  readonly tls: AdminTls;
}

async function get(m: Member, path: string): Promise<Record<string, unknown>> {
  const res = await adminJson(`${m.server.url}${path}`, m.tls);
  if (res.status !== 200) throw new Error(`GET ${path} on ${m.address}: ${res.status} ${res.text}`);
  return res.json;
}

async function post(m: Member, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await adminJson(`${m.server.url}${path}`, m.tls, 'POST', body);
  if (res.status !== 201) throw new Error(`POST ${path} on ${m.address}: ${res.status} ${res.text}`);
  return res.json;
}

/** The addresses `default/kubernetes` lists, read through `m`: from the Endpoints and the slice. */
async function listed(m: Member): Promise<{ endpoints: string[]; slice: string[] }> {
  const ep = await get(m, '/api/v1/namespaces/default/endpoints/kubernetes');
  const slice = await get(m, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
  const subsets = (ep['subsets'] ?? []) as { addresses?: { ip: string }[] }[];
  const endpoints = (slice['endpoints'] ?? []) as { addresses: string[] }[];
  return {
    endpoints: subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort(),
    slice: endpoints.flatMap((e) => e.addresses).sort(),
  };
}

async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms}ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface WatchEventLine {
  readonly type: string;
  readonly object: { metadata: { name: string; resourceVersion: string } };
}

/** A raw watch: collects events until `count` arrived, then ends the request. */
function watchFor(m: Member, path: string, count: number, timeoutMs = 20_000): Promise<WatchEventLine[]> {
  return new Promise((resolve, reject) => {
    const events: WatchEventLine[] = [];
    let buffered = '';
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`watch ${path} on ${m.address}: ${events.length} of ${count} events`));
    }, timeoutMs);
    const req = request(`${m.server.url}${path}`, { ...m.tls, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        reject(new Error(`watch ${path} on ${m.address}: status ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line === '') continue;
          events.push(JSON.parse(line) as WatchEventLine);
          if (events.length === count) {
            clearTimeout(timer);
            req.destroy();
            resolve(events);
          }
        }
      });
    });
    req.on('error', (err) => {
      if (events.length < count) {
        clearTimeout(timer);
        reject(err);
      }
    });
    req.end();
  });
}

/** A port free on `host` now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function configMap(name: string): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { name } };
}

describe.skipIf(etcdMissing)('three servers on one etcd', () => {
  let etcd: LocalEtcd;
  const members: Member[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    // As in a real deployment every server listens on one port, each on its own address (the
    // kubernetes endpoints carry one port for all).
    const port = await freePort(ADDRESSES[0]);
    for (const address of ADDRESSES) {
      const server = await startTestServer({
        store: 'etcd',
        etcd,
        args: [
          `--advertise-address=${address}`,
          `--bind-address=${address}`,
          `--secure-port=${port}`,
          ...(address === ADDRESSES[2] ? ['--shutdown-delay-duration=2s'] : []),
        ],
        endpointLease: { ttlSeconds: 2, intervalMs: 500 },
      });
      members.push({ address, server, tls: adminTls(server.kubeconfigPath) });
      // Before the others start: identity Leases for their collectors to judge at start.
      if (members.length === 1) {
        const long = new Date(Date.now() - 2 * 3_600_000).toISOString().replace('Z', '000Z');
        const now = new Date().toISOString().replace('Z', '000Z');
        for (const [name, labelled, renewTime] of [
          ['apiserver-expired', true, long],
          ['apiserver-other', true, now],
          ['not-identity', false, long],
        ] as const) {
          await post(members[0]!, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', {
            metadata: {
              name,
              labels: labelled ? { 'apiserver.kubernetes.io/identity': 'kube-apiserver' } : {},
            },
            spec: { holderIdentity: name, leaseDurationSeconds: 3600, renewTime },
          });
        }
      }
    }
    await post(members[0]!, '/api/v1/namespaces', { metadata: { name: NS } });
  }, 120_000);

  afterAll(async () => {
    for (const m of members) await m.server.close();
    await etcd?.stop();
  }, 120_000);

  it('list every server in the kubernetes endpoints, read through any of them', async () => {
    for (const m of members) {
      const seen = await eventually(
        `endpoints through ${m.address}`,
        () => listed(m),
        (l) => l.endpoints.length === 3 && l.slice.length === 3,
      );
      expect(seen).toEqual({ endpoints: [...ADDRESSES], slice: [...ADDRESSES] });
    }
    // kube's key for the address leases, under --etcd-prefix, on a storage lease.
    for (const address of ADDRESSES) {
      const { kv } = await members[0]!.server.server.rootStore.get(`/registry/masterleases/${address}`);
      expect(kv?.lease).toBeGreaterThan(0n);
    }
    const port = Number(new URL(members[0]!.server.url).port);
    expect(members.map((m) => new URL(m.server.url).hostname)).toEqual([...ADDRESSES]);
    expect(members.map((m) => Number(new URL(m.server.url).port))).toEqual([port, port, port]);
    const ep = await get(members[0]!, '/api/v1/namespaces/default/endpoints/kubernetes');
    expect((ep['subsets'] as { ports: unknown[] }[])[0]?.ports).toEqual([
      { name: 'https', port, protocol: 'TCP' },
    ]);
  });

  it('keep the kube-apiserver identity Lease in kube-system', async () => {
    const selector = encodeURIComponent('apiserver.kubernetes.io/identity=kube-apiserver');
    const list = await get(
      members[1]!,
      `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=${selector}`,
    );
    const items = list['items'] as {
      metadata: { name: string; labels: Record<string, string> };
      spec: Record<string, unknown>;
    }[];
    // Servers on one host share the identity (the name hashes the host name), as in kube; the
    // expired identity Lease was collected, the live one and the unlabelled one stay.
    const own = identityLeaseName(hostname());
    expect(items.map((l) => l.metadata.name).sort()).toEqual(['apiserver-other', own].sort());
    const expired = await adminJson(
      `${members[0]!.server.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/apiserver-expired`,
      members[0]!.tls,
    );
    expect(expired.status).toBe(404);
    await get(members[0]!, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/not-identity');
    const lease = items.find((l) => l.metadata.name === own)!;
    expect(lease.metadata.labels['kubernetes.io/hostname']).toBe(hostname());
    expect(lease.spec['leaseDurationSeconds']).toBe(3600);
    expect(String(lease.spec['holderIdentity'])).toMatch(
      new RegExp(`^${lease.metadata.name}_[0-9a-f-]{36}$`),
    );
    expect(String(lease.spec['renewTime'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  /**
   * The root CA publisher (the in-process controller manager's) adds kube-root-ca.crt to the
   * namespace asynchronously: waiting for it lets a watch see only the test's writes.
   */
  const rootCaPublished = async (server: (typeof members)[number]): Promise<void> => {
    for (let i = 0; ; i++) {
      const list = await get(server, `/api/v1/namespaces/${NS}/configmaps`);
      const names = (list['items'] as { metadata: { name: string } }[]).map((o) => o.metadata.name);
      if (names.includes('kube-root-ca.crt')) return;
      if (i > 200) throw new Error('kube-root-ca.crt never appeared');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('show a write through one server, in order, to a watch on another', async () => {
    const [a, b] = [members[0]!, members[1]!];
    await rootCaPublished(b);
    const base = String(
      ((await get(b, `/api/v1/namespaces/${NS}/configmaps`))['metadata'] as Record<string, unknown>)[
        'resourceVersion'
      ],
    );
    const watching = watchFor(b, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${base}`, 10);
    const written: string[] = [];
    for (let i = 0; i < 10; i++) {
      const obj = await post(a, `/api/v1/namespaces/${NS}/configmaps`, configMap(`order-${i}`));
      written.push(String((obj['metadata'] as Record<string, unknown>)['resourceVersion']));
    }
    const events = await watching;
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual(
      written.map((_, i) => ['ADDED', `order-${i}`]),
    );
    expect(events.map((e) => e.object.metadata.resourceVersion)).toEqual(written);
    // A consistent list (no resourceVersion) on a third server holds every acknowledged write.
    const list = await get(members[2]!, `/api/v1/namespaces/${NS}/configmaps`);
    const names = (list['items'] as { metadata: { name: string } }[]).map((c) => c.metadata.name);
    expect(names).toEqual(expect.arrayContaining(written.map((_, i) => `order-${i}`)));
  });

  it('let a watch resume on another server from its last resourceVersion without a gap', async () => {
    const [a, b, c] = [members[0]!, members[1]!, members[2]!];
    await rootCaPublished(a);
    const base = String(
      ((await get(a, `/api/v1/namespaces/${NS}/configmaps`))['metadata'] as Record<string, unknown>)[
        'resourceVersion'
      ],
    );
    const first = watchFor(a, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${base}`, 3);
    const written: string[] = [];
    for (let i = 0; i < 8; i++) {
      const obj = await post(c, `/api/v1/namespaces/${NS}/configmaps`, configMap(`resume-${i}`));
      written.push(String((obj['metadata'] as Record<string, unknown>)['resourceVersion']));
    }
    const seen = await first;
    const last = seen[seen.length - 1]!.object.metadata.resourceVersion;
    const rest = await watchFor(b, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${last}`, 5);
    expect(rest.every((e) => e.type === 'ADDED')).toBe(true);
    expect([...seen, ...rest].map((e) => e.object.metadata.resourceVersion)).toEqual(written);
  });

  it('allocate unique cluster IPs under concurrent creates on different servers', async () => {
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(members[i % 3]!, `/api/v1/namespaces/${NS}/services`, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: `svc-${i}` },
          spec: { ports: [{ port: 80 }] },
        }),
      ),
    );
    const ips = created.map((s) => String((s['spec'] as Record<string, unknown>)['clusterIP']));
    expect(ips.every((ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip))).toBe(true);
    expect(new Set(ips).size).toBe(20);
    const list = await get(members[2]!, `/api/v1/namespaces/${NS}/services`);
    const stored = (list['items'] as { spec: { clusterIP: string } }[]).map((s) => s.spec.clusterIP).sort();
    expect(stored).toEqual([...ips].sort());
  });

  it('drop a server as soon as it begins a graceful shutdown', async () => {
    // The third server waits 2 s (--shutdown-delay-duration) before it closes its listener; it
    // leaves the endpoints at once, without waiting for its lease to expire.
    let closed = false;
    const closing = members[2]!.server.close().then(() => {
      closed = true;
    });
    const seen = await eventually(
      'endpoints during the shutdown',
      () => listed(members[0]!),
      (l) => l.endpoints.length === 2 && l.slice.length === 2,
    );
    expect(closed).toBe(false);
    expect(seen).toEqual({ endpoints: [ADDRESSES[0], ADDRESSES[1]], slice: [ADDRESSES[0], ADDRESSES[1]] });
    await closing;
    expect(await listed(members[0]!)).toEqual(seen);
  });

  it('drop a server that dies without shutting down once its lease expires', async () => {
    // Cut the server from storage under it: its loops can no longer renew anything.
    await members[1]!.server.server.rootStore.close();
    expect((await listed(members[0]!)).endpoints).toEqual([ADDRESSES[0], ADDRESSES[1]]);
    const seen = await eventually(
      'endpoints after the lease expired',
      () => listed(members[0]!),
      (l) => l.endpoints.length === 1 && l.slice.length === 1,
    );
    expect(seen).toEqual({ endpoints: [ADDRESSES[0]], slice: [ADDRESSES[0]] });
  });
});
