/**
 * Pods' resolver configuration by dnsPolicy and dnsConfig, as kubelet forms it, and the agent
 * flags that switch the in-agent networking on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import { podDnsConfig, parseResolvConfText } from '../../src/agent/network/dns-config.js';
import { enableClusterNetworking } from '../../src/agent/network/enable.js';
import { gatewayOf } from '../../src/agent/network/bridge.js';
import { kubeDnsService } from '../../src/agent/network/kube-dns.js';

const dir = mkdtempSync(join(tmpdir(), 'capstan-dns-config-'));
const resolvConf = join(dir, 'resolv.conf');
writeFileSync(
  resolvConf,
  '# host\nnameserver 127.0.0.53\nsearch corp.example lab.example\noptions edns0 ndots:2\n',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const node = { clusterDNS: ['10.0.0.10'], clusterDomain: 'cluster.local', resolvConf };
const pod = (spec: NonNullable<Pod['spec']>, namespace = 'team'): Pod => ({
  metadata: { name: 'p', namespace },
  spec: { containers: [], ...spec },
});

describe('pod DNS config', () => {
  it('ClusterFirst: cluster servers, kube search path then the host search, ndots:5', () => {
    expect(podDnsConfig(pod({}), node)).toEqual({
      servers: ['10.0.0.10'],
      searches: [
        'team.svc.cluster.local',
        'svc.cluster.local',
        'cluster.local',
        'corp.example',
        'lab.example',
      ],
      options: ['ndots:5'],
    });
  });

  it('ClusterFirst on the host network, or without clusterDNS, is Default', () => {
    const host = {
      servers: ['127.0.0.53'],
      searches: ['corp.example', 'lab.example'],
      options: ['edns0', 'ndots:2'],
    };
    expect(podDnsConfig(pod({ hostNetwork: true }), node)).toEqual(host);
    expect(podDnsConfig(pod({}), { ...node, clusterDNS: [] })).toEqual(host);
    expect(podDnsConfig(pod({ dnsPolicy: 'Default' }), node)).toEqual(host);
  });

  it('ClusterFirstWithHostNet gives host-network pods the cluster DNS', () => {
    const c = podDnsConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), node);
    expect(c.servers).toEqual(['10.0.0.10']);
    expect(c.options).toEqual(['ndots:5']);
  });

  it('None takes only dnsConfig; dnsConfig is appended and its options override by name', () => {
    expect(
      podDnsConfig(
        pod({
          dnsPolicy: 'None',
          dnsConfig: {
            nameservers: ['1.2.3.4'],
            searches: ['a.example'],
            options: [{ name: 'ndots', value: '1' }],
          },
        }),
        node,
      ),
    ).toEqual({ servers: ['1.2.3.4'], searches: ['a.example'], options: ['ndots:1'] });
    const merged = podDnsConfig(
      pod({
        dnsConfig: {
          nameservers: ['10.0.0.10', '1.1.1.1', '2.2.2.2', '3.3.3.3'],
          searches: ['svc.cluster.local', 'extra.example'],
          options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
        },
      }),
      node,
    );
    expect(merged.servers).toEqual(['10.0.0.10', '1.1.1.1', '2.2.2.2']);
    expect(merged.searches?.at(-1)).toBe('extra.example');
    expect(merged.searches?.filter((s) => s === 'svc.cluster.local')).toHaveLength(1);
    expect(merged.options).toEqual(['ndots:2', 'edns0']);
  });

  it('reads resolv.conf text', () => {
    expect(parseResolvConfText('domain a.example\nsearch b.example\nnameserver 9.9.9.9 ; x\n')).toEqual({
      servers: ['9.9.9.9'],
      searches: ['b.example'],
      options: [],
    });
  });
});

describe('agent networking settings', () => {
  it('flags switch the components on; enableClusterNetworking switches all three', () => {
    const base = resolveConfig(agentFlagSet().parse([]));
    expect([base.runProxy, base.runClusterDNS, base.runNetworkPolicy]).toEqual([false, false, false]);
    expect(base.resolvConf).toBe('/etc/resolv.conf');
    expect(base.cniBridge).toBe('capstan0');
    const flagged = resolveConfig(
      agentFlagSet().parse(['--run-proxy', '--run-cluster-dns', '--proxy-kubeconfig=/p', '--resolv-conf=']),
    );
    expect([flagged.runProxy, flagged.runClusterDNS, flagged.runNetworkPolicy]).toEqual([true, true, false]);
    expect(flagged.proxyKubeconfig).toBe('/p');
    expect(base.runPodRoutes).toBe(false);
    expect(resolveConfig(agentFlagSet().parse(['--run-pod-routes'])).runPodRoutes).toBe(true);
    expect(flagged.resolvConf).toBe('');
    const on = enableClusterNetworking(base, { clusterDNS: '10.96.0.10' });
    expect(on).toMatchObject({
      runProxy: true,
      runClusterDNS: true,
      runNetworkPolicy: true,
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
    });
  });

  it('the DNS listens on the pod gateway and is published with kube-dns labels', () => {
    expect(gatewayOf('10.244.3.0/24')).toEqual({ address: '10.244.3.1', prefix: 24 });
    expect(gatewayOf('10.244.8.0/21').address).toBe('10.244.8.1');
    expect(() => gatewayOf('fd00::/64')).toThrow(/not an IPv4 CIDR/);
    const svc = kubeDnsService('10.0.0.10');
    expect(svc.metadata.labels).toMatchObject({
      'k8s-app': 'kube-dns',
      'kubernetes.io/cluster-service': 'true',
    });
    expect(svc.spec?.ports?.map((p) => `${p.name ?? ''}/${p.protocol ?? ''}`)).toEqual([
      'dns/UDP',
      'dns-tcp/TCP',
    ]);
  });
});
