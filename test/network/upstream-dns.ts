/**
 * A tiny upstream resolver for tests of the cluster DNS's forwarding: UDP on a loopback address
 * the test picks (127.0.53.x), answering A queries for `external.example.test` only, with a
 * loopback address (so nothing that follows the answer leaves the asking pod), NXDOMAIN for
 * other names, and recording what it was asked.
 */
import { createSocket, type Socket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';

/** A running responder. */
export interface UpstreamDns {
  readonly host: string;
  /** Names asked, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

/** The name it knows, and its address. */
export const EXTERNAL_NAME = 'external.example.test';
export const EXTERNAL_ANSWER = '127.0.53.161';

/** Listens on `host`:53. */
export async function startUpstreamDns(host: string): Promise<UpstreamDns> {
  const asked: string[] = [];
  const udp: Socket = createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    try {
      const q = dnsPacket.decode(msg);
      const question = q.questions?.[0];
      if (question === undefined) return;
      asked.push(question.name);
      const known = question.name.toLowerCase().replace(/\.$/, '') === EXTERNAL_NAME;
      const answers: dnsPacket.Answer[] =
        known && question.type === 'A'
          ? [{ type: 'A', name: question.name, ttl: 30, class: 'IN', data: EXTERNAL_ANSWER }]
          : [];
      udp.send(
        dnsPacket.encode({
          type: 'response',
          id: q.id ?? 0,
          flags: dnsPacket.RECURSION_AVAILABLE | dnsPacket.RECURSION_DESIRED | (known ? 0 : 3),
          questions: q.questions ?? [],
          answers,
        }),
        rinfo.port,
        rinfo.address,
      );
    } catch {
      // a test responder: malformed input is dropped
    }
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(53, host, () => resolve());
  });
  return { host, asked, close: () => new Promise<void>((resolve) => udp.close(() => resolve())) };
}
