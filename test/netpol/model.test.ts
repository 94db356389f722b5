import { describe, expect, it } from 'vitest';
import type { Namespace, Pod } from '../../src/api/types/core-v1.js';
import type { NetworkPolicy } from '../../src/api/types/networking-v1.js';
import { computePolicies, matchesSelector } from '../../src/netpol/model.js';
import { netpolTransaction } from '../../src/netpol/nftables.js';

const pod = (ns: string, name: string, ip: string, labels: Record<string, string>, nodeName = 'n1'): Pod => ({
  metadata: { namespace: ns, name, labels },
  spec: { nodeName, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
  status: { phase: 'Running', podIP: ip },
});
const ns = (name: string, labels: Record<string, string>): Namespace => ({ metadata: { name, labels } });
const np = (namespace: string, name: string, spec: NonNullable<NetworkPolicy['spec']>): NetworkPolicy => ({
  metadata: { namespace, name },
  spec,
});

describe('network policy model', () => {
  it('matches label selectors with every operator', () => {
    const l = { app: 'web', tier: 'front' };
    expect(matchesSelector({}, l)).toBe(true);
    expect(matchesSelector({ matchLabels: { app: 'web' } }, l)).toBe(true);
    expect(
      matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, l),
    ).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }, l)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'x', operator: 'Bogus' }] }, l)).toBe(false);
  });

  it('resolves namespace selectors, named ports and ipBlocks; leaves unselected and remote pods alone', () => {
    const world = {
      nodeName: 'n1',
      namespaces: [ns('a', { team: 'x' }), ns('b', { team: 'y' })],
      pods: [
        pod('a', 'web', '10.244.0.5', { app: 'web' }),
        pod('b', 'cli', '10.244.1.7', { role: 'client' }, 'n2'),
        pod('a', 'other', '10.244.0.6', {}),
      ],
      policies: [
        np('a', 'p', {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [
            { from: [{ namespaceSelector: { matchLabels: { team: 'y' } } }], ports: [{ port: 'http' }] },
            {
              from: [{ ipBlock: { cidr: '192.0.2.0/24', except: ['192.0.2.9/32'] } }],
              ports: [{ port: 9000, endPort: 9010, protocol: 'UDP' }],
            },
          ],
        }),
      ],
    };
    const { pods } = computePolicies(world);
    expect(pods).toEqual([
      {
        ip: '10.244.0.5',
        ingress: [
          { ips: ['10.244.1.7'], ports: [{ protocol: 'tcp', port: 8080 }] },
          {
            blocks: [{ cidr: '192.0.2.0/24', except: ['192.0.2.9/32'] }],
            ports: [{ protocol: 'udp', port: 9000, endPort: 9010 }],
          },
        ],
      },
    ]);
    const tx = netpolTransaction(pods, ['10.244.0.1']);
    expect(tx).toMatch(/ip saddr \{ 10\.244\.1\.7 \} meta l4proto tcp th dport 8080 return/);
    expect(tx).toMatch(
      /ip saddr 192\.0\.2\.0\/24 ip saddr != \{ 192\.0\.2\.9\/32 \} meta l4proto udp th dport 9000-9010 return/,
    );
  });

  it('defaults policyTypes from the rules present and reports an unenforceable egress rule', () => {
    const { pods, unenforceable } = computePolicies({
      nodeName: 'n1',
      namespaces: [],
      pods: [pod('a', 'web', '10.244.0.5', { app: 'web' })],
      policies: [
        np('a', 'e', {
          podSelector: {},
          egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 'dns' }] }],
        }),
      ],
    });
    expect(pods[0]?.ingress).toEqual([]);
    expect(pods[0]?.egress).toEqual([]);
    expect(unenforceable.map((u) => u.message)).toEqual([
      'an egress rule with a named port and an ipBlock cannot be enforced',
    ]);
  });
});
