/**
 * Removing everything a Capstan containerd ran, and only that: `capstan cluster --reset` and the
 * tests' clean-up. In order:
 * 1. with containerd serving: every pod sandbox stopped and removed through CRI (the CNI DEL
 *    releases its address and veth), then every task killed and every container removed in every
 *    namespace through `ctr`;
 * 2. containerd stopped (by the caller);
 * 3. any shim still serving this containerd's socket killed (their command lines name it);
 * 4. every mount under the given directories unmounted, deepest first (network namespaces under
 *    containerd's state dir, the pods' tmpfs volumes under the agent's root dir);
 * 5. the pods' cgroup tree under the agent's cgroup root removed in every hierarchy;
 * 6. libcni's cached results of this network (`/var/lib/cni/results/<network>-*`).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriClient } from '../agent/cri/client.js';

const run = promisify(execFile);
const CGROUP_ROOT = '/sys/fs/cgroup';
const CNI_RESULTS = '/var/lib/cni/results';

/** Collects the failures of best-effort steps, so one failure does not stop the rest. */
export class CleanupErrors {
  readonly #errors: string[] = [];

  /** Runs `fn`, recording its failure under `what`. */
  async attempt(what: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** @throws Error listing every recorded failure, if any. */
  throwIfAny(what: string): void {
    if (this.#errors.length > 0) throw new Error(`${what} left work undone:\n${this.#errors.join('\n')}`);
  }
}

/**
 * Step 1: stops and removes every CRI sandbox, then kills every task and removes every container
 * in every containerd namespace. `ctr` runs `ctr -a <socket> ...args`.
 */
export async function removeWorkloads(
  socket: string,
  ctr: (...args: string[]) => Promise<string>,
  errors: CleanupErrors,
): Promise<void> {
  const cri = new CriClient(`unix://${socket}`);
  await errors.attempt('CRI sandboxes', async () => {
    for (const sb of await cri.listPodSandbox()) {
      await cri.stopPodSandbox(sb.id);
      await cri.removePodSandbox(sb.id);
    }
  });
  cri.close();
  const lines = (text: string): string[] => text.split('\n').filter(Boolean);
  await errors.attempt('ctr tasks and containers', async () => {
    for (const ns of lines(await ctr('namespaces', 'ls', '-q'))) {
      for (const task of lines(await ctr('-n', ns, 'tasks', 'ls', '-q'))) {
        await ctr('-n', ns, 'tasks', 'kill', '-s', 'SIGKILL', task).catch(() => undefined);
        await ctr('-n', ns, 'tasks', 'rm', '-f', task).catch(() => undefined);
      }
      for (const c of lines(await ctr('-n', ns, 'containers', 'ls', '-q'))) {
        await ctr('-n', ns, 'containers', 'rm', c);
      }
    }
  });
}

/** Processes (other than this one) whose command line mentions `needle`. */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Mount points at or under `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts (lazily) every mount point under `dir`, deepest first. */
export async function unmountUnder(dir: string, errors?: CleanupErrors): Promise<void> {
  for (const point of mountsUnder(dir)) {
    const umount = (): Promise<unknown> => run('umount', ['-l', point]);
    if (errors) await errors.attempt(`umount ${point}`, umount);
    else await umount().catch(() => undefined);
  }
}

/** Removes a cgroup directory tree (relative to each hierarchy) bottom-up in every hierarchy. */
export async function removeCgroupTree(relative: string): Promise<void> {
  if (relative === '' || relative === '/') throw new Error('refusing to remove the root cgroup');
  for (const hierarchy of readdirSync(CGROUP_ROOT)) {
    const top = join(CGROUP_ROOT, hierarchy, relative);
    if (!existsSync(top)) continue;
    const remove = async (path: string): Promise<void> => {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        if (entry.isDirectory()) await remove(join(path, entry.name));
      }
      await rmdir(path).catch(() => undefined);
    };
    await remove(top);
  }
}

/** What {@link teardownLeftovers} removes. */
export interface LeftoverScope {
  /** The containerd socket whose shims are killed. */
  readonly socket: string;
  /** Directories under which every mount is unmounted. */
  readonly mountDirs: readonly string[];
  /** The cgroup parent of the pods (relative to each hierarchy), if any. */
  readonly cgroupParent?: string;
  /** The CNI network whose cached results are removed, if any. */
  readonly cniNetworkName?: string;
}

/**
 * Steps 3 to 6 (see the module comment), after containerd stopped. Records failures in `errors`.
 */
export async function teardownLeftovers(scope: LeftoverScope, errors: CleanupErrors): Promise<void> {
  for (const pid of processesMentioning(scope.socket)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  for (const dir of scope.mountDirs) await unmountUnder(dir, errors);
  const parent = scope.cgroupParent;
  if (parent !== undefined) await errors.attempt('cgroups', () => removeCgroupTree(parent));
  const network = scope.cniNetworkName;
  if (network !== undefined) {
    await errors.attempt('CNI results', async () => {
      if (!existsSync(CNI_RESULTS)) return;
      for (const f of await readdir(CNI_RESULTS))
        if (f.startsWith(`${network}-`)) await rm(join(CNI_RESULTS, f), { force: true });
    });
  }
}

/**
 * Deletes the bridge `name` unless interfaces are still attached to it (pods of another
 * containerd on the same bridge): the last one out removes it.
 */
export async function removeBridgeIfUnused(name: string): Promise<void> {
  const attached = await run('ip', ['-o', 'link', 'show', 'master', name]).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  if (attached === '') await run('ip', ['link', 'del', name]).catch(() => undefined);
}

/** The top-level chains the CNI portmap plugin makes in the `nat` table (its per-pod chains are `CNI-DN-…`). */
export const PORTMAP_CHAINS = ['CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-SETMARK', 'CNI-HOSTPORT-MASQ'] as const;

/** The `nat` table's rules as `iptables -S` prints them, or [] when iptables cannot list it. */
async function natRules(): Promise<string[]> {
  return run('iptables', ['-w', '-t', 'nat', '-S']).then(
    (r) => r.stdout.split('\n').filter((l) => l !== ''),
    () => [],
  );
}

/** Whether the portmap plugin's top-level chains exist (hostPorts were ever set up on this host). */
export async function portmapChainsPresent(): Promise<boolean> {
  return (await natRules()).some((l) => l === `-N ${PORTMAP_CHAINS[0]}`);
}

/** Splits an `iptables -S` line into arguments (double quotes group, as iptables prints comments). */
function iptablesArgs(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/**
 * Removes the portmap plugin's top-level chains and the rules jumping to them, when no pod's
 * hostPort chain (`CNI-DN-…`) is left in them: CNI DEL removes a pod's own chain and rules, but
 * leaves the shared chains for good. A caller that saw them absent before its pods ran (see
 * {@link portmapChainsPresent}) calls this after, so a test cluster leaves the `nat` table as it
 * found it; while another runtime's pod still has a hostPort, nothing is touched.
 */
export async function removePortmapChainsIfUnused(): Promise<void> {
  const rules = await natRules();
  if (!rules.some((l) => l === `-N ${PORTMAP_CHAINS[0]}`)) return;
  if (rules.some((l) => l.startsWith('-N CNI-DN-'))) return;
  const ours = new Set<string>(PORTMAP_CHAINS);
  for (const line of rules) {
    const args = iptablesArgs(line);
    const target = args[args.indexOf('-j') + 1];
    if (args[0] !== '-A' || ours.has(args[1] ?? '') || target === undefined || !ours.has(target)) continue;
    await run('iptables', ['-w', '-t', 'nat', '-D', ...args.slice(1)]);
  }
  for (const chain of PORTMAP_CHAINS)
    await run('iptables', ['-w', '-t', 'nat', '-F', chain]).catch(() => undefined);
  for (const chain of PORTMAP_CHAINS)
    await run('iptables', ['-w', '-t', 'nat', '-X', chain]).catch(() => undefined);
}

/**
 * The nftables tables iptables (its nft backend) makes for the `nat` table: the portmap plugin's
 * iptables and ip6tables calls create them, its DEL too, even for a pod with no hostPort.
 */
export const IPTABLES_NAT_TABLES = ['ip nat', 'ip6 nat'] as const;

/** Which of {@link IPTABLES_NAT_TABLES} exist now (none when nft cannot list them). */
export async function natTablesPresent(): Promise<string[]> {
  const listed: string[] = await run('nft', ['list', 'tables']).then(
    (r) => r.stdout.split('\n').map((l) => l.trim()),
    () => [],
  );
  return IPTABLES_NAT_TABLES.filter((t) => listed.includes(`table ${t}`));
}

/** iptables' own chains of the `nat` table, which it makes with the table. */
const NAT_BASE_CHAINS = new Set(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING']);

/**
 * Deletes each of {@link IPTABLES_NAT_TABLES} that was absent before (`before`, from
 * {@link natTablesPresent}) and now holds nothing but iptables' empty base chains: what iptables
 * made for the portmap plugin on a host that had no such table. A table with a rule or a chain of
 * anyone's is left alone. Call it after {@link removePortmapChainsIfUnused}.
 */
export async function removeNatTablesIfUnused(before: readonly string[]): Promise<void> {
  for (const table of IPTABLES_NAT_TABLES) {
    if (before.includes(table)) continue;
    const [family, name] = table.split(' ') as [string, string];
    const listing = await run('nft', ['list', 'table', family, name]).then(
      (r) => r.stdout,
      () => undefined,
    );
    if (listing === undefined || !onlyEmptyBaseChains(listing)) continue;
    await run('nft', ['delete', 'table', family, name]);
  }
}

/** Whether an `nft list table` listing holds only empty base chains (their type and policy lines). */
export function onlyEmptyBaseChains(listing: string): boolean {
  for (const raw of listing.split('\n')) {
    const line = raw.trim();
    if (line === '' || line === '}' || /^table \S+ \S+ \{$/.test(line)) continue;
    const chain = /^chain (\S+) \{$/.exec(line);
    if (chain !== null) {
      if (!NAT_BASE_CHAINS.has(chain[1] ?? '')) return false;
      continue;
    }
    if (/^type nat hook \S+ priority [^;]+; policy accept;$/.test(line)) continue;
    return false; // a rule, a set, a map, a non-default policy: someone's
  }
  return true;
}
