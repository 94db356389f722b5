/**
 * `capstan cluster`: a whole single-node development cluster in one process. The API server
 * (every `capstan server` flag works here) runs with its in-process controller manager and
 * scheduler, and beside it the node:
 * - where containerd, runc and the CNI plugins are installed (and Capstan runs as root), a REAL
 *   node (real-node.ts): Capstan's own containerd as a child process under
 *   `<data-dir>/containerd`, and the node agent in this process. Stopping the cluster leaves the
 *   pods running; the next start adopts them. `--reset` removes everything the cluster created;
 * - otherwise, or with `--simulated-nodes=N`, simulated nodes (src/agent/simulated) that
 *   register, heartbeat and report the pods bound to them Running, without containers. The
 *   start-up lines say so plainly, with the command that installs containerd.
 *
 * The nodes reach the server over the loopback as their own identity: one node acts as
 * `system:node:<name>` in `system:nodes` (the Node authorizer and NodeRestriction confine it as
 * they confine a kubelet); several simulated nodes act together as one client in `system:masters`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewayOf } from '../agent/network/bridge.js';
import { startSimulatedNodes } from '../agent/simulated/simulator.js';
import { parseServerArgs } from '../server/options.js';
import { runServerCommand, type CommandIo, type Companion } from '../server/run.js';
import { containerdMissing, INSTALL_COMMAND } from './containerd.js';
import { ensureKubeletClientPki } from './kubelet-client-pki.js';
import { nodeLayout } from './node-state.js';
import { realNode, startNodeRuntime, type NodeRuntime, type RealNodeOptions } from './real-node.js';
import { resetCluster, runningClusterPid } from './reset.js';
import { withMetricsReaderRole } from './metrics-reader.js';
import { withLocalPathClass, withLocalPathController } from './storage.js';
import { KUBEADM_ADDRESS_TYPES } from '../server/flag-table.js';
import { startupTrace } from '../server/startup-trace.js';

/** The node name prefix: nodes are `capstan-node-0`, `capstan-node-1`, ... */
export const NODE_PREFIX = 'capstan-node-';
/** The real node's pod CIDR unless `--pod-cidr` says otherwise. */
export const DEFAULT_POD_CIDR = '10.244.0.0/24';
/** The real node's bridge unless `--bridge` says otherwise. */
export const DEFAULT_BRIDGE = 'capstan-node0';

const PROCESS_IO: CommandIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const HELP = `capstan cluster: the API server, its controllers and scheduler, and one node, in one process.

Cluster flags (every other flag is a capstan server flag, listed below):
      --simulated-nodes=N  run N simulated nodes instead of the real node (0: no node). Without it
                           the node is real where containerd, runc and the CNI plugins are installed.
      --pod-cidr=CIDR      the real node's pod CIDR (default ${DEFAULT_POD_CIDR})
      --bridge=NAME        the real node's pod bridge (default ${DEFAULT_BRIDGE})
      --reset              remove everything the cluster of --data-dir created (pods, containerd's
                           state, the store, certificates under the data dir), then exit
`;

/** The cluster's own flags, taken out of `argv`; the rest goes to the server. */
export interface ClusterArgs {
  /** `--simulated-nodes`, when given. */
  readonly simulatedNodes: number | undefined;
  readonly podCIDR: string;
  readonly bridge: string;
  readonly reset: boolean;
  readonly help: boolean;
  readonly serverArgs: string[];
}

/** Splits `argv` into the cluster's flags and the server's. @throws Error on a bad value. */
export function splitClusterArgs(argv: readonly string[]): ClusterArgs {
  let simulatedNodes: number | undefined;
  let podCIDR = DEFAULT_POD_CIDR;
  let bridge = DEFAULT_BRIDGE;
  let reset = false;
  let help = false;
  const serverArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [name, inline] = arg.startsWith('--') ? (arg.split(/=(.*)/s) as [string, string?]) : [arg];
    const value = (): string => inline ?? argv[++i] ?? '';
    switch (name) {
      case '--simulated-nodes': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) > 5000) {
          throw new Error(`invalid --simulated-nodes ${JSON.stringify(v)}: a whole number from 0 to 5000`);
        }
        simulatedNodes = Number(v);
        break;
      }
      case '--pod-cidr':
        podCIDR = value();
        if (!/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(podCIDR)) {
          throw new Error(
            `invalid --pod-cidr ${JSON.stringify(podCIDR)}: an IPv4 CIDR such as 10.244.0.0/24`,
          );
        }
        break;
      case '--bridge':
        bridge = value();
        if (!/^[A-Za-z0-9_.-]{1,15}$/.test(bridge)) {
          throw new Error(
            `invalid --bridge ${JSON.stringify(bridge)}: an interface name of 1 to 15 characters`,
          );
        }
        break;
      case '--reset':
        reset = inline === undefined || inline === 'true';
        break;
      case '--help':
      case '-h':
        help = true;
        serverArgs.push(arg);
        break;
      default:
        serverArgs.push(arg);
    }
  }
  return { simulatedNodes, podCIDR, bridge, reset, help, serverArgs };
}

