/**
 * Name helpers of cluster DNS: normalising query names, the dashed form of an IP used for
 * endpoints without a hostname and for pod records (`10-1-2-3`), and reverse (PTR) names.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Lower case without the trailing dot: names are compared this way. */
export function normalizeName(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

/**
 * The dashed label of an address: `10.1.2.3` → `10-1-2-3`, `fd00::1` → `fd00--1`
 * (kube's DNS specification for endpoints without a hostname, and pod records).
 */
export function dashedIp(ip: string): string {
  return isIPv4(ip) ? ip.replaceAll('.', '-') : ip.toLowerCase().replaceAll(':', '-');
}

/** The IPv4 address of a dashed label, or undefined when it is not one. */
export function ipv4OfDashed(label: string): string | undefined {
  const ip = label.replaceAll('-', '.');
  return isIPv4(ip) && label.split('-').length === 4 ? ip : undefined;
}

/** The full 32 nibbles of an IPv6 address, most significant first. */
function ipv6Nibbles(ip: string): string[] {
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const h = head === '' ? [] : head.split(':');
  const t = ip.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.flatMap((g) => [...g.padStart(4, '0')]);
}

/** The PTR name of an address (`3.2.1.10.in-addr.arpa`, nibbles in `ip6.arpa`); undefined if not an IP. */
export function reverseName(ip: string): string | undefined {
  if (isIPv4(ip)) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  if (isIPv6(ip)) return `${ipv6Nibbles(ip).reverse().join('.')}.ip6.arpa`;
  return undefined;
}

/** True for names in the reverse zones. */
export function isReverseName(name: string): boolean {
  return name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa');
}
