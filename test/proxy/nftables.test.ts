import { describe, expect, it } from 'vitest';
import type { Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import { proxiedPorts } from '../../src/proxy/model.js';
import { renderRuleset, transaction } from '../../src/proxy/nftables.js';

const svc = (name: string, spec: NonNullable<Service['spec']>): Service => ({
  metadata: { namespace: 'default', name },
  spec,
});
const slices = (eps: NonNullable<EndpointSlice['endpoints']>, port = 8080): Map<string, EndpointSlice> =>
  new Map([
    [
      's1',
      {
        metadata: { name: 's1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'x' } },
        addressType: 'IPv4',
        endpoints: eps,
        ports: [{ name: 'http', port, protocol: 'TCP' }],
      },
    ],
  ]);
const web = svc('web', {
  clusterIP: '10.0.0.20',
  clusterIPs: ['10.0.0.20'],
  ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }],
});

describe('proxied ports', () => {
  it('keeps ready endpoints, falls back to serving-terminating ones, skips foreign addresses', () => {
    const [p] = proxiedPorts(
      web,
      slices([
        { addresses: ['10.244.0.6'], conditions: { ready: true }, nodeName: 'n1' },
        { addresses: ['10.244.0.5'], conditions: { ready: true }, nodeName: 'n2' },
        { addresses: ['10.244.0.7'], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ['not-an-ip'], conditions: { ready: true } },
      ]),
      'n1',
    );
    expect(p?.endpoints).toEqual([
      { ip: '10.244.0.5', port: 8080, local: false },
      { ip: '10.244.0.6', port: 8080, local: true },
    ]);
    const [q] = proxiedPorts(
      web,
      slices([{ addresses: ['10.244.0.7'], conditions: { ready: false, serving: true, terminating: true } }]),
      'n1',
    );
    expect(q?.endpoints.map((e) => e.ip)).toEqual(['10.244.0.7']);
  });

  it('gives headless, ExternalName and out-of-range ports nothing', () => {
    expect(proxiedPorts(svc('h', { clusterIP: 'None', ports: [{ port: 80 }] }), undefined, 'n1')).toEqual([]);
    expect(proxiedPorts(svc('e', { type: 'ExternalName', externalName: 'x.test' }), undefined, 'n1')).toEqual(
      [],
    );
    expect(
      proxiedPorts(svc('b', { clusterIP: '10.0.0.9', ports: [{ port: 70000 }] }), undefined, 'n1'),
    ).toEqual([]);
  });
});

describe('nftables ruleset', () => {
  const two = slices([
    { addresses: ['10.244.0.5'], conditions: { ready: true } },
    { addresses: ['10.244.0.6'], conditions: { ready: true } },
  ]);

  it('maps the ClusterIP and node port to a chain that picks an endpoint, and rejects ports without endpoints', () => {
    const r = renderRuleset(proxiedPorts(web, two, 'n1'));
    const svcChain = r.maps.get('service-ips')?.get('10.0.0.20 . tcp . 80');
    expect(svcChain).toMatch(/^goto svc-/);
    const rules = r.chains.get(svcChain!.slice(5));
    expect(rules?.at(-1)).toMatch(/^numgen random mod 2 vmap \{ 0 : goto sep-.* , 1 : goto sep-/);
    expect(r.maps.get('service-nodeports')?.get('tcp . 30080')).toMatch(/^goto ext-/);
    const empty = renderRuleset(proxiedPorts(web, undefined, 'n1'));
    expect(empty.maps.get('no-endpoint-services')?.get('10.0.0.20 . tcp . 80')).toBe('goto reject-chain');
    expect(empty.maps.get('service-ips')?.size).toBe(0);
  });

  it('updates incrementally: one endpoint going away touches only its service', () => {
    const other = svc('other', {
      clusterIP: '10.0.0.30',
      clusterIPs: ['10.0.0.30'],
      ports: [{ name: 'http', port: 80 }],
    });
    const a = renderRuleset([...proxiedPorts(web, two, 'n1'), ...proxiedPorts(other, two, 'n1')]);
    const one = slices([{ addresses: ['10.244.0.5'], conditions: { ready: true } }]);
    const b = renderRuleset([...proxiedPorts(web, one, 'n1'), ...proxiedPorts(other, two, 'n1')]);
    const tx = transaction(a, b);
    expect(tx).not.toMatch(/default\/other/);
    expect(tx).toMatch(/flush chain ip capstan-proxy svc-.*default\/web/);
    expect(tx).toMatch(/delete chain ip capstan-proxy sep-.*10\.244\.0\.6/);
    expect(tx).not.toMatch(/delete table/);
    expect(transaction(b, b)).toBe('');
  });

  it('replaces the whole table on a first sync', () => {
    const tx = transaction(undefined, renderRuleset(proxiedPorts(web, two, 'n1')));
    expect(tx.split('\n').slice(0, 3)).toEqual([
      'add table ip capstan-proxy',
      'delete table ip capstan-proxy',
      'add table ip capstan-proxy',
    ]);
  });

  it('keeps ClientIP affinity in per-endpoint sets', () => {
    const sticky = svc('s', {
      clusterIP: '10.0.0.40',
      clusterIPs: ['10.0.0.40'],
      sessionAffinity: 'ClientIP',
      ports: [{ name: 'http', port: 80 }],
    });
    const r = renderRuleset(proxiedPorts(sticky, two, 'n1'));
    expect([...r.sets.values()]).toEqual([
      '{ type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
      '{ type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
    ]);
  });
});

describe('capstan proxy flags', () => {
  it("take kube-proxy's names and refuse modes that are not implemented", async () => {
    const { parseProxyArgs } = await import('../../src/proxy/command.js');
    expect(parseProxyArgs(['--hostname-override=n1', '--cluster-cidr=10.244.0.0/16'])).toMatchObject({
      nodeName: 'n1',
      clusterCidr: '10.244.0.0/16',
      minSyncPeriodMs: 1000,
      syncPeriodMs: 30000,
      healthz: '0.0.0.0:10256',
      metrics: '127.0.0.1:10249',
    });
    expect(() => parseProxyArgs(['--proxy-mode=iptables'])).toThrow(/not supported/);
    expect(() => parseProxyArgs(['--cluster-cidr=banana'])).toThrow(/invalid --cluster-cidr/);
    expect(parseProxyArgs(['--help'])).toBeUndefined();
  });
});
