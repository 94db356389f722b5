/**
 * ClusterIP allocation as kube v1.33 does it: one `networking.k8s.io/v1` IPAddress object per
 * allocated IP (name = the IP, `spec.parentRef` = the Service, managed-by `ipallocator.k8s.io`),
 * created with a create-if-absent in the same store. A create that finds the name taken means
 * "allocated"; the store's atomic create makes allocation persistent and crash-safe without a
 * bitmap (a Service that never got written leaves an IPAddress that the start-time repair
 * removes).
 */
import { randomInt } from 'node:crypto';
import { ApiError, internalError } from '../api/errors.js';
import type { Registry, ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { objectKey } from '../resource/keys.js';
import { decodeStored, isJsonObject, type KubeObject } from '../api/object.js';
import { ipAt, offsetIn, usableOffsets, type Cidr, type IPFamily } from '../api/cidr.js';

/** kube's labels on allocator-made IPAddresses. */
export const IP_FAMILY_LABEL = 'ipaddress.kubernetes.io/ip-family';
export const MANAGED_BY_LABEL = 'ipaddress.kubernetes.io/managed-by';
export const IP_ALLOCATOR = 'ipallocator.k8s.io';

/** The Service an IP belongs to. */
export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/** Why a requested IP or port cannot be had (kube's allocator errors, their exact text). */
export class AllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** Random tries before scanning the range for a free address. */
const RANDOM_TRIES = 16;

/** Allocates and releases ClusterIPs of the configured ranges through IPAddress objects. */
export class ClusterIPAllocator {
  readonly cidrs: readonly Cidr[];
  readonly #type: ResourceType;

  constructor(registry: Registry, cidrs: readonly Cidr[]) {
    this.cidrs = cidrs;
    const type = registry.byResource('networking.k8s.io', 'v1', 'ipaddresses');
    if (type === undefined) throw new Error('ipaddresses are not served');
    this.#type = type;
  }

  /** The range of `family`, if the cluster serves it. */
  rangeOf(family: IPFamily): Cidr | undefined {
    return this.cidrs.find((c) => c.family === family);
  }

  #object(ip: string, family: IPFamily, parent: ServiceRef): KubeObject {
    return {
      kind: 'IPAddress',
      apiVersion: 'networking.k8s.io/v1',
      metadata: { name: ip, labels: { [IP_FAMILY_LABEL]: family, [MANAGED_BY_LABEL]: IP_ALLOCATOR } },
      spec: {
        parentRef: { group: '', resource: 'services', namespace: parent.namespace, name: parent.name },
      },
    };
  }

  /** Creates the IPAddress of `ip`; false when it exists already. */
  async #take(
    ctx: ResourceContext,
    ip: string,
    family: IPFamily,
    parent: ServiceRef,
    dryRun: boolean,
  ): Promise<boolean> {
    if (dryRun) return (await ctx.store.get(objectKey(this.#type, undefined, ip))).kv === undefined;
    try {
      await createObject(ctx, this.#type, this.#object(ip, family, parent));
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.reason === 'AlreadyExists') return false;
      throw err;
    }
  }

  /**
   * Allocates `ip` for `parent`.
   * @throws AllocationError out of range or already allocated (kube's text).
   */
  async claim(ctx: ResourceContext, ip: string, parent: ServiceRef, dryRun: boolean): Promise<void> {
    const cidr = this.cidrs.find((c) => offsetIn(c, ip) !== undefined);
    const offset = cidr === undefined ? undefined : offsetIn(cidr, ip);
    const usable = cidr === undefined ? undefined : usableOffsets(cidr);
    if (
      cidr === undefined ||
      offset === undefined ||
      usable === undefined ||
      offset < usable.first ||
      offset > usable.last
    ) {
      const valid = this.cidrs.map((c) => c.text).join(',');
      throw new AllocationError(
        `failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${valid}`,
      );
    }
    if (!(await this.#take(ctx, ip, cidr.family, parent, dryRun))) {
      throw new AllocationError(`failed to allocate IP ${ip}: provided IP is already allocated`);
    }
  }

  /**
   * Allocates a free IP of `family` for `parent`: random tries in the upper part of the range
   * (kube keeps the lower band for static IPs), then a scan.
   * @throws ApiError 500 when the range is full (kube's InternalError).
   */
  async allocate(
    ctx: ResourceContext,
    family: IPFamily,
    parent: ServiceRef,
    dryRun: boolean,
  ): Promise<string> {
    const cidr = this.rangeOf(family);
    if (cidr === undefined) throw internalError(`failed to allocate a serviceIP: no ${family} range`);
    const { first, last } = usableOffsets(cidr);
    const count = last - first + 1n;
    if (count > 0n) {
      // kube's dynamic band: above min(max(16, size/16), 256) reserved low addresses.
      let band = count / 16n;
      band = band < 16n ? 16n : band > 256n ? 256n : band;
      const low = count > band * 2n ? first + band : first;
      const span = last - low + 1n;
      for (let i = 0; i < RANDOM_TRIES; i++) {
        const offset = low + randomBelow(span);
        const ip = ipAt(cidr, offset);
        if (await this.#take(ctx, ip, family, parent, dryRun)) return ip;
      }
      const taken = await this.#allocated(ctx);
      for (let k = 0n; k < count; k++) {
        const offset = first + ((low - first + k) % count);
        const ip = ipAt(cidr, offset);
        if (taken.has(ip)) continue;
        if (await this.#take(ctx, ip, family, parent, dryRun)) return ip;
      }
    }
    throw internalError('failed to allocate a serviceIP: range is full');
  }

  /** The IPs that have IPAddress objects now. */
  async #allocated(ctx: ResourceContext): Promise<Set<string>> {
    const res = await ctx.store.range({ prefix: `/${this.#type.storageResource}/` }, { keysOnly: true });
    return new Set(res.items.map((kv) => kv.key.slice(kv.key.lastIndexOf('/') + 1)));
  }

  /** Removes the IPAddress of `ip` when it belongs to `parent` (or to no one, `parent` undefined). */
  async release(ctx: ResourceContext, ip: string, parent: ServiceRef | undefined): Promise<void> {
    const key = objectKey(this.#type, undefined, ip);
    const { kv } = await ctx.store.get(key);
    if (kv === undefined) return;
    if (parent !== undefined) {
      const ref = parentOf(decodeStored(kv.value, kv.modRevision));
      if (ref === undefined || ref.namespace !== parent.namespace || ref.name !== parent.name) return;
    }
    try {
      await ctx.store.delete(key, { ifModRevision: kv.modRevision });
    } catch {
      // Changed meanwhile: no longer ours to remove.
    }
  }

  /** Every IPAddress the allocator made, with its parent Service. */
  async list(
    ctx: ResourceContext,
  ): Promise<
    { ip: string; parent: ServiceRef | undefined; modRevision: bigint; created: string | undefined }[]
  > {
    const res = await ctx.store.range({ prefix: `/${this.#type.storageResource}/` });
    return res.items.flatMap((kv) => {
      const obj = decodeStored(kv.value, kv.modRevision);
      if (obj.metadata.labels?.[MANAGED_BY_LABEL] !== IP_ALLOCATOR) return [];
      return [
        {
          ip: obj.metadata.name ?? '',
          parent: parentOf(obj),
          modRevision: kv.modRevision,
          created: obj.metadata.creationTimestamp ?? undefined,
        },
      ];
    });
  }

  /** Recreates the IPAddress of an IP a Service holds (repair). */
  async ensure(ctx: ResourceContext, ip: string, parent: ServiceRef): Promise<void> {
    const cidr = this.cidrs.find((c) => offsetIn(c, ip) !== undefined);
    if (cidr === undefined) return;
    await this.#take(ctx, ip, cidr.family, parent, false);
  }
}

function parentOf(obj: KubeObject): ServiceRef | undefined {
  const spec = obj['spec'];
  const ref = isJsonObject(spec) ? spec['parentRef'] : undefined;
  if (!isJsonObject(ref) || ref['resource'] !== 'services') return undefined;
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return { namespace: text(ref['namespace']), name: text(ref['name']) };
}

/** A uniform random bigint in [0, n). */
function randomBelow(n: bigint): bigint {
  if (n <= 0n) return 0n;
  if (n <= 281474976710655n) return BigInt(randomInt(Number(n)));
  // Wide IPv6 ranges: 48 random bits are plenty to spread allocations.
  return BigInt(randomInt(281474976710655)) % n;
}
