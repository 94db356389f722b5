/**
 * `capstan cluster --reset` and the portmap plugin's shared chains: inside a node network
 * namespace this test creates, Debian's portmap plugin (CNI ADD, as containerd calls it for a
 * pod with a hostPort) makes its shared `CNI-HOSTPORT-*` chains and the pod's own `CNI-DN-…`
 * chain in iptables' `nat` table; a reset (the bundle, run in that namespace on an empty data
 * dir) leaves everything while the pod's chain is there, and once CNI DEL has removed it, removes
 * the shared chains and the rules jumping to them, and only them. Needs root, `ip`, iptables,
 * the CNI plugins and the bundle (`npm run build`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsUnavailable } from '../support/netns.js';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUNDLE = join(ROOT, 'dist/bundle/capstan.js');
const PORTMAP = '/usr/lib/cni/portmap';

const missing =
  netnsUnavailable() ??
  (existsSync(PORTMAP) ? undefined : `${PORTMAP} is missing (containernetworking-plugins)`) ??
  (existsSync(BUNDLE) ? undefined : `${BUNDLE} is missing (npm run build)`);
if (missing !== undefined && process.env.CI === 'true')
  throw new Error(`reset portmap tests cannot run: ${missing}`);

describe.skipIf(missing !== undefined)('capstan cluster --reset and portmap’s shared chains', () => {
  const prefix = `net6r${randomBytes(3).toString('hex')}`;
  const node = `${prefix}-node`;
  const pod = `${prefix}-pod`;
  let dataDir: string;

  /** The node namespace's `nat` table as `iptables -S` prints it. */
  const nat = (): string[] =>
    execFileSync('ip', ['netns', 'exec', node, 'iptables', '-w', '-t', 'nat', '-S'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '');
  /** portmap's CNI `command` (ADD or DEL) for the pod, run in the node namespace as containerd runs it. */
  const portmap = (command: 'ADD' | 'DEL'): void => {
    const config = {
      cniVersion: '1.0.0',
      name: 'net6-reset',
      type: 'portmap',
      capabilities: { portMappings: true },
      runtimeConfig: { portMappings: [{ hostPort: 38081, containerPort: 80, protocol: 'tcp' }] },
      prevResult: {
        cniVersion: '1.0.0',
        interfaces: [{ name: 'eth0', sandbox: `/run/netns/${pod}` }],
        ips: [{ address: '10.9.0.2/24', interface: 0 }],
      },
    };
    execFileSync(
      'ip',
      [
        'netns',
        'exec',
        node,
        'env',
        `CNI_COMMAND=${command}`,
        'CNI_CONTAINERID=net6-reset-test',
        `CNI_NETNS=/run/netns/${pod}`,
        'CNI_IFNAME=eth0',
        `CNI_PATH=${dirname(PORTMAP)}`,
        PORTMAP,
      ],
      { input: JSON.stringify(config), encoding: 'utf8' },
    );
  };
  const reset = async (): Promise<string> => {
    const { stdout } = await run('ip', [
      'netns',
      'exec',
      node,
      process.execPath,
      BUNDLE,
      'cluster',
      '--reset',
      `--data-dir=${dataDir}`,
      `--cert-dir=${dataDir}/pki`,
    ]);
    return stdout;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'capstan-reset-portmap-'));
    execFileSync('ip', ['netns', 'add', node]);
    execFileSync('ip', ['netns', 'add', pod]);
    execFileSync('ip', [
      'link',
      'add',
      'net6r0',
      'netns',
      node,
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      pod,
    ]);
    execFileSync('ip', ['-n', node, 'addr', 'add', '10.9.0.1/24', 'dev', 'net6r0']);
    execFileSync('ip', ['-n', pod, 'addr', 'add', '10.9.0.2/24', 'dev', 'eth0']);
    for (const [ns, link] of [
      [node, 'net6r0'],
      [pod, 'eth0'],
      [node, 'lo'],
    ] as const)
      execFileSync('ip', ['-n', ns, 'link', 'set', link, 'up']);
  }, 60_000);

  afterAll(async () => {
    for (const ns of [pod, node]) execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves the chains while a pod’s hostPort chain is in them, removes them once it is gone', async () => {
    // Someone else's rule in the same table: no reset may touch it.
    execFileSync('ip', [
      'netns',
      'exec',
      node,
      'iptables',
      '-w',
      '-t',
      'nat',
      '-A',
      'POSTROUTING',
      '-s',
      '10.9.0.0/24',
      '-j',
      'MASQUERADE',
    ]);
    const before = nat();
    portmap('ADD');
    const withPod = nat();
    expect(withPod).toContain('-N CNI-HOSTPORT-DNAT');
    expect(withPod).toContain('-N CNI-HOSTPORT-MASQ');
    expect(withPod.some((l) => l.startsWith('-N CNI-DN-'))).toBe(true);
    expect(withPod.some((l) => l.startsWith('-A PREROUTING') && l.includes('-j CNI-HOSTPORT-DNAT'))).toBe(
      true,
    );

    expect(await reset()).toContain('reset: removed');
    expect(nat()).toEqual(withPod);

    portmap('DEL');
    const afterDel = nat();
    expect(afterDel.some((l) => l.startsWith('-N CNI-DN-'))).toBe(false);
    expect(afterDel).toContain('-N CNI-HOSTPORT-DNAT'); // CNI DEL leaves the shared chains

    expect(await reset()).toContain('reset: removed');
    expect(nat()).toEqual(before);
    expect(nat()).toContain('-A POSTROUTING -s 10.9.0.0/24 -j MASQUERADE');
  }, 120_000);
});
