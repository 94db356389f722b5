import { describe, expect, it } from 'vitest';
import type { Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import { proxiedPorts } from '../../src/proxy/model.js';
import { ProxyTable, parseListing, renderService, type ServiceRules } from '../../src/proxy/nftables.js';

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
  const other = svc('other', {
    clusterIP: '10.0.0.30',
    clusterIPs: ['10.0.0.30'],
    ports: [{ name: 'http', port: 80 }],
  });
  const rules = (s: Service, sl: Map<string, EndpointSlice> | undefined): ServiceRules =>
    renderService(proxiedPorts(s, sl, 'n1'));

  it('maps the ClusterIP and node port to a chain that picks an endpoint, and rejects ports without endpoints', () => {
    const r = rules(web, two);
    const svcChain = r.elements.get('service-ips')?.get('10.0.0.20 . tcp . 80');
    expect(svcChain).toMatch(/^goto svc-/);
    expect(r.chains.get(svcChain!.slice(5))?.at(-1)).toBe(
      'meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.244.0.5 . 8080 , 1 : 10.244.0.6 . 8080 }',
    );
    expect([...r.chains.keys()].filter((c) => c.startsWith('sep-'))).toEqual([]);
    expect([...(r.elements.get('hairpin')?.keys() ?? [])]).toEqual([
      '10.244.0.5 . 10.244.0.5',
      '10.244.0.6 . 10.244.0.6',
    ]);
    expect(r.elements.get('service-nodeports')?.get('tcp . 30080')).toMatch(/^goto ext-/);
    const empty = rules(web, undefined);
    expect(empty.elements.get('no-endpoint-services')?.get('10.0.0.20 . tcp . 80')).toBe('goto reject-chain');
    expect(empty.elements.get('service-ips')).toBeUndefined();
  });

  it('updates incrementally: one endpoint going away touches only its service', () => {
    const table = new ProxyTable();
    table
      .full(
        new Map([
          ['default/web', rules(web, two)],
          ['default/other', rules(other, two)],
        ]),
        undefined,
      )
      .commit();
    const one = slices([{ addresses: ['10.244.0.5'], conditions: { ready: true } }]);
    const plan = table.partial(new Map([['default/web', rules(web, one)]]));
    expect(plan.script).not.toMatch(/default\/other/);
    expect(plan.script).toMatch(/^flush chain ip capstan-proxy svc-.*default\/web\/tcp\/http$/m);
    expect(plan.script).toMatch(/dnat to 10\.244\.0\.5:8080$/m);
    // 10.244.0.6 is still an endpoint of `other`: its hairpin element stays
    expect(plan.script).not.toMatch(/hairpin/);
    expect(plan.script).not.toMatch(/delete table|add chain/);
    plan.commit();
    expect(table.partial(new Map([['default/web', rules(web, one)]])).script).toBe('');
    // the other service goes: its chain and the now unclaimed hairpin element go with it
    const gone = table.partial(new Map([['default/other', undefined]]));
    expect(gone.script).toMatch(
      /^delete element ip capstan-proxy hairpin \{ 10\.244\.0\.6 \. 10\.244\.0\.6 \}$/m,
    );
    expect(gone.script).toMatch(
      /^delete element ip capstan-proxy service-ips \{ 10\.0\.0\.30 \. tcp \. 80 \}$/m,
    );
    expect(gone.script).toMatch(/^delete chain ip capstan-proxy svc-.*default\/other\/tcp\/http$/m);
    expect(gone.script).not.toMatch(/hairpin \{ 10\.244\.0\.5/);
    gone.commit();
    expect(table.services).toEqual(new Set(['default/web']));
  });

  it('rebuilds the table without a listing, and converges it in place with one', () => {
    const all = new Map([['default/web', rules(web, two)]]);
    const rebuild = new ProxyTable().full(all, undefined).script;
    expect(rebuild.split('\n').slice(0, 3)).toEqual([
      'add table ip capstan-proxy',
      'delete table ip capstan-proxy',
      'add table ip capstan-proxy',
    ]);
    const svcChain = [...(all.get('default/web')?.chains.keys() ?? [])].find((c) => c.startsWith('svc-'));
    const converge = new ProxyTable().full(all, {
      chains: new Set(['services', svcChain!, 'svc-OLD-default/gone']),
      sets: new Set(['hairpin', 'affinity-OLD']),
    }).script;
    expect(converge).not.toMatch(/delete table/);
    expect(converge).toMatch(/^flush map ip capstan-proxy service-ips$/m);
    expect(converge).toContain(`flush chain ip capstan-proxy ${svcChain}\n`);
    expect(converge).toMatch(/^delete chain ip capstan-proxy svc-OLD-default\/gone$/m);
    expect(converge).toMatch(/^delete set ip capstan-proxy affinity-OLD$/m);
    expect(converge).not.toMatch(/delete set ip capstan-proxy hairpin/);
  });

  it('reads the listing of its own table only', () => {
    const chains = JSON.stringify({
      nftables: [
        { metainfo: {} },
        { chain: { family: 'ip', table: 'capstan-proxy', name: 'services' } },
        { chain: { family: 'ip', table: 'foreign', name: 'keep' } },
      ],
    });
    const sets = JSON.stringify({
      nftables: [
        { set: { family: 'ip', table: 'capstan-proxy', name: 'hairpin' } },
        { map: { family: 'ip', table: 'capstan-proxy', name: 'service-ips' } },
      ],
    });
    expect(parseListing('capstan-proxy', chains, sets)).toEqual({
      chains: new Set(['services']),
      sets: new Set(['hairpin']),
    });
    expect(parseListing('absent', chains, sets)).toBeUndefined();
  });

  it('keeps ClientIP affinity in per-endpoint chains and sets', () => {
    const sticky = svc('s', {
      clusterIP: '10.0.0.40',
      clusterIPs: ['10.0.0.40'],
      sessionAffinity: 'ClientIP',
      ports: [{ name: 'http', port: 80 }],
    });
    const r = rules(sticky, two);
    expect([...r.sets.values()]).toEqual([
      '{ type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
      '{ type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
    ]);
    expect([...r.chains.keys()].filter((c) => c.startsWith('sep-'))).toHaveLength(2);
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
