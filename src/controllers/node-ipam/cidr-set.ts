/**
 * A cluster CIDR cut into node CIDRs of one mask size, with the ones in use marked (kube's
 * `cidrset`): `allocateNext` hands the lowest free one after the last handed out, `occupy`
 * marks one a node already has, `release` frees one.
 */

/** A CIDR flag or a node CIDR that cannot be used. */
export class CidrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CidrError';
  }
}

/** A parsed network. */
export interface Network {
  readonly family: 'IPv4' | 'IPv6';
  readonly base: bigint;
  readonly prefix: number;
}

const BITS = { IPv4: 32, IPv6: 128 } as const;

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = (n << 8n) | BigInt(p);
  }
  return n;
}

function parseIPv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : (halves[0] ?? '').split(':');
  const tail = halves.length === 2 ? (halves[1] === '' ? [] : (halves[1] ?? '').split(':')) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return undefined;
  const groups = [...head, ...Array<string>(fill).fill('0'), ...tail];
  if (groups.length !== 8) return undefined;
  let n = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    n = (n << 16n) | BigInt(`0x${g}`);
  }
  return n;
}

/**
 * Parses `a.b.c.d/n` or an IPv6 CIDR; host bits are cleared (as Go's `ParseCIDR` returns the
 * network).
 * @throws CidrError when it is not a CIDR.
 */
export function parseNetwork(text: string): Network {
  const m = /^([^/]+)\/([0-9]{1,3})$/.exec(text.trim());
  if (m === null) throw new CidrError(`invalid CIDR address: ${text}`);
  const addr = m[1] ?? '';
  const prefix = Number(m[2]);
  const family = addr.includes(':') ? 'IPv6' : 'IPv4';
  const ip = family === 'IPv6' ? parseIPv6(addr) : parseIPv4(addr);
  if (ip === undefined || prefix > BITS[family]) throw new CidrError(`invalid CIDR address: ${text}`);
  const hostBits = BigInt(BITS[family] - prefix);
  return { family, base: (ip >> hostBits) << hostBits, prefix };
}

/** Formats a network as kube prints it (`10.244.1.0/24`, `fd00:10:244:1::/64`). */
export function formatNetwork(n: Network): string {
  if (n.family === 'IPv4') {
    const o = [24n, 16n, 8n, 0n].map((s) => String((n.base >> s) & 255n));
    return `${o.join('.')}/${n.prefix}`;
  }
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n.base >> BigInt(i * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups (two or more), as Go does.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const text =
    best < 0
      ? groups.join(':')
      : `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
  return `${text}/${n.prefix}`;
}

/** Node CIDRs of one size within a cluster CIDR. */
export class CidrSet {
  readonly cluster: Network;
  readonly nodeMaskSize: number;
  readonly #max: number;
  readonly #used = new Set<number>();
  #next = 0;

  /** @throws CidrError when the node mask is not within the cluster CIDR's family and size. */
  constructor(cluster: Network, nodeMaskSize: number) {
    const bits = BITS[cluster.family];
    if (!Number.isInteger(nodeMaskSize) || nodeMaskSize > bits) {
      throw new CidrError(`node CIDR mask size ${nodeMaskSize} is not valid for ${cluster.family}`);
    }
    if (cluster.prefix > nodeMaskSize) {
      throw new CidrError(
        `mask size of cluster CIDR ${formatNetwork(cluster)} must be less than or equal to --node-cidr-mask-size (${nodeMaskSize})`,
      );
    }
    if (nodeMaskSize - cluster.prefix > 16) {
      throw new CidrError(
        `mask size of cluster CIDR ${formatNetwork(cluster)} and --node-cidr-mask-size (${nodeMaskSize}) differ by more than 16`,
      );
    }
    this.cluster = cluster;
    this.nodeMaskSize = nodeMaskSize;
    this.#max = 2 ** (nodeMaskSize - cluster.prefix);
  }

  #network(i: number): Network {
    const shift = BigInt(BITS[this.cluster.family] - this.nodeMaskSize);
    return {
      family: this.cluster.family,
      base: this.cluster.base + (BigInt(i) << shift),
      prefix: this.nodeMaskSize,
    };
  }

  #index(cidr: string): number | undefined {
    let n: Network;
    try {
      n = parseNetwork(cidr);
    } catch {
      return undefined;
    }
    if (n.family !== this.cluster.family || n.prefix !== this.nodeMaskSize) return undefined;
    const shift = BigInt(BITS[this.cluster.family] - this.nodeMaskSize);
    const i = (n.base - this.cluster.base) >> shift;
    if (n.base < this.cluster.base || i >= BigInt(this.#max)) return undefined;
    return Number(i);
  }

  /** The next free node CIDR, or `undefined` when the cluster CIDR is exhausted. */
  allocateNext(): string | undefined {
    for (let k = 0; k < this.#max; k++) {
      const i = (this.#next + k) % this.#max;
      if (this.#used.has(i)) continue;
      this.#used.add(i);
      this.#next = (i + 1) % this.#max;
      return formatNetwork(this.#network(i));
    }
    return undefined;
  }

  /** Marks a CIDR a node already has; false when it is not one of this set's. */
  occupy(cidr: string): boolean {
    const i = this.#index(cidr);
    if (i === undefined) return false;
    this.#used.add(i);
    return true;
  }

  /** Frees a CIDR; ignores ones not in this set. */
  release(cidr: string): void {
    const i = this.#index(cidr);
    if (i !== undefined) this.#used.delete(i);
  }

  /** Whether `cidr` is one of this set's node CIDRs. */
  contains(cidr: string): boolean {
    return this.#index(cidr) !== undefined;
  }
}
