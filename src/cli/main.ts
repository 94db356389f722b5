#!/usr/bin/env node
/**
 * The `capstan` command: pick the subcommand, hand off, map the outcome to an exit status.
 * Subcommands are imported lazily so that each loads only what it needs.
 */
import { setFlagsFromString } from 'node:v8';
import { packageVersion } from '../server/package-version.js';
import { COMPONENT_BUNDLES } from './bundles.js';

const USAGE = `usage: capstan <command> [flags]

commands:
  cluster   run a single-node cluster: the API server, controllers, scheduler and a node (real with
            containerd installed, else simulated; capstan cluster --help)
  images    import image tarballs into the cluster's node (capstan images --help)
  server    run the API server (capstan server --help for its flags)
  controller-manager  run the controllers against an API server (capstan controller-manager --help)
  proxy     run the Service proxy on nftables (capstan proxy --help)
  bench     measure an API server beside the raw stores (capstan bench --help)
  verify    check a server's resourceVersion, paging and watch semantics (capstan verify --help)
  agent     run the node agent on a container runtime; --simulate runs simulated nodes (capstan agent --help)
  scheduler run kube-scheduler's equivalent against a server (capstan scheduler --help)
  envtest-assets [DIR]  write a KUBEBUILDER_ASSETS directory for controller-runtime's envtest
  version   print the version`;

/**
 * Lets a long-running component's (those of {@link COMPONENT_BUNDLES}) heap grow to twice its live size before the next full collection, as Go's
 * default (GOGC=100) does for kube's components; V8 otherwise grows it up to four times under a
 * high allocation rate. Measured on `capstan bench scheduler --preset=full --scheduler-backlog`:
 * peak RSS 10-40% lower for about the same CPU (docs/bench/scheduler.md). The API server keeps
 * V8's default: its request rate matters more than its footprint.
 */
function heapLikeGo(): void {
  setFlagsFromString('--heap-growing-percent=100');
}

/**
 * V8 settings for the node agent, whose idle RSS counts (issue 32: ≤ 0.7× kubelet's). Measured
 * on an idle agent with no pod, from /proc/PID/status, smaps and `v8.getHeapSpaceStatistics()`
 * (docs/bench/agent.md, 2026-12-03):
 *
 * - `--no-opt`: no TurboFan. An agent's JavaScript is glue around native work (JSON, TLS,
 *   HTTP/2, gRPC framing), so optimized code buys little: a 30-pod burst cost 6% more CPU
 *   (850 → 900 and 720 → 770 ms). Without it, the optimizing compiler's pages of the `node`
 *   binary (3.2 MiB of text), its memory and its code stay out of an idle agent: 57.3 against
 *   62-65 MiB RSS.
 * - `--no-sparkplug`: no baseline compiler either; its machine code was 0.7 MiB of an idle
 *   agent's heap. One burst each (load 10-16): idle RSS 56.5 against 57.4 MiB, the burst's
 *   agent CPU 710 against 770 ms (no cost seen).
 * - `--semi-space-growth-factor=1`: keeps the young generation at V8's initial 1 MiB
 *   semi-spaces. V8 doubles them, up to 16 MiB, when many young objects survive a scavenge, as
 *   while the agent starts, and an idle process keeps them (2 of 5 starts on a loaded machine:
 *   an 8 MiB new space, RSS 69-70 MiB). `--max-semi-space-size` cannot do this from here: V8
 *   reads it only when it sets the heap up (checked: set here, the new space still grew). The
 *   growth factor is read at each growth, so 1 keeps the size (0 crashes node 20).
 * - `--bytecode-old-age=1`: bytecode a function has not run for since the last collection is
 *   dropped at the next (V8's default waits 5), so what only start-up ran (flag parsing, the
 *   first list, registration) leaves an idle agent sooner; a function that runs again is
 *   compiled again from its source. Idle RSS 53.8 against 54.7 MiB, twice each, with the same
 *   idle CPU (60 ms/min); `--stress-flush-code` went no lower and tripled the idle CPU.
 *
 * Only the real agent: the simulated agent, the scheduler and the controller-manager run hot
 * JavaScript loops at high allocation rates, where these would cost throughput.
 */
function agentV8Flags(): void {
  setFlagsFromString('--no-opt');
  setFlagsFromString('--no-sparkplug');
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--bytecode-old-age=1');
}

/** `capstan agent`: the node agent on a container runtime (src/agent); `--simulate` runs simulated nodes. */
async function runAgent(args: readonly string[]): Promise<number> {
  if (args.includes('--simulate') || args.includes('--simulate=true')) {
    return (await import('../agent/simulated/command.js')).runSimulatedAgentCommand(args);
  }
  agentV8Flags();
  return (await import('../agent/command.js')).runAgentCommand(args);
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== undefined && Object.hasOwn(COMPONENT_BUNDLES, command)) heapLikeGo();
  switch (command) {
    case 'version':
      console.log(`capstan ${packageVersion()}`);
      return 0;
    case 'server': {
      const { runServerCommand } = await import('../server/run.js');
      const code = await runServerCommand(rest);
      // After a shutdown nothing should hold the event loop; if a stray handle does, do not hang.
      setTimeout(() => process.exit(code), 2_000).unref();
      return code;
    }
    case 'cluster': {
      const code = await (await import('../cluster/command.js')).runClusterCommand(rest);
      setTimeout(() => process.exit(code), 2_000).unref();
      return code;
    }
    case 'images':
      return (await import('../cluster/images-command.js')).runImagesCommand(rest);
    case 'controller-manager': {
      const code = await (await import('../controller-manager/command.js')).runControllerManagerCommand(rest);
      setTimeout(() => process.exit(code), 2_000).unref();
      return code;
    }
    case 'proxy':
      return (await import('../proxy/command.js')).runProxyCommand(rest);
    case 'bench':
      return (await import('../bench/command.js')).runBenchCommand(rest);
    case 'scheduler':
      return (await import('../scheduler/command.js')).runSchedulerCommand(rest);
    case 'verify':
      return (await import('../verify/command.js')).runVerifyCommand(rest);
    case 'agent':
      return runAgent(rest);
    case 'envtest-assets':
      return (await import('../envtest/command.js')).runEnvtestAssetsCommand(rest);
    case 'envtest-parked-server': {
      // Hidden: the envtest assets' etcd stand-in starts it (src/envtest/parked-server.ts).
      const code = await (await import('../envtest/parked-server.js')).runParkedServerCommand();
      setTimeout(() => process.exit(code), 2_000).unref();
      return code;
    }
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' || command === '-h' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
