/**
 * Cluster DNS end to end: a real Capstan, Services and EndpointSlices written through the API,
 * the DNS server fed by informers, queries over the wire (UDP and TCP), forwarding to an
 * upstream the test runs, and bad input.
 */
import { createSocket, type Socket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ENDPOINT_SLICES, SERVICES, loadKubeconfig } from '../../src/client/index.js';
import type { Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import { startClusterDns, type ClusterDns } from '../../src/dns/cluster-dns.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { dataOf, encodeQuery, tcpQuery, udpQuery, udpRaw } from './query.js';

describe('cluster DNS against a real server', () => {
  let server: TestServer;
  let client: Client;
  let dns: ClusterDns;
  let upstream: Socket;

  beforeAll(async () => {
    server = await startTestServer();
    const config = loadKubeconfig(server.kubeconfigPath);
    client = new Client(config);
    // An upstream resolver on loopback that answers every A query with 192.0.2.1.
    upstream = createSocket('udp4');
    upstream.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg);
      const name = q.questions?.[0]?.name ?? '';
      upstream.send(
        dnsPacket.encode({
          type: 'response',
          id: q.id ?? 0,
          flags: dnsPacket.RECURSION_AVAILABLE,
          questions: q.questions ?? [],
          answers: [{ name, type: 'A', ttl: 60, class: 'IN', data: '192.0.2.1' }],
        }),
        rinfo.port,
        rinfo.address,
      );
    });
    await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', () => r()));
    const services = client.resource<Service>(SERVICES);
    await services.create({
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    await services.create({
      metadata: { name: 'db', namespace: 'default' },
      spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] },
    });
    await services.create({
      metadata: { name: 'ext', namespace: 'default' },
      spec: { type: 'ExternalName', externalName: 'www.example.test' },
    });
    await client.resource<EndpointSlice>(ENDPOINT_SLICES).create({
      metadata: { name: 'db-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'db' } },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.244.0.5'], hostname: 'db-0', conditions: { ready: true } },
        { addresses: ['10.244.0.6'], hostname: 'db-1', conditions: { ready: true } },
      ],
      ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
    });
    const addr = upstream.address();
    dns = await startClusterDns(config, {
      port: 0,
      upstreams: [{ host: '127.0.0.1', port: addr.port }],
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await dns?.close();
    upstream?.close();
    await client?.close();
    await server?.close();
  });

  it('resolves a ClusterIP service to the IP the server allocated', async () => {
    const web = await client.resource<Service>(SERVICES).get('web', { namespace: 'default' });
    const a = await udpQuery(dns.port, 'web.default.svc.cluster.local', 'A');
    expect(a.rcode).toBe('NOERROR');
    expect(a.flag_aa).toBe(true);
    expect(dataOf(a, 'A')).toEqual([web.spec?.clusterIP]);
  });

  it('resolves headless pods by hostname, SRV records, and an ExternalName as CNAME', async () => {
    expect(dataOf(await udpQuery(dns.port, 'db-0.db.default.svc.cluster.local', 'A'), 'A')).toEqual([
      '10.244.0.5',
    ]);
    const srv = await tcpQuery(dns.port, '_pg._tcp.db.default.svc.cluster.local', 'SRV');
    expect(
      (dataOf(srv, 'SRV') as { target: string; port: number }[]).map((d) => `${d.target}:${d.port}`).sort(),
    ).toEqual(['db-0.db.default.svc.cluster.local:5432', 'db-1.db.default.svc.cluster.local:5432']);
    expect(dataOf(await udpQuery(dns.port, 'ext.default.svc.cluster.local', 'A'), 'CNAME')).toEqual([
      'www.example.test',
    ]);
  });

  it('follows the API: a new service resolves, a deleted one is NXDOMAIN', async () => {
    const services = client.resource<Service>(SERVICES);
    await services.create({
      metadata: { name: 'late', namespace: 'default' },
      spec: { ports: [{ port: 81 }] },
    });
    await expect
      .poll(async () => (await udpQuery(dns.port, 'late.default.svc.cluster.local', 'A')).rcode)
      .toBe('NOERROR');
    await services.delete('late', { namespace: 'default' });
    await expect
      .poll(async () => (await udpQuery(dns.port, 'late.default.svc.cluster.local', 'A')).rcode)
      .toBe('NXDOMAIN');
  });

  it('forwards names outside the zone to the upstream', async () => {
    const a = await udpQuery(dns.port, 'www.example.test', 'A');
    expect(dataOf(a, 'A')).toEqual(['192.0.2.1']);
  });

  it('answers malformed queries with FORMERR and unknown opcodes with NOTIMP, and keeps serving', async () => {
    const garbage = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
    const formerr = await udpRaw(dns.port, garbage);
    expect(formerr).toBeDefined();
    expect(formerr!.readUInt16BE(0)).toBe(0x1234);
    expect(formerr!.readUInt8(3) & 0xf).toBe(1);
    const q = encodeQuery('web.default.svc.cluster.local', 'A');
    q.writeUInt8(q.readUInt8(2) | (2 << 3), 2); // opcode STATUS
    const notimp = await udpRaw(dns.port, q);
    expect(notimp!.readUInt8(3) & 0xf).toBe(4);
    expect(await udpRaw(dns.port, Buffer.from([1, 2, 3]), 300)).toBeUndefined();
    expect((await udpQuery(dns.port, 'web.default.svc.cluster.local', 'A')).rcode).toBe('NOERROR');
  });

  it('truncates a UDP answer over 512 bytes and gives it whole over TCP', async () => {
    const endpoints = Array.from({ length: 60 }, (_, i) => ({
      addresses: [`10.244.1.${i + 1}`],
      conditions: { ready: true },
    }));
    await client.resource<Service>(SERVICES).create({
      metadata: { name: 'big', namespace: 'default' },
      spec: { clusterIP: 'None', ports: [{ port: 80 }] },
    });
    await client.resource<EndpointSlice>(ENDPOINT_SLICES).create({
      metadata: { name: 'big-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'big' } },
      addressType: 'IPv4',
      endpoints,
      ports: [{ port: 80, protocol: 'TCP' }],
    });
    await expect
      .poll(async () => dataOf(await tcpQuery(dns.port, 'big.default.svc.cluster.local', 'A'), 'A').length)
      .toBe(60);
    const udp = await udpQuery(dns.port, 'big.default.svc.cluster.local', 'A');
    expect(udp.flag_tc).toBe(true);
    expect(udp.answers ?? []).toEqual([]);
  });
});
