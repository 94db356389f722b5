/**
 * `capstan cluster`: a whole single-node development cluster in one process. The API server
 * (every `capstan server` flag works here) runs with its in-process controller manager and
 * scheduler, and beside it the node: simulated nodes (src/agent/simulated) that register, heartbeat
 * and report the pods bound to them Running, so Deployments, Jobs and Services' endpoints behave
 * as on a real cluster without running containers. The start-up lines say plainly that the node
 * is simulated and how to run real containers instead.
 *
 * The nodes reach the server over the loopback as their own identity: one node acts as
 * `system:node:<name>` in `system:nodes` (the Node authorizer and NodeRestriction confine it as
 * they confine a kubelet); several act together as one client in `system:masters`.
 *
 * Capstan's own flag here: `--simulated-nodes=N` (default 1; 0 runs the control plane alone).
 */
import { startSimulatedNodes } from '../agent/simulated/simulator.js';
import { runServerCommand, type CommandIo, type Companion } from '../server/run.js';

/** The node name prefix: nodes are `capstan-node-0`, `capstan-node-1`, ... */
export const NODE_PREFIX = 'capstan-node-';

/** `--simulated-nodes` taken out of `argv`; the rest goes to the server. */
export function splitClusterArgs(argv: readonly string[]): { nodes: number; serverArgs: string[] } {
  let nodes = 1;
  const serverArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    let value: string | undefined;
    if (arg.startsWith('--simulated-nodes=')) value = arg.slice('--simulated-nodes='.length);
    else if (arg === '--simulated-nodes') value = argv[++i] ?? '';
    else {
      serverArgs.push(arg);
      continue;
    }
    if (!/^\d+$/.test(value) || Number(value) > 5000) {
      throw new Error(`invalid --simulated-nodes ${JSON.stringify(value)}: a whole number from 0 to 5000`);
    }
    nodes = Number(value);
  }
  return { nodes, serverArgs };
}

/** Starts the simulated nodes beside a running server; returns their stopper. */
function simulatedNodes(count: number): Companion {
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
      `node: ${nodes.nodeNames.join(', ')} SIMULATED: pods are reported Running but no container runs ` +
        '(logs and exec are not available). For real containers, install containerd ' +
        '(apt-get install containerd runc containernetworking-plugins) and run `capstan agent` against this server.',
    );
    return () => nodes.stop();
  };
}

/** Runs `capstan cluster <argv>` until a signal; resolves with the exit status. */
export async function runClusterCommand(argv: readonly string[], io?: CommandIo): Promise<number> {
  let split;
  try {
    split = splitClusterArgs(argv);
  } catch (err) {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  return runServerCommand(split.serverArgs, io, simulatedNodes(split.nodes));
}
