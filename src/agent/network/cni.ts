/**
 * The pod network's CNI configuration, written by the agent from the node's pod CIDR: a bridge
 * (`capstan0` by default) acting as the pods' gateway, host-local addresses from the CIDR (state
 * under the agent's root dir), and portmap for hostPorts. `ipMasq` stays off, so the plugins add
 * no iptables rules; the runtime adds the loopback interface itself.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The conf file the agent owns in the CNI conf dir. */
export const CNI_CONF_FILE = '10-capstan.conflist';
export const DEFAULT_BRIDGE = 'capstan0';

/** A bridge + host-local + portmap conflist. */
export function bridgeConflist(name: string, bridge: string, subnet: string, dataDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name,
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/**
 * Writes (atomically, only when it changes) the agent's conflist for `podCIDR` into `confDir`.
 * Answers true when the file changed.
 */
export async function writeCniConfig(opts: {
  confDir: string;
  podCIDR: string;
  bridge: string;
  dataDir: string;
  name?: string;
}): Promise<boolean> {
  const text = bridgeConflist(opts.name ?? 'capstan', opts.bridge, opts.podCIDR, opts.dataDir);
  const path = join(opts.confDir, CNI_CONF_FILE);
  const old = await readFile(path, 'utf8').catch(() => undefined);
  if (old === text) return false;
  await mkdir(opts.confDir, { recursive: true });
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
  return true;
}
