/**
 * IP addresses and ranges as numbers (bigint, so IPv6 works the same as IPv4): a parsed CIDR
 * (`--service-cluster-ip-range`), its size, the address at an offset, and Go's text of an
 * address. Shared by Service IP allocation and validation's warnings.
 */
import { isIP } from 'node:net';

/** An IP family, as kube names it. */
export type IPFamily = 'IPv4' | 'IPv6';

/** A parsed CIDR: its family, base address and prefix length. */
export interface Cidr {
  readonly text: string;
  readonly family: IPFamily;
  readonly base: bigint;
  readonly prefix: number;
  /** The number of addresses in the range. */
  readonly size: bigint;
}

function bits(family: IPFamily): number {
  return family === 'IPv4' ? 32 : 128;
}

/** The number of an IP address string, or undefined when it is not one. */
export function ipToBigint(ip: string): bigint | undefined {
  const v = isIP(ip);
  if (v === 4) return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  if (v !== 6) return undefined;
  let text = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const n = ipToBigint(dotted[1]) ?? 0n;
    text = `${text.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** The canonical string of an address number (Go's `netip.Addr.String`). */
export function bigintToIp(n: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn));
  // The longest run of two or more zero groups becomes `::` (the first such run on ties).
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** The family of an IP string, or undefined. */
export function familyOf(ip: string): IPFamily | undefined {
  const v = isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

/**
 * Parses a CIDR (`10.0.0.0/24`, `fd00::/108`); host bits are cleared as Go's `ParseCIDR` does.
 * @throws RangeError when `text` is not a CIDR.
 */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const ip = slash < 0 ? '' : text.slice(0, slash);
  const family = familyOf(ip);
  const prefix = Number(text.slice(slash + 1));
  if (family === undefined || !/^\d{1,3}$/.test(text.slice(slash + 1)) || prefix > bits(family)) {
    throw new RangeError(`invalid CIDR address: ${text}`);
  }
  const hostBits = BigInt(bits(family) - prefix);
  const base = ((ipToBigint(ip) ?? 0n) >> hostBits) << hostBits;
  return { text: `${bigintToIp(base, family)}/${prefix}`, family, base, prefix, size: 1n << hostBits };
}

/** The offset of `ip` in `cidr`, or undefined when it is outside (or of another family). */
export function offsetIn(cidr: Cidr, ip: string): bigint | undefined {
  if (familyOf(ip) !== cidr.family) return undefined;
  const n = ipToBigint(ip);
  if (n === undefined || n < cidr.base || n >= cidr.base + cidr.size) return undefined;
  return n - cidr.base;
}

/** The address at `offset` in `cidr`. */
export function ipAt(cidr: Cidr, offset: bigint): string {
  return bigintToIp(cidr.base + offset, cidr.family);
}

/**
 * The offsets kube hands out in a service range: all but the network address and, for IPv4,
 * the broadcast address (kube's `ipallocator` range `[base+1, max-1]`).
 */
export function usableOffsets(cidr: Cidr): { readonly first: bigint; readonly last: bigint } {
  const last = cidr.family === 'IPv4' ? cidr.size - 2n : cidr.size - 1n;
  return { first: 1n, last };
}
