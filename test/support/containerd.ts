/**
 * A throwaway containerd for the node agent's tests: Capstan's own containerd supervision
 * (src/cluster/containerd.ts) on a temporary directory, with the development images
 * (src/cluster/dev-images.ts) built and imported into the `k8s.io` namespace.
 *
 * `stop()` leaves nothing behind (src/cluster/containerd-teardown.ts): every sandbox, task and
 * container removed, containerd stopped, shims killed, mounts under its directory unmounted, the
 * cgroups under its cgroup parent and the CNI results it caused removed, the portmap plugin's
 * nat chains if they were not there before (and no other pod uses them), and the directory too.
 *
 * Needs root, containerd, ctr, runc, busybox-static and the CNI plugins: {@link containerdMissing}
 * says what is absent; {@link requireContainerd} fails under `CI=true` and skips (loudly) otherwise.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bridgeConflist } from '../../src/agent/network/cni.js';
import {
  CNI_BIN_DIR,
  CONTAINERD_BIN,
  CTR_BIN,
  INSTALL_COMMAND,
  ContainerdProcess,
  containerdMissing,
} from '../../src/cluster/containerd.js';
import {
  CleanupErrors,
  natTablesPresent,
  portmapChainsPresent,
  removeBridgeIfUnused,
  removeNatTablesIfUnused,
  removePortmapChainsIfUnused,
  removeCgroupTree,
  removeWorkloads,
  teardownLeftovers,
  unmountUnder,
} from '../../src/cluster/containerd-teardown.js';
import { BUSYBOX_IMAGE, PAUSE_IMAGE, buildImages, type BuiltImage } from '../../src/cluster/dev-images.js';

const run = promisify(execFile);

export const CONTAINERD = CONTAINERD_BIN;
export const CTR = CTR_BIN;
export {
  BUSYBOX_IMAGE,
  CNI_BIN_DIR,
  PAUSE_IMAGE,
  containerdMissing,
  removeBridgeIfUnused,
  removeCgroupTree,
  unmountUnder,
};

/**
 * True when the containerd suites should run. Under `CI=true` a missing tool throws (the suite
 * fails, never skips); elsewhere it warns on stderr and answers false.
 */
export function requireContainerd(): boolean {
  const missing = containerdMissing();
  if (missing.length === 0) return true;
  const msg = `containerd tests need ${missing.join(', ')} (${INSTALL_COMMAND})`;
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

/** Starts containerd, builds and imports the test images. */
export async function startContainerd(opts: ContainerdOptions = {}): Promise<Containerd> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-ctrd-'));
  const cgroupParent = `/${dir.split('/').pop() ?? 'capstan-ctrd'}`;
  const cniName = opts.cni?.name ?? `capstan-test-${dir.slice(-6).toLowerCase()}`;
  let proc: ContainerdProcess | undefined;
  let stopped = false;
  // The portmap plugin's shared nat chains outlive the pods: removed on stop if they were not here before.
  const portmapBefore = await portmapChainsPresent();
  // So are the nat tables iptables makes for them on a host that had none.
  const natTablesBefore = await natTablesPresent();
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const errors = new CleanupErrors();
    const socket = join(dir, 'containerd.sock');
    if (proc?.running) await removeWorkloads(socket, (...a) => proc!.ctr(...a), errors);
    await errors.attempt('containerd', async () => proc?.stop());
    await teardownLeftovers({ socket, mountDirs: [dir], cgroupParent, cniNetworkName: cniName }, errors);
    if (opts.cni) await run('ip', ['link', 'del', opts.cni.bridge]).catch(() => undefined);
    if (!portmapBefore) await errors.attempt('portmap chains', removePortmapChainsIfUnused);
    await errors.attempt('nat tables', () => removeNatTablesIfUnused(natTablesBefore));
    await errors.attempt('directory', () => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
    errors.throwIfAny('containerd clean-up');
  };
  try {
    proc = await ContainerdProcess.start(dir);
    const started = proc;
    if (opts.cni) {
      await writeFile(
        join(started.layout.cniConfDir, '10-capstan.conflist'),
        bridgeConflist(cniName, opts.cni.bridge, opts.cni.subnet, join(dir, 'cni/ipam')),
      );
    }
    const images = await buildImages(join(dir, 'images'));
    for (const img of images) await started.ctr('-n', 'k8s.io', 'images', 'import', img.path);
    return {
      dir,
      endpoint: started.endpoint,
      socket: started.layout.socket,
      cniConfDir: started.layout.cniConfDir,
      cgroupParent,
      images,
      ctr: (...args) => started.ctr(...args),
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
