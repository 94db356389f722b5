/**
 * A Service create whose store write fails with "unavailable" keeps its cluster IP allocated:
 * etcd may have committed the write though its answer was lost (the fault test's long run found
 * two Services sharing an IP after such writes, when the create gave the IP back), so the
 * IPAddress must stay until the start-time repair finds whether a Service holds it. On a store
 * several servers share, that repair frees an unheld IPAddress or node port only once it is old
 * enough, and reads them before the Services.
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../storage/errors.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Store } from '../../storage/interface.js';
import { parseCidr } from '../../src/api/cidr.js';
import { ClusterIPAllocator } from '../../src/ipam/cluster-ips.js';
import { NodePortAllocator, parsePortRange } from '../../src/ipam/node-ports.js';
import { ServiceAllocations } from '../../src/ipam/service-allocation.js';
import { repairServiceAllocations, SHARED_ORPHAN_GRACE_MS } from '../../src/ipam/repair.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { createResourceContext } from '../../src/resource/context.js';
import { createObject } from '../../src/resource/create.js';

/**
 * `inner`, except that a Service create is answered "unavailable": after it was written
 * (`written`), or without writing it; `shared` sets the store's capability (etcd's is true).
 */
function answerLost(inner: Store, written = true, shared = false): Store {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'capabilities') return { ...target.capabilities, shared };
      const member = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'create')
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
      return async (key: string, value: Uint8Array, options?: Parameters<Store['create']>[2]) => {
        const unavailable = new UnavailableError('etcd create: etcd is unavailable');
        if (key.startsWith('/services/specs/') && !written) throw unavailable;
        const result = await target.create(key, value, options);
        if (key.startsWith('/services/specs/')) throw unavailable;
        return result;
      };
    },
  });
}

/** A context over `store` with Service allocation, clock `now`, and the default namespace made. */
async function setup(store: Store, now = (): Date => new Date()) {
  const registry = loadRegistry();
  const ips = new ClusterIPAllocator(registry, [parseCidr('10.0.0.0/24')]);
  const ports = new NodePortAllocator(parsePortRange('30000-32767'));
  const ctx = createResourceContext({
    registry,
    store,
    eventTtlSeconds: 3600,
    minRequestTimeoutSeconds: 1800,
    writeHooks: new ServiceAllocations(ips, ports),
    now,
  });
  if ((await store.get('/namespaces/default')).kv === undefined)
    await createObject(ctx, registry.byResource('', 'v1', 'namespaces')!, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
    });
  const service = (name: string, type = 'ClusterIP'): Promise<unknown> =>
    createObject(ctx, registry.byResource('', 'v1', 'services')!, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { type, ports: [{ port: 80 }] },
    });
  return { ctx, ips, ports, service };
}

describe('a Service create answered "unavailable"', () => {
  it('keeps the IPAddress of the cluster IP the stored Service holds', async () => {
    const store = answerLost(await openMemoryStore());
    const { ctx, ips, service } = await setup(store);
    await expect(service('a')).rejects.toBeInstanceOf(UnavailableError);

    // The Service was stored (etcd committed it), with its IP; the IP is still allocated.
    const stored = await ctx.store.range({ prefix: '/' });
    const svcKv = stored.items.find((kv) => kv.key === '/services/specs/default/a');
    expect(svcKv).toBeDefined();
    const ip = (JSON.parse(Buffer.from(svcKv!.value).toString('utf8')) as { spec: { clusterIP: string } })
      .spec.clusterIP;
    expect(ip).toMatch(/^10\.0\.0\.\d+$/);
    expect((await ips.list(ctx)).map((a) => a.ip)).toEqual([ip]);
    await store.close();
  });
});

describe('the start-time repair on a shared store', () => {
  it('frees an IPAddress no Service holds only once it is old enough (another server may be writing its Service)', async () => {
    const inner = await openMemoryStore();
    const store = answerLost(inner, false, true);
    const { ctx, ips, ports, service } = await setup(store);
    await expect(service('a')).rejects.toBeInstanceOf(UnavailableError);
    const orphans = (await ips.list(ctx)).map((a) => a.ip);
    expect(orphans).toHaveLength(1);

    // A server starting now: the IP may be another server's create in flight; it stays.
    await repairServiceAllocations(ctx, ips, ports);
    expect((await ips.list(ctx)).map((a) => a.ip)).toEqual(orphans);

    // The same repair once the grace has passed frees it.
    const later = await setup(store, () => new Date(Date.now() + SHARED_ORPHAN_GRACE_MS + 1_000));
    await repairServiceAllocations(later.ctx, later.ips, later.ports);
    expect(await ips.list(ctx)).toEqual([]);
    await store.close();
  });
});

describe('the start-time repair of node ports on a shared store', () => {
  it('frees a node port no Service holds only once it is old enough', async () => {
    const inner = await openMemoryStore();
    const store = answerLost(inner, false, true);
    const { ctx, ports, service } = await setup(store);
    await expect(service('np', 'NodePort')).rejects.toBeInstanceOf(UnavailableError);
    const orphans = (await ports.list(ctx)).map((p) => p.port);
    expect(orphans).toHaveLength(1);

    // A server starting now: the port may be another server's create in flight; it stays.
    await repairServiceAllocations(ctx, (await setup(store)).ips, ports);
    expect((await ports.list(ctx)).map((p) => p.port)).toEqual(orphans);

    // Once the grace has passed, the same repair frees it.
    const later = await setup(store, () => new Date(Date.now() + SHARED_ORPHAN_GRACE_MS + 1_000));
    await repairServiceAllocations(later.ctx, later.ips, later.ports);
    expect(await ports.list(ctx)).toEqual([]);
    await store.close();
  });

  it('reads the ports before the Services: a port taken and held meanwhile stays', async () => {
    const inner = await openMemoryStore();
    // Another server creates a NodePort Service (taking its port, then writing it) right after
    // the repair has read the Services. Read after the Services, that port would look unheld.
    const other = await setup(inner);
    let created = false;
    const racing = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'capabilities') return { ...target.capabilities, shared: true };
        const member = Reflect.get(target, prop, target) as unknown;
        if (prop !== 'range')
          return typeof member === 'function'
            ? (member as (...a: unknown[]) => unknown).bind(target)
            : member;
        return async (...args: Parameters<Store['range']>) => {
          const result = await target.range(...args);
          const span = args[0];
          if (!created && 'prefix' in span && span.prefix === '/services/specs/') {
            created = true;
            await other.service('late', 'NodePort');
          }
          return result;
        };
      },
    });
    // The repairing server's clock is past the grace, so only the order of the reads keeps the
    // port (the grace covers a port taken before the reads whose Service comes after them).
    const repairing = await setup(racing, () => new Date(Date.now() + SHARED_ORPHAN_GRACE_MS + 1_000));
    await repairServiceAllocations(repairing.ctx, repairing.ips, repairing.ports);
    expect(created).toBe(true);
    const stored = await inner.get('/services/specs/default/late');
    const nodePort = (
      JSON.parse(Buffer.from(stored.kv!.value).toString('utf8')) as {
        spec: { ports: { nodePort: number }[] };
      }
    ).spec.ports[0]!.nodePort;
    expect((await repairing.ports.list(repairing.ctx)).map((p) => p.port)).toEqual([nodePort]);
    await inner.close();
  });
});
