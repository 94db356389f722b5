/**
 * Addresses for simulated nodes and their pods. Nothing routes them: they only appear in status.
 * - Node InternalIPs come from 198.18.0.0/15 (RFC 2544, benchmarking, never routed on the
 *   internet): node slot i gets 198.18.0.0 + i + 1.
 * - Pod IPs come from the node's `spec.podCIDRs` (one per family, as a kubelet with host-local
 *   IPAM hands out), or, while the node has none, from a /24 of 100.64.0.0/10 (RFC 6598) picked
 *   by the node's slot, so pod IPs stay unique across the simulated cluster.
 */
import { bigintToIp, ipToBigint } from '../../api/cidr.js';

/** A parsed CIDR: family, network address as a bigint, prefix length. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly prefix: number;
}

/** Parses `a.b.c.d/n` or an IPv6 CIDR; undefined when malformed. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash === -1) return undefined;
  const prefix = Number(text.slice(slash + 1));
  const addr = parseIp(text.slice(0, slash));
  if (addr === undefined || !Number.isInteger(prefix) || prefix < 0) return undefined;
  const bits = addr.family === 4 ? 32 : 128;
  if (prefix > bits) return undefined;
  const hostBits = BigInt(bits - prefix);
  const base = (addr.value >> hostBits) << hostBits;
  return { family: addr.family, base, prefix };
}

/** Parses an IPv4 or IPv6 address into a bigint; undefined when malformed. */
export function parseIp(text: string): { family: 4 | 6; value: bigint } | undefined {
  const value = ipToBigint(text);
  return value === undefined ? undefined : { family: text.includes(':') ? 6 : 4, value };
}

/** Formats an address of a family (IPv6 in its shortest form). */
export function formatIp(family: 4 | 6, value: bigint): string {
  return bigintToIp(value, family === 4 ? 'IPv4' : 'IPv6');
}

/** Whether `ip` lies inside `cidr`. */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const addr = parseIp(ip);
  if (addr === undefined || addr.family !== cidr.family) return false;
  const hostBits = BigInt((cidr.family === 4 ? 32 : 128) - cidr.prefix);
  return addr.value >> hostBits === cidr.base >> hostBits;
}

const NODE_IP_BASE = parseIp('198.18.0.0')?.value ?? 0n;
const FALLBACK_POD_BASE = parseIp('100.64.0.0')?.value ?? 0n;

/** The InternalIP of the node in `slot` (0-based; 131,070 slots). */
export function nodeInternalIp(slot: number): string {
  return formatIp(4, NODE_IP_BASE + BigInt((slot % 131_070) + 1));
}

/** The pod CIDR a node in `slot` uses while its `spec.podCIDRs` is empty (16,384 slots). */
export function fallbackPodCidr(slot: number): string {
  return `${formatIp(4, FALLBACK_POD_BASE + (BigInt(slot % 16_384) << 8n))}/24`;
}

/**
 * Pod IPs of one node in one CIDR: host offsets from 2 (.1 is the bridge's gateway, as with
 * host-local IPAM) up to the last usable address, handed out round-robin so a released address
 * is not reused at once. Holders are pod UIDs.
 */
export class PodIpPool {
  readonly cidr: Cidr;
  readonly #text: string;
  readonly #size: number;
  readonly #byOffset = new Map<number, string>();
  readonly #byHolder = new Map<string, number>();
  #cursor = 0;

  constructor(cidrText: string) {
    const cidr = parseCidr(cidrText);
    if (cidr === undefined)
      throw new Error(`simulated nodes: malformed pod CIDR ${JSON.stringify(cidrText)}`);
    this.cidr = cidr;
    this.#text = cidrText;
    const hostBits = (cidr.family === 4 ? 32 : 128) - cidr.prefix;
    // Offsets 0 and 1 (network, gateway) and, for IPv4, the broadcast address are never given.
    const usable = hostBits >= 20 ? 1 << 20 : (1 << hostBits) - (cidr.family === 4 ? 3 : 2);
    this.#size = Math.max(0, usable);
  }

  /** The CIDR this pool was made from. */
  get text(): string {
    return this.#text;
  }

  /** The holder's address, allocating one if it has none; undefined when the pool is full. */
  allocate(holder: string): string | undefined {
    const had = this.#byHolder.get(holder);
    if (had !== undefined) return this.#format(had);
    if (this.#byOffset.size >= this.#size) return undefined;
    for (let tries = 0; tries < this.#size; tries++) {
      const offset = 2 + this.#cursor;
      this.#cursor = (this.#cursor + 1) % this.#size;
      if (!this.#byOffset.has(offset)) {
        this.#byOffset.set(offset, holder);
        this.#byHolder.set(holder, offset);
        return this.#format(offset);
      }
    }
    return undefined;
  }

  /**
   * Records that `holder` already has `ip` (seen in a pod's status after a restart). False when
   * the address is outside the pool or held by someone else.
   */
  claim(holder: string, ip: string): boolean {
    const addr = parseIp(ip);
    if (addr === undefined || addr.family !== this.cidr.family || !cidrContains(this.cidr, ip)) return false;
    const offset = Number(addr.value - this.cidr.base);
    const owner = this.#byOffset.get(offset);
    if (owner !== undefined) return owner === holder;
    if (this.#byHolder.has(holder)) return false;
    this.#byOffset.set(offset, holder);
    this.#byHolder.set(holder, offset);
    return true;
  }

  /** Frees the holder's address, if any. */
  release(holder: string): void {
    const offset = this.#byHolder.get(holder);
    if (offset === undefined) return;
    this.#byHolder.delete(holder);
    this.#byOffset.delete(offset);
  }

  /** Addresses in use. */
  get used(): number {
    return this.#byOffset.size;
  }

  #format(offset: number): string {
    return formatIp(this.cidr.family, this.cidr.base + BigInt(offset));
  }
}
