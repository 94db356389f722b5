/**
 * `capstan cluster --reset`: removes everything `capstan cluster` created for the data dir, and
 * only that. The pods' sandboxes and containers (through Capstan's own containerd, started for the
 * purpose when it is not running), containerd's shims, mounts, the pods' cgroups and cached CNI
 * results (src/cluster/containerd-teardown.ts), the bridge when no other pods use it, the Service
 * range's blackhole route when the cluster added it, the portmap plugin's shared `CNI-HOSTPORT-*`
 * chains when no pod's hostPort chain is left, and then the data dir's contents: the store,
 * the admin kubeconfig, the certificates when they live under the data dir, containerd's and the
 * agent's directories and the node state. `images/` (the user's tarballs) stays.
 *
 * Refuses while a `capstan cluster` runs on the data dir.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import type { CommandIo } from '../server/run.js';
import { ContainerdProcess, containerdLayout, containerdMissing } from './containerd.js';
import {
  CleanupErrors,
  removeBridgeIfUnused,
  removeNatTablesIfUnused,
  removePortmapChainsIfUnused,
  removeWorkloads,
  teardownLeftovers,
} from './containerd-teardown.js';
import { nodeLayout, readNodeState, type NodeLayout } from './node-state.js';
import { deleteNftTable } from '../proxy/proxier.js';
import { networkTables } from './real-node.js';
import { removeBlackhole } from './service-route.js';

/** The pid of a live `capstan cluster` on this data dir, else undefined. */
export function runningClusterPid(layout: NodeLayout): number | undefined {
  try {
    const pid = Number(readFileSync(layout.pidFile, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('cluster') ? pid : undefined;
  } catch {
    return undefined;
  }
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** The node's half: containerd's workloads and everything they left. */
async function resetNode(layout: NodeLayout, errors: CleanupErrors, io: CommandIo): Promise<void> {
  const state = await readNodeState(layout);
  const ctrd = containerdLayout(layout.containerdDir);
  if (existsSync(ctrd.configPath)) {
    if (containerdMissing().length === 0) {
      let proc: ContainerdProcess | undefined;
      await errors.attempt('starting containerd', async () => {
        proc = await ContainerdProcess.start(layout.containerdDir);
      });
      const running = proc;
      if (running) {
        await removeWorkloads(ctrd.socket, (...a) => running.ctr(...a), errors);
        await errors.attempt('stopping containerd', () => running.stop());
      }
    } else {
      io.err(`reset: containerd is missing (${containerdMissing().join(', ')}): killing its shims only`);
    }
  }
  await teardownLeftovers(
    {
      socket: ctrd.socket,
      mountDirs: [layout.containerdDir, layout.agentDir],
      cgroupParent: state?.cgroupParent ?? layout.cgroupParent,
      cniNetworkName: state?.cniNetworkName ?? layout.cniNetworkName,
    },
    errors,
  );
  if (state) {
    await errors.attempt(`bridge ${state.bridge}`, () => removeBridgeIfUnused(state.bridge));
    for (const table of Object.values(networkTables(state.bridge))) {
      await errors.attempt(`nftables table ${table}`, () => deleteNftTable(table));
    }
    const route = state.addedRoute;
    if (route !== undefined) await errors.attempt(`route ${route}`, () => removeBlackhole(route));
  }
  // portmap's shared nat chains outlive the pods' own; they go once no pod chain is left in them.
  await errors.attempt('portmap chains', removePortmapChainsIfUnused);
  // Then the nat tables iptables made for them, when the node found none.
  const natBefore = state?.natTablesBefore;
  if (natBefore !== undefined) await errors.attempt('nat tables', () => removeNatTablesIfUnused(natBefore));
}

/**
 * Resets the cluster of `dataDir` (see the module comment); `certDir` is removed only when it
 * lies under the data dir. Resolves with the exit status: 0 when everything went, 1 otherwise.
 */
export async function resetCluster(dataDir: string, certDir: string, io: CommandIo): Promise<number> {
  const layout = nodeLayout(dataDir);
  const pid = runningClusterPid(layout);
  if (pid !== undefined) {
    io.err(`Error: capstan cluster (pid ${pid}) is running on ${dataDir}: stop it before --reset`);
    return 1;
  }
  const errors = new CleanupErrors();
  await resetNode(layout, errors, io);
  const paths = [
    layout.containerdDir,
    layout.agentDir,
    join(dataDir, 'store'),
    join(dataDir, 'admin.kubeconfig'),
    layout.stateFile,
    layout.pidFile,
    // What images/ held was imported into the containerd removed above: import it again next start.
    join(layout.imagesDir, '.imported.json'),
    ...(inside(dataDir, certDir) ? [certDir] : []),
  ];
  for (const path of paths) {
    await errors.attempt(`removing ${path}`, () => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  }
  // The data dir goes too when nothing else (images/, files of the user's) is in it.
  if (existsSync(dataDir) && (await readdir(dataDir)).length === 0)
    await rmdir(dataDir).catch(() => undefined);
  try {
    errors.throwIfAny('reset');
  } catch (err) {
    io.err(`Error: ${(err as Error).message}`);
    return 1;
  }
  io.out(`reset: removed the cluster of ${dataDir}`);
  return 0;
}
