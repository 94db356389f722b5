/**
 * Forwarding of names outside the cluster zone to upstream resolvers (the host's, from
 * `/etc/resolv.conf`, as CoreDNS's `forward . /etc/resolv.conf`): the query's bytes go to each
 * upstream in turn over UDP with a fresh ID, and the first answer comes back with the client's
 * ID. No upstream answering within the timeout gives undefined (the server answers SERVFAIL).
 */
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { randomInt } from 'node:crypto';

/** One upstream resolver. */
export interface Upstream {
  readonly host: string;
  readonly port: number;
}

/** The `nameserver` lines of a resolv.conf text, as upstreams on port 53. */
export function parseResolvConf(text: string): Upstream[] {
  const out: Upstream[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    const host = m?.[1];
    if (host !== undefined && isIP(host) !== 0) out.push({ host, port: 53 });
  }
  return out;
}

/** The host's resolvers, or none when `/etc/resolv.conf` cannot be read. */
export function hostUpstreams(path = '/etc/resolv.conf'): Upstream[] {
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/** Sends `query` (a whole DNS message) to the upstreams in turn; the answer with `query`'s ID. */
export async function forwardQuery(
  query: Buffer,
  upstreams: readonly Upstream[],
  timeoutMs = 2000,
): Promise<Buffer | undefined> {
  for (const up of upstreams) {
    const answer = await askOne(query, up, timeoutMs);
    if (answer !== undefined) return answer;
  }
  return undefined;
}

function askOne(query: Buffer, up: Upstream, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket(isIP(up.host) === 6 ? 'udp6' : 'udp4');
    const id = randomInt(0, 0x10000);
    const out = Buffer.from(query);
    const clientId = query.readUInt16BE(0);
    out.writeUInt16BE(id, 0);
    const finish = (answer: Buffer | undefined): void => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.on('error', () => finish(undefined));
    socket.on('message', (msg) => {
      if (msg.length < 12 || msg.readUInt16BE(0) !== id) return;
      const answer = Buffer.from(msg);
      answer.writeUInt16BE(clientId, 0);
      finish(answer);
    });
    socket.send(out, up.port, up.host, (err) => {
      if (err !== null) finish(undefined);
    });
  });
}
