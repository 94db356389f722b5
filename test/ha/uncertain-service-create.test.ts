/**
 * A Service create whose store write fails with "unavailable" keeps its cluster IP allocated:
 * etcd may have committed the write though its answer was lost (the fault test's long run found
 * two Services sharing an IP after such writes, when the create gave the IP back), so the
 * IPAddress must stay until the start-time repair finds whether a Service holds it.
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../storage/errors.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Store } from '../../storage/interface.js';
import { parseCidr } from '../../src/ipam/cidr.js';
import { ClusterIPAllocator } from '../../src/ipam/cluster-ips.js';
import { NodePortAllocator, parsePortRange } from '../../src/ipam/node-ports.js';
import { ServiceAllocations } from '../../src/ipam/service-allocation.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { createResourceContext } from '../../src/resource/context.js';
import { createObject } from '../../src/resource/create.js';
import type { KubeObject } from '../../src/api/object.js';

/** `inner`, except that a Service create is written and then answered "unavailable". */
function answerLost(inner: Store): Store {
  return new Proxy(inner, {
    get(target, prop) {
      const member = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'create')
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
      return async (key: string, value: Uint8Array, options?: Parameters<Store['create']>[2]) => {
        const written = await target.create(key, value, options);
        if (key.includes('/services/')) throw new UnavailableError('etcd create: etcd is unavailable');
        return written;
      };
    },
  });
}

describe('a Service create answered "unavailable"', () => {
  it('keeps the IPAddress of the cluster IP the stored Service holds', async () => {
    const registry = loadRegistry();
    const store = answerLost(await openMemoryStore());
    const ips = new ClusterIPAllocator(registry, [parseCidr('10.0.0.0/24')]);
    const ctx = createResourceContext({
      registry,
      store,
      eventTtlSeconds: 3600,
      minRequestTimeoutSeconds: 1800,
      writeHooks: new ServiceAllocations(ips, new NodePortAllocator(parsePortRange('30000-32767'))),
    });
    const namespaces = registry.byResource('', 'v1', 'namespaces')!;
    await createObject(ctx, namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
    });
    const services = registry.byResource('', 'v1', 'services')!;
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a', namespace: 'default' },
      spec: { ports: [{ port: 80 }] },
    } as unknown as KubeObject;
    await expect(createObject(ctx, services, svc)).rejects.toBeInstanceOf(UnavailableError);

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