/** True for an address on the loopback (127.0.0.0/8, ::1). */
function isLoopback(address: string): boolean {
  return address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/** Starts simulated nodes beside a running server; returns their stopper. */
function simulatedNodes(count: number, why: string): Companion {
  return async (server, io) => {
    if (count === 0) {
      io.out('node: none (--simulated-nodes=0): pods stay Pending');
      return () => Promise.resolve();
    }
    const config =
      count === 1
        ? await server.loopbackConfig(`system:node:${NODE_PREFIX}0`, ['system:nodes'])
        : await server.loopbackConfig('capstan:simulated-nodes', ['system:masters']);
    const nodes = await startSimulatedNodes(
      { ...config, userAgent: 'capstan-agent-simulated/v1.33 (in-process)' },
      { nodes: count, nodeNamePrefix: NODE_PREFIX },
      undefined,
      { log: io.err },
    );
    await nodes.registered;
    io.out(
      `node: ${nodes.nodeNames.join(', ')} SIMULATED (${why}): pods are reported Running but no ` +
        'container runs (logs and exec are not available).',
    );
    return () => nodes.stop();
  };
}

/**
 * Why the node is simulated, or undefined when it can be real: `--simulated-nodes` was given, or
 * `missing` (what {@link containerdMissing} answers) is not empty; then the reason names what is
 * missing and the command that installs it.
 */
export function simulatedBecause(args: ClusterArgs, missing: readonly string[]): string | undefined {
  if (args.simulatedNodes !== undefined) return `asked for with --simulated-nodes=${args.simulatedNodes}`;
  if (missing.length === 0) return undefined;
  return missing.includes('root')
    ? `real containers need root; missing: ${missing.join(', ')}`
    : `containerd is not installed: missing ${missing.join(', ')}. For real containers: ${INSTALL_COMMAND}, then start again`;
}

/** Runs `capstan cluster <argv>` until a signal; resolves with the exit status. */
export async function runClusterCommand(
  argv: readonly string[],
  io: CommandIo = PROCESS_IO,
): Promise<number> {
  // Places the process's trace lines (times since its start) on the wall clock.
  startupTrace(`process origin ${performance.timeOrigin.toFixed(1)}`);
  let args: ClusterArgs;
  try {
    args = splitClusterArgs(argv);
  } catch (err) {
    io.err(`Error: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  if (args.help) {
    io.out(HELP);
    return runServerCommand(args.serverArgs, io);
  }
  let options;
  try {
    const parsed = parseServerArgs(args.serverArgs);
    if (parsed.help) return runServerCommand(args.serverArgs, io);
    options = parsed.options;
  } catch {
    return runServerCommand(args.serverArgs, io); // it reports the bad flag
  }
  if (args.reset) return resetCluster(options.dataDir, options.certDir, io);
  // The node registers as capstan-node-0, a name that need not resolve: the server reaches it at
  // its InternalIP first, as kubeadm configures kube-apiserver (kube's default puts Hostname first).
  if (!args.serverArgs.some((a) => a.startsWith('--kubelet-preferred-address-types'))) {
    args.serverArgs.push(`--kubelet-preferred-address-types=${KUBEADM_ADDRESS_TYPES}`);
  }

  const layout = nodeLayout(options.dataDir);
  const other = runningClusterPid(layout);
  if (other !== undefined) {
    io.err(`Error: capstan cluster (pid ${other}) is already running on ${options.dataDir}`);
    return 1;
  }
  await mkdir(options.dataDir, { recursive: true });
  await writeFile(layout.pidFile, `${process.pid}\n`);
  let runtime: Promise<NodeRuntime> | undefined;
  try {
    const why = simulatedBecause(args, containerdMissing());
    if (why !== undefined) {
      return await runServerCommand(
        withLocalPathController(args.serverArgs),
        io,
        withMetricsReaderRole(withLocalPathClass(simulatedNodes(args.simulatedNodes ?? 1, why))),
      );
    }
    // The server reaches the agent with kubeadm's kubelet client certificate (unless given one).
    let kubeletPki;
    try {
      kubeletPki = await ensureKubeletClientPki(options, join(layout.agentDir, 'pki', 'client-ca.crt'));
    } catch (err) {
      io.err(
        `Error: the server's kubelet client certificate: ${err instanceof Error ? err.message : String(err)}`,
      );
      return 1;
    }
    if (!args.serverArgs.some((a) => a.startsWith('--kubelet-client-certificate'))) {
      args.serverArgs.push(
        `--kubelet-client-certificate=${kubeletPki.certFile}`,
        `--kubelet-client-key=${kubeletPki.keyFile}`,
      );
    }
    // A server on the loopback only is out of the pods' reach (a Service cannot forward to the
    // loopback): it also serves on the pod bridge's gateway, the address it then advertises.
    const serveOnGateway = isLoopback(options.bindAddress) && options.advertiseAddress === '';
    if (serveOnGateway) args.serverArgs.push(`--advertise-address=${gatewayOf(args.podCIDR).address}`);
    const nodeOptions: RealNodeOptions = {
      dataDir: options.dataDir,
      nodeName: `${NODE_PREFIX}0`,
      podCIDR: args.podCIDR,
      bridge: args.bridge,
      serviceRange: options.serviceClusterIPRanges[0]?.text ?? '10.0.0.0/24',
      clientCAFile: kubeletPki.clientCAFile,
      serveOnGateway,
    };
    // containerd starts while the server does; the agent starts once both are up.
    runtime = startNodeRuntime(nodeOptions, io).catch((err: unknown) => {
      throw new Error(
        `the real node did not start: ${err instanceof Error ? err.message : String(err)} ` +
          '(--simulated-nodes=1 runs a simulated node instead)',
      );
    });
    runtime.catch(() => undefined); // reported by the companion
    return await runServerCommand(
      withLocalPathController(args.serverArgs),
      io,
      withMetricsReaderRole(withLocalPathClass(realNode(runtime, nodeOptions))),
    );
  } finally {
    // When the server failed before the node started, containerd may still run: stop it.
    await runtime?.then(
      (rt) => rt.containerd.stop(),
      () => undefined,
    );
    await rm(layout.pidFile, { force: true });
  }
}
