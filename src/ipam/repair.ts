/**
 * The start-time repair of service allocations (kube's ClusterIP and NodePort repair
 * controllers, run once before serving): every cluster IP and node port a stored Service holds
 * gets its IPAddress or port key back if a crash lost it, and every IPAddress or port key no
 * Service holds (left by a create that crashed before its Service was written) is removed. With
 * allocation done by create-if-absent, the repair never hands out a duplicate: it only restores
 * what Services hold and frees what none does.
 *
 * On a store other servers share (etcd), another server may be between allocating an IP or a
 * node port and writing its Service while this one starts: the allocation records are read
 * before the Services (one whose Service is written meanwhile is seen held), and one no Service
 * holds is freed only once it is {@link SHARED_ORPHAN_GRACE_MS} old, else the in-flight Service
 * would be written with an IP or port handed out again (the HA fault test's long runs found such
 * pairs of cluster IPs).
 */
import type { ResourceContext } from '../resource/context.js';
import { collectionSpan } from '../resource/keys.js';
import { decodeStored, isJsonObject } from '../api/object.js';
import type { ClusterIPAllocator } from './cluster-ips.js';
import type { NodePortAllocator } from './node-ports.js';

/** How old an unheld IPAddress or node port must be before the repair frees it, on a shared store. */
export const SHARED_ORPHAN_GRACE_MS = 5 * 60_000;

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Reconciles IPAddresses and node port keys with the stored Services. */
export async function repairServiceAllocations(
  ctx: ResourceContext,
  ips: ClusterIPAllocator,
  ports: NodePortAllocator,
): Promise<void> {
  const type = ctx.registry.byResource('', 'v1', 'services');
  if (type === undefined) return;
  // The allocations first: one whose Service is written before the Services are read is held.
  const existingIPs = await ips.list(ctx);
  const existingPorts = await ports.list(ctx);
  const res = await ctx.store.range(collectionSpan(type, undefined));
  const heldIPs = new Map<string, string>();
  const heldPorts = new Map<number, string>();
  for (const kv of res.items) {
    const svc = decodeStored(kv.value, kv.modRevision);
    const owner = key(svc.metadata.namespace ?? '', svc.metadata.name ?? '');
    const spec = isJsonObject(svc['spec']) ? svc['spec'] : {};
    const clusterIPs = Array.isArray(spec['clusterIPs']) ? spec['clusterIPs'] : [];
    for (const ip of clusterIPs) if (typeof ip === 'string' && ip !== 'None') heldIPs.set(ip, owner);
    const svcPorts = Array.isArray(spec['ports']) ? spec['ports'].filter(isJsonObject) : [];
    for (const p of svcPorts)
      if (typeof p['nodePort'] === 'number' && p['nodePort'] !== 0) heldPorts.set(p['nodePort'], owner);
    if (typeof spec['healthCheckNodePort'] === 'number' && spec['healthCheckNodePort'] !== 0)
      heldPorts.set(spec['healthCheckNodePort'], owner);
  }
  const refOf = (owner: string): { namespace: string; name: string } => {
    const slash = owner.indexOf('/');
    return { namespace: owner.slice(0, slash), name: owner.slice(slash + 1) };
  };
  const grace = ctx.store.capabilities.shared ? SHARED_ORPHAN_GRACE_MS : 0;
  const settled = (created: string | undefined): boolean =>
    created === undefined || ctx.now().getTime() - Date.parse(created) >= grace;
  const present = new Set<string>();
  for (const a of existingIPs) {
    const holder = heldIPs.get(a.ip);
    const parent = a.parent === undefined ? undefined : key(a.parent.namespace, a.parent.name);
    if (holder !== undefined && holder === parent) present.add(a.ip);
    else if (holder === undefined && settled(a.created)) await ips.release(ctx, a.ip, a.parent);
  }
  for (const [ip, owner] of heldIPs) if (!present.has(ip)) await ips.ensure(ctx, ip, refOf(owner));
  const portsPresent = new Set<number>();
  for (const p of existingPorts) {
    const holder = heldPorts.get(p.port);
    const parent = p.parent === undefined ? undefined : key(p.parent.namespace, p.parent.name);
    if (holder !== undefined && holder === parent) portsPresent.add(p.port);
    else if (holder === undefined && settled(p.created)) await ports.release(ctx, p.port, undefined);
  }
  for (const [port, owner] of heldPorts)
    if (!portsPresent.has(port)) await ports.ensure(ctx, port, refOf(owner));
}
