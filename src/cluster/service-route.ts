/**
 * The blackhole route for the Service range. Service IPs are virtual: traffic to them that no
 * proxy rewrote would otherwise leave the machine through the default route. While Capstan's pods
 * run the route must be there, so `capstan cluster` adds it when absent and leaves it across
 * restarts (the pods keep running); `capstan cluster --reset` removes it only when Capstan added it
 * (the node state file remembers that).
 */
import { execFile } from 'node:child_process';
import { isIP } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

function family(cidr: string): '-4' | '-6' {
  return isIP(cidr.split('/')[0] ?? '') === 6 ? '-6' : '-4';
}

/** True when a blackhole route for exactly `cidr` exists. */
export async function hasBlackhole(cidr: string): Promise<boolean> {
  const { stdout } = await run('ip', [family(cidr), 'route', 'show', 'type', 'blackhole', 'exact', cidr]);
  return stdout.trim() !== '';
}

/**
 * Adds the blackhole route for `cidr` unless one exists. Resolves true when this call added it.
 * @throws Error with `ip`'s message when the route is absent and cannot be added.
 */
export async function ensureBlackhole(cidr: string): Promise<boolean> {
  if (await hasBlackhole(cidr)) return false;
  try {
    await run('ip', [family(cidr), 'route', 'add', 'blackhole', cidr]);
    return true;
  } catch (err) {
    // Another process may have added it meanwhile.
    if (await hasBlackhole(cidr)) return false;
    throw new Error(
      `cannot add the blackhole route for the Service range ${cidr}: ${(err as Error).message}`,
    );
  }
}

/** Removes the blackhole route for `cidr` (nothing when absent). */
export async function removeBlackhole(cidr: string): Promise<void> {
  if (await hasBlackhole(cidr)) await run('ip', [family(cidr), 'route', 'del', 'blackhole', cidr]);
}
