#!/usr/bin/env node
/**
 * The `capstan` command: pick the subcommand, hand off, map the outcome to an exit status.
 * Subcommands are imported lazily so that each loads only what it needs.
 */
import { setFlagsFromString } from 'node:v8';
import { packageVersion } from '../server/package-version.js';
import { CODE_CACHE_WRITE_ENV } from './code-cache.js';
import { isSimulatedAgent, v8FlagsOf } from './v8-flags.js';

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

/** `capstan agent`: the node agent on a container runtime (src/agent); `--simulate` runs simulated nodes. */
async function runAgent(args: readonly string[]): Promise<number> {
  if (isSimulatedAgent(args)) {
    return (await import('../agent/simulated/command.js')).runSimulatedAgentCommand(args);
  }
  return (await import('../agent/command.js')).runAgentCommand(args);
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // The build's warm-up, which writes the bundle's code cache, keeps V8's default flags: V8
  // refuses a cache made under other flags, and every process compiles the bundle before its
  // command sets any (bundle-loader.ts).
  if (process.env[CODE_CACHE_WRITE_ENV] === undefined) {
    for (const flag of v8FlagsOf(command, rest)) setFlagsFromString(flag);
  }
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
