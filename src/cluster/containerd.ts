/**
 * A containerd of Capstan's own, run as a child process: its generated config gives it its own
 * root, state and gRPC socket under one directory (`<data-dir>/containerd` for `capstan cluster`,
 * a temporary directory for tests), so it never collides with a system containerd.
 *
 * The config follows the machine facts of docs (node-setup): the CRI plugin with
 * `restrict_oom_score_adj = true` (root may not lower `oom_score_adj` here), cgroupfs, overlayfs,
 * the CNI plugins of `/usr/lib/cni` with a conf dir of its own, and the locally built pause image
 * as the sandbox image. The CNI conf dir's file is written by the node agent from its pod CIDR.
 *
 * {@link ContainerdProcess.stop} stops containerd alone: the shims and their containers keep
 * running, and the next containerd on the same directory reconnects to them (as a restarted
 * system containerd does). Removing what it ran is {@link teardownContainerd}'s job
 * (`containerd-teardown.ts`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CriClient } from '../agent/cri/client.js';
import { PAUSE_IMAGE } from './dev-images.js';

const run = promisify(execFile);

/** The containerd binary (override with `CAPSTAN_CONTAINERD`). */
export const CONTAINERD_BIN = process.env['CAPSTAN_CONTAINERD'] ?? '/usr/bin/containerd';
/** containerd's own client, used for image import and clean-up. */
export const CTR_BIN = '/usr/bin/ctr';
export const RUNC_BIN = '/usr/sbin/runc';
export const CNI_BIN_DIR = '/usr/lib/cni';
/** The Debian packages that give a real node (busybox-static builds the development images). */
export const INSTALL_COMMAND = 'apt-get install containerd runc containernetworking-plugins busybox-static';
/** How long containerd may take to serve CRI. */
const START_TIMEOUT_MS = 30_000;
/** How long a stop waits for containerd before killing it. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * What this machine lacks to run real containers (empty when nothing): root, and the binaries of
 * containerd, ctr, runc, busybox-static and the bridge and host-local CNI plugins.
 */
export function containerdMissing(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root');
  for (const bin of [
    CONTAINERD_BIN,
    CTR_BIN,
    RUNC_BIN,
    '/bin/busybox',
    join(CNI_BIN_DIR, 'bridge'),
    join(CNI_BIN_DIR, 'host-local'),
  ]) {
    if (!existsSync(bin)) missing.push(bin);
  }
  return missing;
}

/** The files of a containerd directory. */
export interface ContainerdLayout {
  readonly dir: string;
  readonly configPath: string;
  /** The gRPC socket (`ctr -a`); the CRI endpoint is `unix://` + this. */
  readonly socket: string;
  /** The CNI conf dir the CRI plugin reads (the agent writes its conflist there). */
  readonly cniConfDir: string;
  /** containerd's pid while it runs. */
  readonly pidFile: string;
  /** containerd's stdout and stderr. */
  readonly logFile: string;
}

/** The layout under `dir`. */
export function containerdLayout(dir: string): ContainerdLayout {
  return {
    dir,
    configPath: join(dir, 'config.toml'),
    socket: join(dir, 'containerd.sock'),
    cniConfDir: join(dir, 'cni/net.d'),
    pidFile: join(dir, 'containerd.pid'),
    logFile: join(dir, 'containerd.log'),
  };
}

