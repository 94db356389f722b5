/**
 * The addresses a listener actually serves: a specific `--bind-address` is itself; the
 * wildcards (`0.0.0.0`, `::`, blank) mean every address of every interface of that family (both
 * families for `::` and blank, as dual-stack sockets accept IPv4 too). The start-up line names
 * them, and the generated serving certificate covers them.
 */
import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';

/** Interface addresses on this machine, IPv4 first (link-local IPv6 left out: they need a zone). */
export function interfaceAddresses(family: 'IPv4' | 'IPv6' | 'both'): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (family !== 'both' && a.family !== family) continue;
      if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80:')) continue;
      if (!out.includes(a.address)) out.push(a.address);
    }
  }
  return out.sort((x, y) => Number(isIPv6(x)) - Number(isIPv6(y)));
}

/** Addresses served for `bindAddress`. */
export function servedAddresses(bindAddress: string): string[] {
  if (bindAddress === '0.0.0.0') return interfaceAddresses('IPv4');
  if (bindAddress === '' || bindAddress === '::') return interfaceAddresses('both');
  return [bindAddress];
}

/** `https://addr:port` for each served address (IPv6 in brackets). */
export function servedUrls(bindAddress: string, port: number): string[] {
  return servedAddresses(bindAddress).map((a) =>
    isIPv6(a) ? `https://[${a}]:${port}` : `https://${a}:${port}`,
  );
}
