/**
 * The real node of `capstan cluster`: Capstan's own containerd (a child process on
 * `<data-dir>/containerd`) and the node agent in this process, reaching the server over the
 * loopback as `system:node:<name>` in `system:nodes` (so the Node authorizer and NodeRestriction
 * confine it as they confine a kubelet). The agent runs the cluster's networking in-process (see
 * src/agent/network/enable.ts): the Service proxy as `system:kube-proxy` (kube's
 * `system:node-proxier` binding), and the cluster DNS (`kube-dns` at the Service range's tenth
 * address) and NetworkPolicy enforcement each as a user of their own in `system:masters`; their
 * nftables tables are named after the bridge, kept across restarts and removed by `--reset`.
 *
 * {@link startNodeRuntime} runs while the server starts: the Service range's blackhole route,
 * the pods' bridge (whose gateway address is the node's InternalIP), containerd, the development
 * images when absent, and the new or changed tarballs of `<data-dir>/images/`. {@link realNode}
 * then starts the agent once the server serves.
 *
 * On exit the agent stops (pods keep running) and containerd stops (the shims keep the containers
 * running). The next run on the same data dir starts containerd on the same state, which reconnects
 * to the shims, and the agent adopts the running pods: same container IDs, no restarts.
 */
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { Agent, type AgentWiring } from '../agent/agent.js';
import { agentFlagSet, resolveConfig } from '../agent/config.js';
import { enableClusterNetworking } from '../agent/network/enable.js';
import { ipAt, parseCidr } from '../api/cidr.js';
import { ensureBridge, gatewayOf } from '../agent/network/bridge.js';
import type { CommandIo, Companion } from '../server/run.js';
import type { ServingServer } from '../server/server.js';
import { startupTrace } from '../server/startup-trace.js';
import { ContainerdProcess } from './containerd.js';
import { natTablesPresent } from './containerd-teardown.js';
import { ensureDevImages, importImagesDir } from './images.js';
import { nodeLayout, readNodeState, writeNodeState, type NodeLayout, type NodeState } from './node-state.js';
import { ensureBlackhole } from './service-route.js';

/** The nftables tables of a cluster's proxy and NetworkPolicy enforcer (reset removes them). */
export function networkTables(bridge: string): { proxyTable: string; networkPolicyTable: string } {
  return { proxyTable: `capstan-proxy-${bridge}`, networkPolicyTable: `capstan-netpol-${bridge}` };
}

/** How the real node is set up. */
export interface RealNodeOptions {
  /** The data dir (absolute). */
  readonly dataDir: string;
  readonly nodeName: string;
  /** The node's pod CIDR. */
  readonly podCIDR: string;
  /** The pods' bridge. */
  readonly bridge: string;
  /** The primary Service range (its blackhole route). */
  readonly serviceRange: string;
  /** The CA of the server's kubelet client certificate (the agent's `--client-ca-file`). */
  readonly clientCAFile: string;
  /**
   * True when the server listens on the loopback only: it then serves on the bridge's gateway
   * address too, once the agent runs, so that pods reach it through the `kubernetes`
   * Service (`capstan cluster` advertises that address).
   */
  readonly serveOnGateway?: boolean;
}

/** The node's runtime side, ready for the agent. */
export interface NodeRuntime {
  readonly layout: NodeLayout;
  readonly state: NodeState;
  readonly containerd: ContainerdProcess;
  /** Development images imported now (none when they were there). */
  readonly devImages: readonly string[];
  /** Files of `images/` imported now. */
  readonly imported: readonly string[];
}

