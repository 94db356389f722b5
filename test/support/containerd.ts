/**
 * A throwaway containerd for the node agent's tests: a child process with its own generated
 * config (its own root, state and gRPC socket under a temporary directory, the CRI plugin with
 * `restrict_oom_score_adj = true`, cgroupfs, overlayfs, CNI plugins from /usr/lib/cni with a conf
 * dir of its own, and the locally built pause image as the sandbox image), with the test images
 * of `fixtures/images` built and imported into the `k8s.io` namespace.
 *
 * `stop()` leaves nothing behind: it stops and removes every sandbox through CRI, kills and
 * deletes every task and container in every namespace through `ctr`, stops containerd, kills any
 * shim still serving its socket, unmounts everything under its directory (network namespaces
 * included), removes the cgroups under its cgroup parent, the CNI results it caused and the
 * directory itself.
 *
 * Needs root, containerd, ctr, runc, busybox-static and the CNI plugins: {@link containerdMissing}
 * says what is absent; {@link requireContainerd} fails under `CI=true` and skips (loudly) otherwise.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriClient } from '../../src/agent/cri/client.js';
import { bridgeConflist } from '../../src/agent/network/cni.js';
import { buildImages, type BuiltImage } from '../../tools/build-images.js';

const run = promisify(execFile);

export const CONTAINERD = process.env['CAPSTAN_CONTAINERD'] ?? '/usr/bin/containerd';
export const CTR = '/usr/bin/ctr';
export const CNI_BIN_DIR = '/usr/lib/cni';
export const PAUSE_IMAGE = 'docker.io/capstan/pause:3.10';
export const BUSYBOX_IMAGE = 'docker.io/capstan/busybox:1';
const CGROUP_ROOT = '/sys/fs/cgroup';

/** What this machine lacks to run containers (empty when everything is there). */
export function containerdMissing(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root');
  for (const bin of [
    CONTAINERD,
    CTR,
    '/usr/sbin/runc',
    '/bin/busybox',
    join(CNI_BIN_DIR, 'bridge'),
    join(CNI_BIN_DIR, 'host-local'),
  ]) {
    if (!existsSync(bin)) missing.push(bin);
  }
  return missing;
}

/**
 * True when the containerd suites should run. Under `CI=true` a missing tool throws (the suite
 * fails, never skips); elsewhere it warns on stderr and answers false.
 */
export function requireContainerd(): boolean {
  const missing = containerdMissing();
  if (missing.length === 0) return true;
  const msg = `containerd tests need ${missing.join(', ')} (install containerd runc containernetworking-plugins busybox-static)`;
  if (process.env['CI'] === 'true') throw new Error(msg);
  console.warn(`SKIPPING: ${msg}`);
  return false;
}