/** The config file for `layout` (containerd config version 2, containerd 1.6). */
export function containerdConfig(layout: ContainerdLayout, sandboxImage: string = PAUSE_IMAGE): string {
  const { dir, socket } = layout;
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
  sandbox_image = "${sandboxImage}"
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true

  [${cri}.cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${layout.cniConfDir}"
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

/** True when something serves CRI on `socket`. */
export async function servesCri(socket: string): Promise<boolean> {
  if (!existsSync(socket)) return false;
  const cri = new CriClient(`unix://${socket}`);
  try {
    await cri.version();
    return true;
  } catch {
    return false;
  } finally {
    cri.close();
  }
}

/**
 * The pid of a containerd started on `layout` that still runs (its pid file names a live process
 * whose command line names this layout's config), else undefined.
 */
export function runningContainerdPid(layout: ContainerdLayout): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(layout.pidFile, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes(layout.configPath) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when a connection to the Unix socket `path` is accepted (cheaper than a gRPC channel). */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(-4_000);
  } catch {
    return '';
  }
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** Options of {@link ContainerdProcess.start}. */
export interface ContainerdStartOptions {
  /** The sandbox image (default the development pause image). */
  readonly sandboxImage?: string;
  /** containerd's `--log-level` (default `warn`). */
  readonly logLevel?: string;
}

/** A containerd child process (see the module comment). */
export class ContainerdProcess {
  readonly layout: ContainerdLayout;
  /** The CRI endpoint, `unix://<socket>`. */
  readonly endpoint: string;
  readonly #child: ChildProcess;
  readonly #onExit: () => void;
  #stopped = false;

  private constructor(layout: ContainerdLayout, child: ChildProcess) {
    this.layout = layout;
    this.endpoint = `unix://${layout.socket}`;
    this.#child = child;
    // If this process dies without stopping containerd, containerd goes too (the shims stay).
    this.#onExit = () => child.kill('SIGKILL');
    process.once('exit', this.#onExit);
  }

  /**
   * Writes the config and starts containerd on `dir`; resolves once it serves CRI. A containerd a
   * previous run left on the same directory (its pid file names it) is stopped first.
   * @throws Error with the tail of containerd's log when it exits or does not serve in 30 s.
   */
  static async start(dir: string, opts: ContainerdStartOptions = {}): Promise<ContainerdProcess> {
    const layout = containerdLayout(dir);
    await mkdir(layout.cniConfDir, { recursive: true });
    const stale = runningContainerdPid(layout);
    if (stale !== undefined) {
      process.kill(stale, 'SIGTERM');
      if (!(await exited(stale, STOP_TIMEOUT_MS))) process.kill(stale, 'SIGKILL');
    }
    const config = containerdConfig(layout, opts.sandboxImage);
    if ((await readFile(layout.configPath, 'utf8').catch(() => '')) !== config) {
      await writeFile(layout.configPath, config);
    }
    const log = openSync(layout.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(
        CONTAINERD_BIN,
        ['--config', layout.configPath, '--log-level', opts.logLevel ?? 'warn'],
        // Its own process group: a terminal's Ctrl-C reaches Capstan, which stops the agent first.
        { stdio: ['ignore', log, log], detached: true },
      );
    } finally {
      closeSync(log);
    }
    const proc = new ContainerdProcess(layout, child);
    try {
      if (child.pid !== undefined) await writeFile(layout.pidFile, `${child.pid}\n`);
      await proc.#waitServing();
      return proc;
    } catch (err) {
      await proc.stop().catch(() => undefined);
      throw err;
    }
  }

  async #waitServing(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let spawnError: Error | undefined;
    this.#child.once('error', (err) => (spawnError = err));
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`cannot run ${CONTAINERD_BIN}: ${spawnError.message}`);
      if (this.#child.exitCode !== null) {
        throw new Error(
          `containerd exited with status ${this.#child.exitCode}:\n${tail(this.layout.logFile)}`,
        );
      }
      // The socket file of an earlier run may linger: wait until it accepts, then ask CRI.
      if ((await accepts(this.layout.socket)) && (await servesCri(this.layout.socket))) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(
      `containerd did not serve CRI on ${this.layout.socket} within ${START_TIMEOUT_MS / 1000} s:\n` +
        tail(this.layout.logFile),
    );
  }

  /** True while containerd runs. */
  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Runs `ctr -a <socket> ...args`; resolves with stdout. */
  async ctr(...args: string[]): Promise<string> {
    return (await run(CTR_BIN, ['-a', this.layout.socket, ...args], { maxBuffer: 64 << 20 })).stdout;
  }

  /**
   * Stops containerd (SIGTERM, SIGKILL after 10 s) and removes its pid file. The shims and the
   * containers keep running. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const child = this.#child;
    if (this.running) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        if (this.running) child.kill('SIGTERM');
        else resolve();
      });
    }
    process.removeListener('exit', this.#onExit);
    await rm(this.layout.pidFile, { force: true });
  }
}
