/**
 * The DNS server: UDP and TCP on one address and port, answering the cluster zone from a
 * {@link ClusterZone} and forwarding every other name upstream.
 *
 * A message that cannot be decoded gets FORMERR when its ID can be read and is dropped
 * otherwise; a query with other than one question, or another opcode or class, gets NOTIMP or
 * FORMERR; a UDP answer larger than the client's limit (512 bytes, or its EDNS payload size)
 * goes out truncated with TC set so the client retries over TCP. Nothing a client sends can
 * throw out of a handler.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket as TcpSocket } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet } from 'dns-packet';
import { forwardQuery, type Upstream } from './forward.js';
import { normalizeName } from './names.js';
import type { ClusterZone, QueryType } from './zone.js';
import { AnswerCache, readPlainQuery, type PlainQuery } from './answer-cache.js';

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const QUERY_TYPES: ReadonlySet<string> = new Set([
  'A',
  'AAAA',
  'SRV',
  'PTR',
  'TXT',
  'CNAME',
  'SOA',
  'NS',
  'ANY',
]);

/** Options of {@link startDnsServer}. */
export interface DnsServerOptions {
  readonly zone: ClusterZone;
  /** Address to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Port (default 53; 0 picks one). */
  readonly port?: number;
  /** Where names outside the zone go; none: SERVFAIL. */
  readonly upstreams?: readonly Upstream[];
  /** Upstream timeout (default 2 s). */
  readonly forwardTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** A running DNS server. */
export interface DnsServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Answers one query message; undefined when there is nothing to answer (no readable ID). With a
 * cache, a plain query (`plain`, see answer-cache.ts) is answered from it when it can be, and the
 * zone's answer to one is kept there.
 */
export async function answerQuery(
  msg: Buffer,
  opts: Pick<DnsServerOptions, 'zone' | 'upstreams' | 'forwardTimeoutMs'>,
  cache?: AnswerCache,
  plain: PlainQuery | undefined = cache === undefined ? undefined : readPlainQuery(msg),
): Promise<Buffer | undefined> {
  if (msg.length < 12) return undefined;
  const id = msg.readUInt16BE(0);
  const cached = plain === undefined ? undefined : cache?.get(plain, id);
  if (cached !== undefined) return cached;
  let query: DecodedPacket;
  try {
    query = dnsPacket.decode(msg);
  } catch {
    return reply(id, undefined, RCODE.FORMERR);
  }
  if (query.type !== 'query') return undefined;
  const opcode = (msg.readUInt8(2) >> 3) & 0xf;
  const q = query.questions?.[0];
  if (opcode !== 0) return reply(id, query, RCODE.NOTIMP);
  if (q === undefined || query.questions?.length !== 1) return reply(id, query, RCODE.FORMERR);
  if ((q.class ?? 'IN') !== 'IN') return reply(id, query, RCODE.NOTIMP);
  const name = normalizeName(q.name);
  if (!opts.zone.owns(name)) {
    const forwarded = await forwardQuery(msg, opts.upstreams ?? [], opts.forwardTimeoutMs);
    return forwarded ?? reply(id, query, RCODE.SERVFAIL);
  }
  let answer: Buffer;
  if (QUERY_TYPES.has(q.type)) {
    const a = opts.zone.lookup(q.name, q.type as QueryType);
    answer = reply(id, query, a.rcode, a);
  } else {
    answer = reply(id, query, RCODE.NOERROR, { authorities: opts.zone.lookup(q.name, 'SOA').answers });
  }
  if (plain !== undefined) cache?.set(plain, answer);
  return answer;
}

function reply(
  id: number,
  query: DecodedPacket | undefined,
  rcode: number,
  sections: { answers?: Answer[]; additionals?: Answer[]; authorities?: Answer[] } = {},
): Buffer {
  const rd = query?.flag_rd === true ? dnsPacket.RECURSION_DESIRED : 0;
  const packet: Packet = {
    type: 'response',
    id,
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | rd | rcode,
    questions: query?.questions ?? [],
    answers: sections.answers ?? [],
    authorities: sections.authorities ?? [],
    additionals: sections.additionals ?? [],
  };
  return dnsPacket.encode(packet);
}

/** The largest UDP answer a query allows: its EDNS payload size, else 512 bytes. */
function udpLimit(msg: Buffer): number {
  try {
    const opt = dnsPacket.decode(msg).additionals?.find((a) => a.type === 'OPT');
    return opt !== undefined && 'udpPayloadSize' in opt ? Math.max(512, opt.udpPayloadSize) : 512;
  } catch {
    return 512;
  }
}

/** The answer cut to its header and question, with TC set. */
function truncated(answer: Buffer): Buffer {
  const p = dnsPacket.decode(answer);
  return dnsPacket.encode({
    type: 'response',
    id: p.id ?? 0,
    flags: (p.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
    questions: p.questions ?? [],
  });
}

/** Starts the server; resolves once both sockets listen. */
export async function startDnsServer(opts: DnsServerOptions): Promise<DnsServer> {
  const host = opts.host ?? '127.0.0.1';
  const log = opts.log ?? (() => undefined);
  const cache = new AnswerCache(opts.zone);
  const tcp: Server = createServer((socket) => serveTcp(socket, opts, cache, log));
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(opts.port ?? 53, host, () => resolve());
  });
  const address = tcp.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? 53);
  const udp: Socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  const send = (msg: Buffer, answer: Buffer, limit: number | undefined, rinfo: RemoteInfo): void => {
    // Most answers fit in 512 bytes: only a longer one needs the client's limit.
    const tooLong = answer.length > 512 && answer.length > (limit ?? udpLimit(msg));
    udp.send(tooLong ? truncated(answer) : answer, rinfo.port, rinfo.address);
  };
  udp.on('message', (msg, rinfo) => {
    const plain = readPlainQuery(msg);
    // A cached answer goes out at once, without a promise in between.
    const cached = plain === undefined || msg.length < 12 ? undefined : cache.get(plain, msg.readUInt16BE(0));
    if (cached !== undefined) {
      send(msg, cached, plain?.udpLimit, rinfo);
      return;
    }
    answerQuery(msg, opts, cache, plain).then(
      (answer) => {
        if (answer !== undefined) send(msg, answer, plain?.udpLimit, rinfo);
      },
      (err: unknown) => log(`dns: answering ${rinfo.address}:${rinfo.port} failed: ${String(err)}`),
    );
  });
  udp.on('error', (err) => log(`dns: udp socket error: ${err.message}`));
  try {
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, host, () => resolve());
    });
  } catch (err) {
    tcp.close();
    throw err;
  }
  return {
    host,
    port,
    close: async () => {
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

/** DNS over TCP: 2-byte length-prefixed messages, answered in order; a bad frame closes the connection. */
function serveTcp(
  socket: TcpSocket,
  opts: DnsServerOptions,
  cache: AnswerCache,
  log: (line: string) => void,
): void {
  let buffered = Buffer.alloc(0);
  let chain = Promise.resolve();
  socket.setTimeout(10_000, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2) {
      const len = buffered.readUInt16BE(0);
      if (buffered.length < 2 + len) break;
      const msg = buffered.subarray(2, 2 + len);
      buffered = buffered.subarray(2 + len);
      chain = chain.then(async () => {
        try {
          const answer = await answerQuery(Buffer.from(msg), opts, cache);
          if (answer === undefined || socket.destroyed) return;
          const head = Buffer.alloc(2);
          head.writeUInt16BE(answer.length);
          socket.write(Buffer.concat([head, answer]));
        } catch (err) {
          log(`dns: tcp answer failed: ${String(err)}`);
          socket.destroy();
        }
      });
    }
  });
}
