/**
 * kube's warnings for IP addresses and CIDRs that validation accepts but a future release will
 * not (apimachinery's `GetWarningsForIP` and `GetWarningsForCIDR`).
 */
import { bigintToIp, ipToBigint } from '../../api/cidr.js';

/** Go's `%q` of a string (the same as JSON's for the addresses, names and paths warned about). */
export const q = (s: string): string => JSON.stringify(s);

/** The IPv6 address `value` in RFC 5952 form (the URL parser prints hosts so), or undefined. */
function canonicalIPv6(value: string): string | undefined {
  try {
    return new URL(`http://[${value}]`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
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
    const canonical = canonicalIPv6(value);
    if (canonical === undefined) return [];
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
    if (mapped !== null) {
      const [hi, lo] = [parseInt(mapped[1] ?? '0', 16), parseInt(mapped[2] ?? '0', 16)];
      return nonStandard(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
    }
    return canonical === value
      ? []
      : [`${path}: IPv6 address ${q(value)} should be in RFC 5952 canonical format (${q(canonical)})`];
  }
  const n = ipv4Number(value);
  return n === undefined || !hasLeadingZeros(value) ? [] : nonStandard(ipv4Text(n));
}

const ambiguous = (path: string, value: string, network: string, single: string): string =>
  `${path}: CIDR value ${q(value)} is ambiguous in this context (should be ${q(network)} or ${q(single)}?)`;

const nonStandardCidr = (path: string, value: string, preferred: string): string =>
  `${path}: non-standard CIDR value ${q(value)} will be considered invalid in a future Kubernetes release: use ${q(preferred)}`;

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
  if (addr.includes(':')) {
    const canonical = canonicalIPv6(addr);
    if (canonical === undefined || !/^\d+$/.test(value.slice(slash + 1)) || bits > 128) return [];
    const n = ipToBigint(addr);
    if (n === undefined) return [];
    const network = n & ~((1n << BigInt(128 - bits)) - 1n);
    const out: string[] = [];
    if (n >> 32n === 0xffffn && bits >= 96) {
      // IPv4-mapped: Go prints the addresses, and the network's prefix, in their IPv4 form.
      const v4 = `${bigintToIp(network & 0xffffffffn, 'IPv4')}/${bits - 96}`;
      if (network !== n) out.push(ambiguous(path, value, v4, `${bigintToIp(n & 0xffffffffn, 'IPv4')}/128`));
      return [...out, nonStandardCidr(path, value, v4)];
    }
    if (network !== n)
      return [
        ambiguous(path, value, `${bigintToIp(network, 'IPv6')}/${bits}`, `${bigintToIp(n, 'IPv6')}/128`),
      ];
    if (canonical === addr) return [];
    return [
      `${path}: IPv6 CIDR value ${q(value)} should be in RFC 5952 canonical format (${q(`${canonical}/${bits}`)})`,
    ];
  }
  const n = ipv4Number(addr);
  if (n === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return [];
  const size = 2 ** (32 - bits);
  const network = `${ipv4Text(n - (n % size))}/${bits}`;
  const out: string[] = [];
  if (n % size !== 0) out.push(ambiguous(path, value, network, `${ipv4Text(n)}/32`));
  if (hasLeadingZeros(addr)) out.push(nonStandardCidr(path, value, network));
  return out;
}
