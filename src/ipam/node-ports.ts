/**
 * NodePort allocation from `--service-node-port-range`. kube keeps a bitmap in one
 * RangeAllocation object; Capstan keeps one key per allocated port under
 * `<etcd-prefix>/services/nodeports/<port>` (beside kube's single key), created with a
 * create-if-absent: as crash-safe as the IPAddress objects and free of read-modify-write races on
 * one hot key. The start-time repair removes ports no Service holds.
 */
import { randomInt } from 'node:crypto';
import { AlreadyExistsError } from '../../storage/errors.js';
import { internalError } from '../api/errors.js';
import type { ResourceContext } from '../resource/context.js';
import { AllocationError, type ServiceRef } from './cluster-ips.js';

/** The key prefix of allocated node ports (under the store's prefix). */
export const NODE_PORT_PREFIX = '/services/nodeports/';

/** An inclusive port range. */
export interface PortRange {
  readonly base: number;
  readonly size: number;
}

/**
 * Parses `--service-node-port-range` (`N1-N2`, or `N1+N2` meaning N1..N1+N2-1, as kube's
 * `utilnet.ParsePortRange`).
 * @throws RangeError for anything else.
 */
export function parsePortRange(text: string): PortRange {
  const m = /^(\d+)(?:([-+])(\d+))?$/.exec(text.trim());
  if (m === null) throw new RangeError(`unable to parse port range: ${text}`);
  const low = Number(m[1]);
  const other = m[3] === undefined ? undefined : Number(m[3]);
  const size = other === undefined ? 1 : m[2] === '+' ? other : other - low + 1;
  if (low < 0 || low > 65535 || size < 1 || low + size - 1 > 65535) {
    throw new RangeError(`unable to parse port range: ${text}`);
  }
  return { base: low, size };
}

function rangeText(range: PortRange): string {
  return `${range.base}-${range.base + range.size - 1}`;
}

/** Allocates and releases node ports through one store key per port. */
export class NodePortAllocator {
  readonly range: PortRange;

  constructor(range: PortRange) {
    this.range = range;
  }

  #key(port: number): string {
    return `${NODE_PORT_PREFIX}${port}`;
  }

  async #take(ctx: ResourceContext, port: number, parent: ServiceRef, dryRun: boolean): Promise<boolean> {
    if (dryRun) return (await ctx.store.get(this.#key(port))).kv === undefined;
    try {
      // When it was taken: the start-time repair on a shared store frees an unheld port only
      // once it is old enough (another server may be about to write its Service).
      const created = ctx.now().toISOString();
      const value = JSON.stringify({ namespace: parent.namespace, name: parent.name, created });
      await ctx.store.create(this.#key(port), Buffer.from(value));
      return true;
    } catch (err) {
      if (err instanceof AlreadyExistsError) return false;
      throw err;
    }
  }

  /**
   * Allocates `port` for `parent`.
   * @throws AllocationError out of range or already allocated (kube's text).
   */
  async claim(ctx: ResourceContext, port: number, parent: ServiceRef, dryRun: boolean): Promise<void> {
    if (port < this.range.base || port >= this.range.base + this.range.size) {
      throw new AllocationError(
        `provided port is not in the valid range. The range of valid ports is ${rangeText(this.range)}`,
      );
    }
    if (!(await this.#take(ctx, port, parent, dryRun))) {
      throw new AllocationError('provided port is already allocated');
    }
  }

  /**
   * A free port for `parent`: random tries, then a scan.
   * @throws ApiError 500 when the range is full (kube's InternalError).
   */
  async allocate(ctx: ResourceContext, parent: ServiceRef, dryRun: boolean): Promise<number> {
    for (let i = 0; i < 16; i++) {
      const port = this.range.base + randomInt(this.range.size);
      if (await this.#take(ctx, port, parent, dryRun)) return port;
    }
    const taken = new Set((await this.list(ctx)).map((p) => p.port));
    const start = randomInt(this.range.size);
    for (let k = 0; k < this.range.size; k++) {
      const port = this.range.base + ((start + k) % this.range.size);
      if (taken.has(port)) continue;
      if (await this.#take(ctx, port, parent, dryRun)) return port;
    }
    throw internalError('failed to allocate a nodePort: range is full');
  }

  /** Frees `port` when `parent` holds it (or anyone, `parent` undefined). */
  async release(ctx: ResourceContext, port: number, parent: ServiceRef | undefined): Promise<void> {
    const { kv } = await ctx.store.get(this.#key(port));
    if (kv === undefined) return;
    if (parent !== undefined) {
      const owner = ownerOf(kv.value);
      if (owner?.namespace !== parent.namespace || owner.name !== parent.name) return;
    }
    try {
      await ctx.store.delete(this.#key(port), { ifModRevision: kv.modRevision });
    } catch {
      // Changed meanwhile: no longer ours to free.
    }
  }

  /**
   * Every allocated port with its owner and when it was taken (undefined for a key written
   * before Capstan recorded it).
   */
  async list(
    ctx: ResourceContext,
  ): Promise<{ port: number; parent: ServiceRef | undefined; created: string | undefined }[]> {
    const res = await ctx.store.range({ prefix: NODE_PORT_PREFIX });
    return res.items.map((kv) => {
      const record = parseRecord(kv.value);
      return {
        port: Number(kv.key.slice(kv.key.lastIndexOf('/') + 1)),
        parent: record?.parent,
        created: record?.created,
      };
    });
  }

  /** Re-takes a port a Service holds (repair); false when another Service holds it. */
  async ensure(ctx: ResourceContext, port: number, parent: ServiceRef): Promise<void> {
    if (port < this.range.base || port >= this.range.base + this.range.size) return;
    await this.#take(ctx, port, parent, false);
  }
}

function ownerOf(value: Uint8Array): ServiceRef | undefined {
  return parseRecord(value)?.parent;
}

/** A port key's value: its Service and, when recorded, the time it was taken. */
function parseRecord(value: Uint8Array): { parent: ServiceRef; created: string | undefined } | undefined {
  try {
    const v = JSON.parse(Buffer.from(value).toString('utf8')) as {
      namespace?: unknown;
      name?: unknown;
      created?: unknown;
    };
    const text = (x: unknown): string => (typeof x === 'string' ? x : '');
    return {
      parent: { namespace: text(v.namespace), name: text(v.name) },
      created: typeof v.created === 'string' ? v.created : undefined,
    };
  } catch {
    return undefined;
  }
}
