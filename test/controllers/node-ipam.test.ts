/**
 * Node IPAM with kube's range allocator against a real server: nodes get podCIDRs from
 * `--cluster-cidr` at `--node-cidr-mask-size`, an exhausted range gives `CIDRNotAvailable`, a
 * deleted node's CIDR goes to the next node; malformed flags are start-up errors that do not
 * take the manager down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { EVENTS, NODES, type ResourceClient } from '../../src/client/index.js';
import { nodeIpamController } from '../../src/controllers/node-ipam/index.js';
import { cidrSetsFromConfig } from '../../src/controllers/node-ipam/controller.js';
import { CidrSet, parseNetwork } from '../../src/controllers/node-ipam/cidr-set.js';
import { parseControllerManagerArgs } from '../../src/controller-manager/options.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let nodes: ResourceClient<Node>;

async function cidrOf(name: string): Promise<string> {
  return until(`podCIDR of ${name}`, async () => {
    const n = await nodes.get(name);
    return n.spec?.podCIDR;
  });
}

beforeAll(async () => {
  env = await startInfraEnv(
    [nodeIpamController],
    ['--allocate-node-cidrs', '--cluster-cidr=10.244.0.0/23', '--node-cidr-mask-size=24'],
  );
  nodes = env.client.resource<Node>(NODES);
}, 60_000);
afterAll(async () => env?.close());

describe('node-ipam', () => {
  it('gives each node a /24 of the cluster CIDR, podCIDR and podCIDRs', async () => {
    await nodes.create({ metadata: { name: 'a' } });
    await nodes.create({ metadata: { name: 'b' } });
    const a = await cidrOf('a');
    const b = await cidrOf('b');
    expect(new Set([a, b])).toEqual(new Set(['10.244.0.0/24', '10.244.1.0/24']));
    expect((await nodes.get('a')).spec?.podCIDRs).toEqual([a]);
    const k = await env.kubectl('get', 'node', 'b', '-o', 'jsonpath={.spec.podCIDR}');
    expect(k.stdout).toBe(b);
  });

  it('reports CIDRNotAvailable when the range is exhausted, and hands out a released CIDR', async () => {
    await nodes.create({ metadata: { name: 'c' } });
    await until('CIDRNotAvailable event', async () => {
      const list = await env.client.resource<Event>(EVENTS).list({});
      return list.items.find((e) => e.reason === 'CIDRNotAvailable' && e.regarding?.name === 'c');
    });
    const freed = await cidrOf('a');
    await nodes.delete('a');
    expect(await cidrOf('c')).toBe(freed);
  });
});

describe('node-ipam flags', () => {
  function config(flags: string[]) {
    const parsed = parseControllerManagerArgs(flags);
    if (parsed.help) throw new Error('help');
    return parsed.options.config;
  }

  it('refuses malformed or missing CIDRs and masks that do not fit', () => {
    expect(() => cidrSetsFromConfig(config(['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/33']))).toThrow(
      /invalid CIDR address/,
    );
    expect(() => cidrSetsFromConfig(config(['--allocate-node-cidrs', '--cluster-cidr=banana']))).toThrow(
      /invalid CIDR address/,
    );
    expect(() => cidrSetsFromConfig(config(['--allocate-node-cidrs']))).toThrow(/--cluster-cidr must be set/);
    expect(() =>
      cidrSetsFromConfig(
        config(['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/24', '--node-cidr-mask-size=16']),
      ),
    ).toThrow(/must be less than or equal/);
    const [v4, v6] = cidrSetsFromConfig(
      config(['--allocate-node-cidrs', '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56']),
    );
    expect(v4?.nodeMaskSize).toBe(24);
    expect(v6?.nodeMaskSize).toBe(64);
    expect(v6?.allocateNext()).toBe('fd00:10:244::/64');
    expect(v6?.allocateNext()).toBe('fd00:10:244:1::/64');
  });

  it('a CIDR set hands out, occupies and releases', () => {
    const set = new CidrSet(parseNetwork('10.0.0.0/30'), 31);
    expect(set.occupy('10.0.0.0/31')).toBe(true);
    expect(set.allocateNext()).toBe('10.0.0.2/31');
    expect(set.allocateNext()).toBeUndefined();
    set.release('10.0.0.0/31');
    expect(set.allocateNext()).toBe('10.0.0.0/31');
    expect(set.occupy('192.168.0.0/31')).toBe(false);
  });

  it('a malformed --cluster-cidr fails the controller at start, not the manager', async () => {
    const bad = await startInfraEnv(
      [nodeIpamController],
      ['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/33'],
    );
    try {
      await until('the start error', async () =>
        bad.errors.some((e) => e.includes('invalid CIDR address')) ? true : undefined,
      );
      expect(bad.manager.state()).not.toBe('stopped');
    } finally {
      await bad.close();
    }
  }, 60_000);
});
