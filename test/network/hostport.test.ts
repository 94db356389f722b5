/**
 * `hostPort` on real containers: one node (private containerd, in-process Capstan, the agent with
 * its CNI conflist of bridge + host-local + portmap, bridge `net5hp0`, pod CIDR 10.244.165.0/24).
 * The agent passes a container's hostPort to CRI as a port mapping of the sandbox, as kubelet
 * does; containerd hands it to portmap (capability `portMappings`), which DNATs the node's
 * addresses at that port to the pod. The test reaches the pod on the bridge's address (the node
 * address the agent made) and on loopback (portmap's `snat`, on by default, routes localhost),
 * then checks that deleting the pod removes its rules and that stopping the node leaves the `nat`
 * table's portmap chains as they were before.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portmapChainsPresent } from '../../src/cluster/containerd-teardown.js';
import { requireContainerd } from '../support/containerd.js';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';

const run = promisify(execFile);
const enabled = requireContainerd();

const POD_CIDR = '10.244.165.0/24';
const GATEWAY = '10.244.165.1';
const HOST_PORT = 38765;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const curl = (url: string): Promise<string> =>
  run('curl', ['-s', '-m', '3', url]).then(
    (r) => r.stdout.trim(),
    (err: { code?: number }) => `error ${String(err.code)}`,
  );
/** The nat table's rules (iptables-nft, the portmap plugin's backend) that name the test's hostPort. */
const hostPortRules = async (): Promise<string[]> =>
  (await run('iptables', ['-w', '-t', 'nat', '-S'])).stdout
    .split('\n')
    .filter((l) => l.includes(`--dport ${HOST_PORT}`));

async function eventually(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${ms} ms`);
    await sleep(300);
  }
}

describe.runIf(enabled)('hostPort through the portmap CNI plugin', () => {
  let node: AgentNode | undefined;
  let chainsBefore = false;

  beforeAll(async () => {
    chainsBefore = await portmapChainsPresent();
    node = await startAgentNode({ node: 'net5-hostport', podCIDR: POD_CIDR, bridge: 'net5hp0' });
    await node.applyPod('web', {
      command: [
        'sh',
        '-c',
        'mkdir -p /www && echo hostport-web > /www/index.html && exec httpd -f -p 8080 -h /www',
      ],
      ports: [{ name: 'http', containerPort: 8080, hostPort: HOST_PORT, protocol: 'TCP' }],
    });
    await node.running('web');
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
    // The plugin's shared chains go with the node when this test brought them.
    if (!chainsBefore) expect(await portmapChainsPresent()).toBe(false);
    expect(await hostPortRules()).toEqual([]);
  }, 60_000);

  it('reaches the pod through its hostPort on the node’s bridge address and on loopback', async () => {
    await eventually('the hostPort on the bridge address', async () => {
      return (await curl(`http://${GATEWAY}:${HOST_PORT}/`)) === 'hostport-web';
    });
    expect(await curl(`http://127.0.0.1:${HOST_PORT}/`)).toBe('hostport-web');
    // portmap's own DNAT rule for the pod's port mapping is what carried it.
    const podIP = await node!.kubectl('get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}');
    expect((await hostPortRules()).some((l) => l.includes(`--to-destination ${podIP}:8080`))).toBe(true);
  });

  it('removes the pod’s hostPort rules when the pod goes', async () => {
    await node!.kubectl('delete', 'pod', 'web', '--wait=true', '--timeout=60s');
    await eventually('the hostPort rules removed', async () => (await hostPortRules()).length === 0);
    expect(await curl(`http://${GATEWAY}:${HOST_PORT}/`)).toMatch(/^error/);
  });
});
