/**
 * The pod bridge, made by the agent ahead of the CNI bridge plugin when the agent serves pods
 * from the host (cluster DNS): the plugin would make the same bridge with the same gateway
 * address on the first pod's start, but the DNS server must listen on that address before any
 * pod asks it. The plugin accepts a bridge that already exists with its gateway address.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The gateway (first host address) of an IPv4 CIDR, with the CIDR's prefix: `10.244.0.1/24`. */
export function gatewayOf(cidr: string): { address: string; prefix: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (m === null) throw new Error(`pod CIDR ${cidr} is not an IPv4 CIDR`);
  const prefix = Number(m[5]);
  const octets = m.slice(1, 5).map(Number);
  if (prefix > 30 || octets.some((o) => o > 255)) throw new Error(`pod CIDR ${cidr} has no room for pods`);
  const ip = octets.reduce((a, o) => a * 256 + o, 0);
  const network = prefix === 0 ? 0 : ip - (ip % 2 ** (32 - prefix));
  const gw = network + 1;
  return { address: [24, 16, 8, 0].map((s) => Math.floor(gw / 2 ** s) % 256).join('.'), prefix };
}

/** Makes bridge `name` (if missing), gives it the gateway address of `podCIDR`, and sets it up. */
export async function ensureBridge(name: string, podCIDR: string): Promise<string> {
  const { address, prefix } = gatewayOf(podCIDR);
  const exists = await run('ip', ['link', 'show', 'dev', name]).then(
    () => true,
    () => false,
  );
  try {
    if (!exists) await run('ip', ['link', 'add', 'name', name, 'type', 'bridge']);
    const { stdout } = await run('ip', ['-o', '-4', 'addr', 'show', 'dev', name]);
    if (!stdout.includes(` ${address}/${String(prefix)} `))
      await run('ip', ['addr', 'add', `${address}/${String(prefix)}`, 'dev', name]);
    await run('ip', ['link', 'set', name, 'up']);
  } catch (err) {
    throw new Error(
      `setting up the pod bridge ${name} (${address}/${String(prefix)}): ${(err as Error).message}`,
    );
  }
  return address;
}