/** Starts the runtime side (see the module comment). On failure nothing is left running. */
export async function startNodeRuntime(opts: RealNodeOptions, io: CommandIo): Promise<NodeRuntime> {
  const layout = nodeLayout(opts.dataDir);
  const previous = await readNodeState(layout);
  await mkdir(layout.agentDir, { recursive: true });
  // containerd starts while the route is checked (the agent, which runs pods, waits for both).
  const starting = ContainerdProcess.start(layout.containerdDir);
  starting.catch(() => undefined); // awaited below
  let ours: boolean;
  try {
    // The route is ours if this run adds it, or if an earlier run added it (it is there now:
    // ensureBlackhole found it or added it).
    ours = (await ensureBlackhole(opts.serviceRange)) || previous?.addedRoute === opts.serviceRange;
  } catch (err) {
    await starting.then(
      (c) => c.stop(),
      () => undefined,
    );
    throw err;
  }
  const state: NodeState = {
    nodeName: opts.nodeName,
    podCIDR: opts.podCIDR,
    bridge: opts.bridge,
    cgroupParent: layout.cgroupParent,
    cniNetworkName: layout.cniNetworkName,
    ...(ours ? { addedRoute: opts.serviceRange } : {}),
    // Kept from the first run: a later one finds the tables the first one's pods made.
    natTablesBefore: previous?.natTablesBefore ?? (await natTablesPresent()),
  };
  // Recorded before the agent runs anything, so a reset after a crash still knows what to remove.
  await writeNodeState(layout, state);
  startupTrace('node: route and state');
  try {
    // The bridge's gateway is the node's address (see agentArgs): made before the agent listens.
    await ensureBridge(opts.bridge, opts.podCIDR);
  } catch (err) {
    await starting.then(
      (c) => c.stop(),
      () => undefined,
    );
    throw err;
  }
  const containerd = await starting;
  startupTrace('node: containerd serves CRI');
  try {
    const ctr = (...args: string[]): Promise<string> => containerd.ctr(...args);
    const devImages = await ensureDevImages(containerd.layout.socket, ctr);
    startupTrace('node: development images present');
    const imported = await importImagesDir(ctr, layout.imagesDir, io.err);
    startupTrace('node: images/ imported');
    return { layout, state, containerd, devImages, imported };
  } catch (err) {
    await containerd.stop();
    throw err;
  }
}

/** kubelet's default port, which kube's tools reach a node at (`nodes/<name>:10250/proxy`). */
const KUBELET_PORT = 10250;

/**
 * The agent's port: kubelet's 10250 when nothing holds it on `address`, else a free port (a
 * kubelet listening on every address has it), which the Node object advertises either way.
 */