/** A running containerd. */
export interface Containerd {
  /** Temporary directory holding everything of this instance. */
  readonly dir: string;
  /** `unix://...` CRI endpoint. */
  readonly endpoint: string;
  /** Socket path (for `ctr -a`). */
  readonly socket: string;
  /** The CNI conf dir the CRI plugin reads. */
  readonly cniConfDir: string;
  /** A cgroup parent (cgroupfs path) under which tests put their pods; removed by stop(). */
  readonly cgroupParent: string;
  readonly images: BuiltImage[];
  /** Runs `ctr -a <socket> ...args` and answers stdout. */
  ctr(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface ContainerdOptions {
  /** Write a bridge CNI network of this name and subnet (a /24) into the conf dir. */
  readonly cni?: { readonly bridge: string; readonly subnet: string; readonly name?: string };
}

function configToml(dir: string, socket: string, cniConfDir: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
oom_score = 0

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"

[${cri}]
  restrict_oom_score_adj = true
  sandbox_image = "${PAUSE_IMAGE}"
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true

  [${cri}.cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${cniConfDir}"
    max_conf_num = 1

  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [${cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
`;
}

async function waitForSocket(socket: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`containerd exited with ${child.exitCode}:\n${log()}`);
    if (existsSync(socket)) {
      const cri = new CriClient(`unix://${socket}`);
      try {
        await cri.version();
        return;
      } catch {
        // not serving CRI yet
      } finally {
        cri.close();
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`containerd did not serve CRI on ${socket} within 30 s:\n${log()}`);
}

/** Processes whose command line mentions `needle` (the shims of this instance). */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle) && Number(entry) !== process.pid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Mount points under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/**
 * Unmounts every mount point under `dir`, deepest first: the tmpfs volumes (src/agent/volumes)
 * of pods an agent left running when a suite stopped it. Then `dir` can be removed.
 */
export async function unmountUnder(dir: string): Promise<void> {
  for (const point of mountsUnder(dir)) await run('umount', [point]).catch(() => undefined);
}

/** Removes a cgroup directory tree bottom-up in every hierarchy. */
export async function removeCgroupTree(relative: string): Promise<void> {
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

/** Starts containerd, builds and imports the test images. */
export async function startContainerd(opts: ContainerdOptions = {}): Promise<Containerd> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-ctrd-'));
  const socket = join(dir, 'containerd.sock');
  const cniConfDir = join(dir, 'cni/net.d');
  const cgroupParent = `/${dir.split('/').pop() ?? 'capstan-ctrd'}`;
  await mkdir(cniConfDir, { recursive: true });
  const configPath = join(dir, 'config.toml');
  await writeFile(configPath, configToml(dir, socket, cniConfDir));
  const cniName = opts.cni?.name ?? `capstan-test-${dir.slice(-6).toLowerCase()}`;
  if (opts.cni) {
    await writeFile(
      join(cniConfDir, '10-capstan.conflist'),
      bridgeConflist(cniName, opts.cni.bridge, opts.cni.subnet, join(dir, 'cni/ipam')),
    );
  }
  let output = '';
  const child = spawn(CONTAINERD, ['--config', configPath, '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const onExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  const ctr = async (...args: string[]): Promise<string> => (await run(CTR, ['-a', socket, ...args])).stdout;

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const errors: string[] = [];
    const attempt = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        errors.push(`${what}: ${(err as Error).message}`);
      }
    };
    if (child.exitCode === null) {
      const cri = new CriClient(`unix://${socket}`);
      await attempt('CRI sandboxes', async () => {
        for (const sb of await cri.listPodSandbox()) {
          await cri.stopPodSandbox(sb.id);
          await cri.removePodSandbox(sb.id);
        }
      });
      cri.close();
      await attempt('ctr tasks and containers', async () => {
        for (const ns of (await ctr('namespaces', 'ls', '-q')).split('\n').filter(Boolean)) {
          for (const task of (await ctr('-n', ns, 'tasks', 'ls', '-q')).split('\n').filter(Boolean)) {
            await ctr('-n', ns, 'tasks', 'kill', '-s', 'SIGKILL', task).catch(() => undefined);
            await ctr('-n', ns, 'tasks', 'rm', '-f', task).catch(() => undefined);
          }
          for (const c of (await ctr('-n', ns, 'containers', 'ls', '-q')).split('\n').filter(Boolean)) {
            await ctr('-n', ns, 'containers', 'rm', c);
          }
        }
      });
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        if (child.exitCode !== null) resolve();
      });
    }
    process.removeListener('exit', onExit);
    for (const pid of processesMentioning(socket)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    for (const point of mountsUnder(dir))
      await attempt(`umount ${point}`, () => run('umount', ['-l', point]));
    await attempt('cgroups', () => removeCgroupTree(cgroupParent));
    await attempt('CNI results', async () => {
      const results = '/var/lib/cni/results';
      if (!existsSync(results)) return;
      for (const f of await readdir(results))
        if (f.startsWith(`${cniName}-`)) await rm(join(results, f), { force: true });
    });
    if (opts.cni) await run('ip', ['link', 'del', opts.cni.bridge]).catch(() => undefined);
    await attempt('directory', () => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
    if (errors.length > 0) throw new Error(`containerd clean-up left work undone:\n${errors.join('\n')}`);
  };

  try {
    await waitForSocket(socket, child, () => output);
    const images = await buildImages(join(dir, 'images'));
    for (const img of images) await ctr('-n', 'k8s.io', 'images', 'import', img.path);
    return { dir, endpoint: `unix://${socket}`, socket, cniConfDir, cgroupParent, images, ctr, stop };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/**
 * Deletes the agent's bridge `name` unless interfaces of another suite's pods are still attached
 * to it (suites run in parallel share it: the last one out removes it).
 */
export async function removeBridgeIfUnused(name: string): Promise<void> {
  const attached = await run('ip', ['-o', 'link', 'show', 'master', name]).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  if (attached === '') await run('ip', ['link', 'del', name]).catch(() => undefined);
}
