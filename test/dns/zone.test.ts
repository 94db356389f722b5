import { describe, expect, it } from 'vitest';
import type { Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import { dashedIp, reverseName } from '../../src/dns/names.js';
import { ClusterZone } from '../../src/dns/zone.js';

const svc = (ns: string, name: string, spec: NonNullable<Service['spec']>): Service => ({
  metadata: { namespace: ns, name },
  spec,
});
const slice = (
  ns: string,
  svcName: string,
  name: string,
  eps: NonNullable<EndpointSlice['endpoints']>,
): EndpointSlice => ({
  metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svcName } },
  addressType: 'IPv4',
  endpoints: eps,
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});

function zone(): ClusterZone {
  const z = new ClusterZone('cluster.local');
  z.setService(
    svc('default', 'web', {
      clusterIP: '10.0.0.20',
      clusterIPs: ['10.0.0.20'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    }),
  );
  z.setService(svc('default', 'db', { clusterIP: 'None', ports: [{ name: 'http', port: 8080 }] }));
  z.setSlice(
    slice('default', 'db', 'db-abc', [
      { addresses: ['10.244.0.5'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.244.0.6'], conditions: { ready: true } },
      { addresses: ['10.244.0.7'], hostname: 'db-2', conditions: { ready: false } },
    ]),
  );
  z.setService(svc('other', 'ext', { type: 'ExternalName', externalName: 'example.test' }));
  return z;
}

describe('cluster zone', () => {
  it('answers a ClusterIP service by its ClusterIP, in any letter case', () => {
    const a = zone().lookup('Web.Default.svc.cluster.local.', 'A');
    expect(a.rcode).toBe(0);
    expect(a.answers.map((r) => [r.name, r.type, (r as { data: unknown }).data])).toEqual([
      ['Web.Default.svc.cluster.local.', 'A', '10.0.0.20'],
    ]);
  });

  it('answers a headless service with its ready endpoints, and each hostname or dashed address', () => {
    const z = zone();
    expect(
      z
        .lookup('db.default.svc.cluster.local', 'A')
        .answers.map((r) => (r as { data: unknown }).data)
        .sort(),
    ).toEqual(['10.244.0.5', '10.244.0.6']);
    expect(
      z.lookup('db-0.db.default.svc.cluster.local', 'A').answers.map((r) => (r as { data: unknown }).data),
    ).toEqual(['10.244.0.5']);
    expect(z.lookup('10-244-0-6.db.default.svc.cluster.local', 'A').answers).toHaveLength(1);
    expect(z.lookup('db-2.db.default.svc.cluster.local', 'A').rcode).toBe(3);
  });

  it('includes not-ready endpoints when the service publishes them', () => {
    const z = zone();
    z.setService(svc('default', 'db', { clusterIP: 'None', publishNotReadyAddresses: true }));
    expect(z.lookup('db-2.db.default.svc.cluster.local', 'A').answers).toHaveLength(1);
  });

  it('serves SRV records for named ports, with the targets in the additional section', () => {
    const z = zone();
    const web = z.lookup('_http._tcp.web.default.svc.cluster.local', 'SRV');
    expect(web.answers.map((r) => (r as { data: unknown }).data)).toEqual([
      { priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' },
    ]);
    expect(web.additionals.map((r) => (r as { data: unknown }).data)).toEqual(['10.0.0.20']);
    const db = z.lookup('_http._tcp.db.default.svc.cluster.local', 'SRV');
    expect(db.answers.map((r) => (r as { data: { target: string } }).data.target).sort()).toEqual([
      '10-244-0-6.db.default.svc.cluster.local',
      'db-0.db.default.svc.cluster.local',
    ]);
    expect(z.lookup('_grpc._tcp.web.default.svc.cluster.local', 'SRV').rcode).toBe(3);
  });

  it('answers ExternalName with a CNAME', () => {
    const a = zone().lookup('ext.other.svc.cluster.local', 'A');
    expect(a.answers.map((r) => [r.type, (r as { data: unknown }).data])).toEqual([
      ['CNAME', 'example.test'],
    ]);
  });

  it('tells NXDOMAIN from NODATA, both with the SOA', () => {
    const z = zone();
    const nx = z.lookup('nope.default.svc.cluster.local', 'A');
    expect(nx.rcode).toBe(3);
    expect(nx.authorities[0]?.type).toBe('SOA');
    const empty = z.lookup('default.svc.cluster.local', 'A');
    expect([empty.rcode, empty.answers.length, empty.authorities[0]?.type]).toEqual([0, 0, 'SOA']);
    expect(z.lookup('web.default.svc.cluster.local', 'AAAA')).toMatchObject({ rcode: 0, answers: [] });
    expect(z.lookup('nosuchns.svc.cluster.local', 'A').rcode).toBe(3);
    expect(z.lookup('foo.cluster.local', 'A').rcode).toBe(3);
  });

  it('serves pod records, dns-version and reverse names', () => {
    const z = zone();
    expect(
      z.lookup('10-244-1-9.default.pod.cluster.local', 'A').answers.map((r) => (r as { data: unknown }).data),
    ).toEqual(['10.244.1.9']);
    expect(z.lookup('not-an-ip.default.pod.cluster.local', 'A').rcode).toBe(3);
    expect(z.lookup('dns-version.cluster.local', 'TXT').answers).toHaveLength(1);
    expect(z.owns('20.0.0.10.in-addr.arpa')).toBe(true);
    expect(
      z.lookup('20.0.0.10.in-addr.arpa', 'PTR').answers.map((r) => (r as { data: unknown }).data),
    ).toEqual(['web.default.svc.cluster.local']);
    expect(
      z.lookup('5.0.244.10.in-addr.arpa', 'PTR').answers.map((r) => (r as { data: unknown }).data),
    ).toEqual(['db-0.db.default.svc.cluster.local']);
    expect(z.owns('1.1.168.192.in-addr.arpa')).toBe(false);
  });

  it('forgets deleted services and slices', () => {
    const z = zone();
    z.deleteService(svc('default', 'web', {}));
    expect(z.lookup('web.default.svc.cluster.local', 'A').rcode).toBe(3);
    expect(z.owns('20.0.0.10.in-addr.arpa')).toBe(false);
    z.deleteSlice(slice('default', 'db', 'db-abc', []));
    expect(z.lookup('db.default.svc.cluster.local', 'A')).toMatchObject({ rcode: 0, answers: [] });
  });

  it('writes dashed and reverse forms of both families', () => {
    expect(dashedIp('10.1.2.3')).toBe('10-1-2-3');
    expect(dashedIp('fd00::1')).toBe('fd00--1');
    expect(reverseName('10.1.2.3')).toBe('3.2.1.10.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(`1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
    expect(reverseName('nope')).toBeUndefined();
  });
});
