/**
 * `capstan agent --simulate`: parse the flags, load the kubeconfig, start the simulated nodes,
 * run until SIGINT/SIGTERM. Exit status: 0 after a signal, 1 when the nodes cannot start, 2 for
 * bad flags.
 */
import { FlagError } from '../../flags/flags.js';
import { loadKubeconfig, type ClientConfig } from '../../client/index.js';
import { parseSimulatedAgentArgs, SIMULATED_AGENT_FLAGS } from './options.js';
import { startSimulatedNodes } from './simulator.js';

const HELP = `usage: capstan agent --simulate --kubeconfig=FILE [flags]

Runs simulated nodes (kwok-like) against an API server: Node objects with Lease heartbeats, and
pods bound to them reported Running as a kubelet would. Pods steer their simulated containers
with annotations:
  sim.capstan.dev/complete-after: 2s   containers exit this long after they start
  sim.capstan.dev/exit-code: "1"       with this exit code (default 0)
  sim.capstan.dev/stop-after: 10s      containers take this long to stop when the pod is deleted
Nodes: sim.capstan.dev/heartbeat: stopped (no lease, no status), sim.capstan.dev/ready: "false".
`;

/** Runs `capstan agent --simulate <argv>`; resolves with the exit status. */
export async function runSimulatedAgentCommand(argv: readonly string[]): Promise<number> {
  let args;
  try {
    args = parseSimulatedAgentArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`capstan agent: ${err.message}\nRun 'capstan agent --simulate --help' for usage.\n`);
    return 2;
  }
  if (args === undefined) {
    process.stdout.write(`${HELP}\n${SIMULATED_AGENT_FLAGS.usage()}\n`);
    return 0;
  }
  let config: ClientConfig;
  try {
    const loaded = loadKubeconfig(
      args.kubeconfig,
      args.context === undefined ? {} : { context: args.context },
    );
    config = { ...loaded, qps: args.qps, burst: args.burst, userAgent: 'capstan-agent-simulated/v1.33' };
  } catch (err) {
    process.stderr.write(`capstan agent: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const nodes = await startSimulatedNodes(config, args.options, controller.signal);
    const started = Date.now();
    await nodes.registered;
    process.stderr.write(
      `capstan agent: ${nodes.nodeNames.length} simulated nodes registered in ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
    );
    await new Promise<void>((resolve) => {
      if (controller.signal.aborted) resolve();
      controller.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await nodes.stop();
    return 0;
  } catch (err) {
    process.stderr.write(`capstan agent: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