async function agentPort(address: string): Promise<number> {
  const probe = createServer();
  const free = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(KUBELET_PORT, address, () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return free ? KUBELET_PORT : 0;
}

/** The agent's flags for the node. */
function agentArgs(opts: RealNodeOptions, runtime: NodeRuntime, nodeIP: string, port: number): string[] {
  const { layout } = runtime;
  return [
    `--hostname-override=${opts.nodeName}`,
    `--container-runtime-endpoint=${runtime.containerd.endpoint}`,
    `--root-dir=${layout.agentDir}`,
    `--pod-logs-dir=${layout.agentDir}/logs`,
    `--cni-conf-dir=${runtime.containerd.layout.cniConfDir}`,
    `--cgroup-root=${layout.cgroupParent}`,
    // The node's address is the pods' bridge gateway, an address this cluster made: a pod reaches
    // its node there (`status.hostIP`, host-network pods, host ports), where the loopback would be
    // the pod's own (kubelet refuses a loopback node IP). The agent's server (logs, exec,
    // port-forward) listens there only, on `port`, which the Node object advertises; the API
    // server reaches it at the node IP. As kubeadm sets a kubelet up: no anonymous requests, the
    // server's client certificate (see kubelet-client-pki.ts), and every request authorized by a
    // SubjectAccessReview.
    `--address=${nodeIP}`,
    '--anonymous-auth=false',
    `--client-ca-file=${opts.clientCAFile}`,
    '--authorization-mode=Webhook',
    `--port=${port}`,
    '--healthz-port=0',
    `--node-ip=${nodeIP}`,
    `--pod-cidr=${opts.podCIDR}`,
    `--cni-bridge=${opts.bridge}`,
  ];
}

/**
 * Serves the API on the bridge's gateway address when {@link RealNodeOptions.serveOnGateway} asks
 * for it; answers the URL served, or undefined. A failure is reported, not fatal: the cluster
 * works without it, except for pods that talk to the API server.
 */
async function serveForPods(
  server: ServingServer,
  opts: RealNodeOptions,
  io: CommandIo,
): Promise<string | undefined> {
  if (opts.serveOnGateway !== true) return undefined;
  const gateway = gatewayOf(opts.podCIDR).address;
  try {
    return await server.serveAlsoOn(gateway);
  } catch (err) {
    io.err(
      `node: pods cannot reach the API server: serving on the bridge address ${gateway} failed: ` +
        `${err instanceof Error ? err.message : String(err)}`,
    );
    return undefined;
  }
}

/**
 * The companion that runs the agent beside the server, once `runtime` is ready. Its stopper
 * stops the agent, then containerd; pods keep running.
 */
export function realNode(runtime: Promise<NodeRuntime>, opts: RealNodeOptions): Companion {
  return async (server, io) => {
    const identity = (user: string, groups: string[], agent: string) =>
      server.loopbackConfig(user, groups, { userAgent: `${agent}/v1.33 (in-process)` });
    // The clients' certificates are made while containerd starts, not after.
    const nodeIP = gatewayOf(opts.podCIDR).address;
    const [rt, port, client, proxy, dns, networkPolicy] = await Promise.all([
      runtime,
      runtime.then(() => agentPort(nodeIP)),
      identity(`system:node:${opts.nodeName}`, ['system:nodes'], 'capstan-agent'),
      identity('system:kube-proxy', [], 'capstan-proxy'),
      identity('capstan:cluster-dns', ['system:masters'], 'capstan-dns'),
      identity('capstan:network-policy', ['system:masters'], 'capstan-netpol'),
    ]);
    startupTrace('node: runtime ready, server serving');
    const wiring: AgentWiring = {
      client,
      cniNetworkName: rt.layout.cniNetworkName,
      networkClients: { proxy, dns, networkPolicy },
      // Rules stay while the cluster is down (its pods keep running); --reset removes them.
      network: { ...networkTables(opts.bridge), clusterCidr: opts.podCIDR, removeRulesOnStop: false },
    };
    const clusterDNS = ipAt(parseCidr(opts.serviceRange), 10n);
    const config = resolveConfig(agentFlagSet().parse(agentArgs(opts, rt, nodeIP, port)));
    const agent = new Agent(enableClusterNetworking(config, { clusterDNS }), wiring);
    try {
      startupTrace('node: agent starting');
      await agent.start();
      startupTrace('node: agent started (lease renewed)');
    } catch (err) {
      await agent.stop().catch(() => undefined);
      await rt.containerd.stop();
      throw err;
    }
    const forPods = await serveForPods(server, opts, io);
    const notes = [
      `containerd in ${rt.containerd.layout.dir}`,
      `pod CIDR ${opts.podCIDR}`,
      ...(forPods === undefined ? [] : [`API server for pods at ${forPods}`]),
      ...(rt.devImages.length ? [`built ${rt.devImages.join(', ')}`] : []),
      ...(rt.imported.length ? [`imported ${rt.imported.join(', ')} from ${rt.layout.imagesDir}`] : []),
    ];
    io.out(
      `node: ${opts.nodeName} registered, lease renewed ${process.uptime().toFixed(2)} s after start ` +
        `(real containers: ${notes.join('; ')})`,
    );
    io.out(
      `images: docker.io/capstan/busybox:1 is on the node; add more with \`capstan images import FILE.tar\``,
    );
    return async () => {
      await agent.stop();
      await rt.containerd.stop();
    };
  };
}
