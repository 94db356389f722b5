/**
 * Network errors in the words kube's probes use (Go's net package), so `Unhealthy` events read
 * as kubelet's do: `dial tcp 10.0.0.5:8080: connect: connection refused`, `... i/o timeout`.
 */

const CONNECT_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connect: connection refused',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  EADDRNOTAVAIL: 'connect: cannot assign requested address',
  ECONNRESET: 'read: connection reset by peer',
  EPIPE: 'write: broken pipe',
};

/** `host:port`, with brackets around an IPv6 host (Go's net.JoinHostPort). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The text of a failed TCP dial to `addr` (`host:port`), as Go's dialer words it. */
export function dialErrorText(err: unknown, addr: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (code === 'ETIMEDOUT' || code === 'PROBE_TIMEOUT') return `dial tcp ${addr}: i/o timeout`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const host = addr.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    return `dial tcp: lookup ${host}: no such host`;
  }
  const text = CONNECT_TEXT[code];
  return text
    ? `dial tcp ${addr}: ${text}`
    : `dial tcp ${addr}: ${(err as Error | undefined)?.message ?? String(err)}`;
}

/** Go's time.Duration text of whole seconds (`1s`, `1m0s`, `1h2m3s`). */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
