/**
 * kube's warnings for IP addresses and CIDRs that validation accepts but a future release will
 * not (apimachinery's `GetWarningsForIP` and `GetWarningsForCIDR`).
 */
import { bigintToIp, ipToBigint } from '../../api/cidr.js';

/** Go's `%q` of a string (the same as JSON's for the addresses, names and paths warned about). */
export const q = (s: string): string => JSON.stringify(s);

/** An IPv6 address as a number, its RFC 5952 text, and its IPv4 text when it is IPv4-mapped. */
function ipv6(value: string): { n: bigint; canonical: string; mapped: string | undefined } | undefined {
  const n = ipToBigint(value);
  if (n === undefined) return undefined;
  const mapped = n >> 32n === 0xffffn ? bigintToIp(n & 0xffffffffn, 'IPv4') : undefined;
  return { n, canonical: bigintToIp(n, 'IPv6'), mapped };
}

/** The IPv4 address `a.b.c.d` (leading zeros allowed) as a number, or undefined. */
function ipv4Number(value: string): number | undefined {
  const parts = value.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const ipv4Text = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** True when a part of the dotted IPv4 address has a leading zero (`010.0.0.1`). */
const hasLeadingZeros = (value: string): boolean =>
  value.split('.').some((p) => p.length > 1 && p.startsWith('0'));

/**
 * kube's `GetWarningsForIP`: an IPv4 address with leading zeros or an IPv4-mapped IPv6 one
 * (use the plain IPv4 form), and an IPv6 address not in RFC 5952 form.
 */
export function ipWarnings(path: string, value: string): string[] {
  const nonStandard = (preferred: string): string[] => [
    `${path}: non-standard IP address ${q(value)} will be considered invalid in a future Kubernetes release: use ${q(preferred)}`,
  ];
  if (value.includes(':')) {
    const ip = ipv6(value);
    if (ip === undefined) return [];
    if (ip.mapped !== undefined) return nonStandard(ip.mapped);
    return ip.canonical === value
      ? []
      : [`${path}: IPv6 address ${q(value)} should be in RFC 5952 canonical format (${q(ip.canonical)})`];
  }
  const n = ipv4Number(value);
  return n === undefined || !hasLeadingZeros(value) ? [] : nonStandard(ipv4Text(n));
}

const ambiguous = (path: string, value: string, network: string, single: string): string =>
  `${path}: CIDR value ${q(value)} is ambiguous in this context (should be ${q(network)} or ${q(single)}?)`;

const nonStandardCidr = (path: string, value: string, preferred: string): string =>
  `${path}: non-standard CIDR value ${q(value)} will be considered invalid in a future Kubernetes release: use ${q(preferred)}`;

/** {@link cidrWarnings} of an IPv6 CIDR `addr`/`bitsText`. */
function ipv6CidrWarnings(path: string, value: string, addr: string, bitsText: string): string[] {
  const ip = ipv6(addr);
  const bits = Number(bitsText);
  if (ip === undefined || !/^\d+$/.test(bitsText) || bits > 128) return [];
  const network = ip.n & ~((1n << BigInt(128 - bits)) - 1n);
  if (ip.mapped !== undefined && bits >= 96) {
    // IPv4-mapped: Go prints the addresses, and the network's prefix, in their IPv4 form.
    const v4 = `${bigintToIp(network & 0xffffffffn, 'IPv4')}/${bits - 96}`;
    const out = network === ip.n ? [] : [ambiguous(path, value, v4, `${ip.mapped}/128`)];
    return [...out, nonStandardCidr(path, value, v4)];
  }
  if (network !== ip.n)
    return [ambiguous(path, value, `${bigintToIp(network, 'IPv6')}/${bits}`, `${ip.canonical}/128`)];
  if (ip.canonical === addr) return [];
  return [
    `${path}: IPv6 CIDR value ${q(value)} should be in RFC 5952 canonical format (${q(`${ip.canonical}/${bits}`)})`,
  ];
}

/**
 * kube's `GetWarningsForCIDR`: host bits set past the prefix (ambiguous); leading zeros in an
 * IPv4 CIDR and an IPv4-mapped IPv6 one (non-standard); otherwise, an IPv6 CIDR not in RFC 5952
 * form.
 */
export function cidrWarnings(path: string, value: string): string[] {
  const slash = value.indexOf('/');
  if (slash < 0) return [];
  const addr = value.slice(0, slash);
  const bits = Number(value.slice(slash + 1));
  if (addr.includes(':')) return ipv6CidrWarnings(path, value, addr, value.slice(slash + 1));
  const n = ipv4Number(addr);
  if (n === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return [];
  const size = 2 ** (32 - bits);
  const network = `${ipv4Text(n - (n % size))}/${bits}`;
  const out: string[] = [];
  if (n % size !== 0) out.push(ambiguous(path, value, network, `${ipv4Text(n)}/32`));
  if (hasLeadingZeros(addr)) out.push(nonStandardCidr(path, value, network));
  return out;
}
