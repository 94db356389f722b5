/**
 * The DNS server's cache of encoded zone answers (src/dns/answer-cache.ts), on the wire: a
 * repeated question gets the same answer under its own ID, a change of the zone is answered at
 * once, the client's spelling of the name and its RD flag are echoed, EDNS queries are cached
 * and still truncated by their own limit, and messages that are not plain queries take the full
 * path.
 */
import * as dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerCache, readPlainQuery } from '../../src/dns/answer-cache.js';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { ClusterZone } from '../../src/dns/zone.js';
import { encodeQuery, udpRaw, type DecodedPacket } from './query.js';

const web = (ip: string) => ({
  metadata: { namespace: 'default', name: 'web' },
  spec: { clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'http', port: 80, protocol: 'TCP' as const }] },
});

describe('the DNS answer cache', () => {
  let zone: ClusterZone;
  let server: DnsServer;
  const ask = async (msg: Buffer): Promise<DecodedPacket> => {
    const raw = await udpRaw(server.port, msg);
    if (raw === undefined) throw new Error('no answer');
    return dnsPacket.decode(raw);
  };
  const addresses = (p: DecodedPacket): string[] =>
    (p.answers ?? []).map((a) => (a.type === 'A' ? a.data : a.type));

  beforeAll(async () => {
    zone = new ClusterZone('cluster.local');
    zone.setService(web('10.0.0.20'));
    server = await startDnsServer({ zone, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers a repeated question the same, under each query’s own ID', async () => {
    const first = encodeQuery('web.default.svc.cluster.local', 'A');
    const second = encodeQuery('web.default.svc.cluster.local', 'A');
    const a = await ask(first);
    const b = await ask(second);
    expect(a.id).toBe(first.readUInt16BE(0));
    expect(b.id).toBe(second.readUInt16BE(0));
    expect(b.id).not.toBe(a.id);
    expect(addresses(a)).toEqual(['10.0.0.20']);
    expect({ ...b, id: a.id }).toEqual(a);
  });

  it('answers a change of the zone at once', async () => {
    expect(addresses(await ask(encodeQuery('web.default.svc.cluster.local', 'A')))).toEqual(['10.0.0.20']);
    zone.setService(web('10.0.0.21'));
    expect(addresses(await ask(encodeQuery('web.default.svc.cluster.local', 'A')))).toEqual(['10.0.0.21']);
    zone.deleteService(web('10.0.0.21'));
    expect((await ask(encodeQuery('web.default.svc.cluster.local', 'A'))).rcode).toBe('NXDOMAIN');
    zone.setService(web('10.0.0.20'));
  });

  it('echoes the name as asked and the RD flag', async () => {
    await ask(encodeQuery('web.default.svc.cluster.local', 'A'));
    const mixed = await ask(encodeQuery('Web.Default.svc.cluster.local', 'A'));
    expect(mixed.questions?.[0]?.name).toBe('Web.Default.svc.cluster.local');
    expect(mixed.answers?.[0]?.name).toBe('Web.Default.svc.cluster.local');
    const noRd = dnsPacket.encode({
      type: 'query',
      id: 4242,
      flags: 0,
      questions: [{ name: 'web.default.svc.cluster.local', type: 'A', class: 'IN' }],
    });
    const answer = await ask(noRd);
    expect(answer.flag_rd).toBe(false);
    expect(addresses(answer)).toEqual(['10.0.0.20']);
  });

  it('caches EDNS queries and truncates by each query’s own limit', async () => {
    // A headless Service with 40 endpoints: its A answer is over 512 bytes.
    zone.setService({ metadata: { namespace: 'default', name: 'many' }, spec: { clusterIP: 'None' } });
    zone.setSlice({
      metadata: { namespace: 'default', name: 'many-1', labels: { 'kubernetes.io/service-name': 'many' } },
      addressType: 'IPv4',
      endpoints: Array.from({ length: 40 }, (_, i) => ({
        addresses: [`10.244.9.${i + 1}`],
        conditions: { ready: true },
      })),
    });
    const big = await ask(encodeQuery('many.default.svc.cluster.local', 'A', 4096));
    expect(big.answers).toHaveLength(40);
    expect(big.flag_tc).toBe(false);
    const again = await ask(encodeQuery('many.default.svc.cluster.local', 'A', 4096));
    expect(again.answers).toHaveLength(40);
    const small = await ask(encodeQuery('many.default.svc.cluster.local', 'A'));
    expect(small.flag_tc).toBe(true);
    expect(small.answers ?? []).toHaveLength(0);
  });

  it('reads only plain queries: one question, no pointers, at most an OPT record ending the message', () => {
    const plain = readPlainQuery(encodeQuery('web.default.svc.cluster.local', 'A'));
    expect(plain?.udpLimit).toBe(512);
    expect(readPlainQuery(encodeQuery('web.default.svc.cluster.local', 'A', 1232))?.udpLimit).toBe(1232);
    expect(readPlainQuery(encodeQuery('web.default.svc.cluster.local', 'A', 100))?.udpLimit).toBe(512);
    const response = dnsPacket.encode({ type: 'response', id: 1, questions: [{ name: 'a.b', type: 'A' }] });
    expect(readPlainQuery(response)).toBeUndefined();
    const two = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [
        { name: 'a.b', type: 'A' },
        { name: 'c.d', type: 'A' },
      ],
    });
    expect(readPlainQuery(two)).toBeUndefined();
    const trailing = Buffer.concat([encodeQuery('web.default.svc.cluster.local', 'A'), Buffer.from([0])]);
    expect(readPlainQuery(trailing)).toBeUndefined();
    const pointer = Buffer.from(encodeQuery('web.default.svc.cluster.local', 'A'));
    pointer[12] = 0xc0;
    expect(readPlainQuery(pointer)).toBeUndefined();
    expect(readPlainQuery(Buffer.alloc(5))).toBeUndefined();
  });

  it('keeps at most its limit of answers', () => {
    const z = new ClusterZone('cluster.local');
    const cache = new AnswerCache(z, 2);
    for (const name of ['a', 'b', 'c']) {
      const q = readPlainQuery(encodeQuery(`${name}.cluster.local`, 'A'));
      if (q === undefined) throw new Error('not plain');
      cache.set(q, Buffer.alloc(12));
    }
    expect(cache.size).toBe(1);
  });
});
