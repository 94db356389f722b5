/**
 * Where a real node of `capstan cluster` keeps its things under the data dir, and the state file
 * (`node.json`) that records what the cluster created outside it (the bridge, the cgroup parent,
 * the CNI network's cached results, whether it added the Service range's blackhole route), so
 * `capstan cluster --reset` removes exactly that.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The paths of a cluster's node under `dataDir`. */
export interface NodeLayout {
  readonly dataDir: string;
  /** containerd's config, root, state, socket and CNI conf dir. */
  readonly containerdDir: string;
  /** The agent's root dir (volumes, pod logs, CNI address leases, serving certificate). */
  readonly agentDir: string;
  /** Image tarballs imported at start (k3s's airgap images). */
  readonly imagesDir: string;
  readonly stateFile: string;
  /** The pid of the running `capstan cluster`. */
  readonly pidFile: string;
  /** The pods' cgroup parent: one per data dir, so two clusters never share it. */
  readonly cgroupParent: string;
  /** The CNI network's name (libcni's cached results start with it): one per data dir. */
  readonly cniNetworkName: string;
}

/** The layout for `dataDir` (an absolute path). */
export function nodeLayout(dataDir: string): NodeLayout {
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 8);
  return {
    dataDir,
    containerdDir: join(dataDir, 'containerd'),
    agentDir: join(dataDir, 'agent'),
    imagesDir: join(dataDir, 'images'),
    stateFile: join(dataDir, 'node.json'),
    pidFile: join(dataDir, 'cluster.pid'),
    cgroupParent: `/capstan-${id}`,
    cniNetworkName: `capstan-${id}`,
  };
}

/** What the node created outside the data dir. */
export interface NodeState {
  readonly nodeName: string;
  readonly podCIDR: string;
  readonly bridge: string;
  readonly cgroupParent: string;
  readonly cniNetworkName: string;
  /** The Service range whose blackhole route the cluster added, if it did. */
  readonly addedRoute?: string;
  /**
   * The iptables nat tables (`ip nat`, `ip6 nat`) that existed before the node first ran pods;
   * absent in a state written before this was recorded (then none is removed).
   */
  readonly natTablesBefore?: readonly string[];
}

/** The recorded state, or undefined when there is none. */
export async function readNodeState(layout: NodeLayout): Promise<NodeState | undefined> {
  const text = await readFile(layout.stateFile, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as NodeState;
  } catch (err) {
    throw new Error(`${layout.stateFile}: ${(err as Error).message}`);
  }
}

/** Records the state (atomically). */
export async function writeNodeState(layout: NodeLayout, state: NodeState): Promise<void> {
  await writeFile(`${layout.stateFile}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${layout.stateFile}.tmp`, layout.stateFile);
}
