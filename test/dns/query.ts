/** A tiny DNS client for the tests: one query over UDP or TCP to a server on loopback. */
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { DecodedPacket as Decoded, RecordType } from 'dns-packet';

/** A decoded answer; dns-packet also reports the response code by name. */
export type DecodedPacket = Decoded & { rcode?: string };

let nextId = 1;

/** Sends raw bytes over UDP and returns the raw answer (or undefined after `timeoutMs`). */
export function udpRaw(port: number, msg: Buffer, timeoutMs = 2000): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      resolve(undefined);
    }, timeoutMs);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m);
    });
    s.send(msg, port, '127.0.0.1');
  });
}

/** Encodes a query for `name`/`type` (with an EDNS payload size when given). */
export function encodeQuery(name: string, type: RecordType, udpPayloadSize?: number): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: nextId++ & 0xffff,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: 'IN' }],
    ...(udpPayloadSize === undefined
      ? {}
      : {
          additionals: [
            {
              type: 'OPT',
              name: '.',
              udpPayloadSize,
              extendedRcode: 0,
              ednsVersion: 0,
              flags: 0,
              flag_do: false,
              options: [],
            },
          ],
        }),
  });
}

/** One query over UDP, decoded. */
export async function udpQuery(port: number, name: string, type: RecordType): Promise<DecodedPacket> {
  const answer = await udpRaw(port, encodeQuery(name, type));
  if (answer === undefined) throw new Error(`no answer for ${name} ${type}`);
  return dnsPacket.decode(answer);
}

/** One query over TCP, decoded. */
export function tcpQuery(port: number, name: string, type: RecordType): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const q = encodeQuery(name, type);
    const head = Buffer.alloc(2);
    head.writeUInt16BE(q.length);
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([head, q])));
    let buf = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        socket.end();
        resolve(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
      }
    });
    socket.on('error', reject);
  });
}

/** The answers' data of one type, sorted, for compact assertions. */
export function dataOf(p: DecodedPacket, type: string): unknown[] {
  return (p.answers ?? []).filter((a) => a.type === type).map((a) => (a as { data: unknown }).data);
}
