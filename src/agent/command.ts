/**
 * `capstan agent`: the node agent's entry point. Parses kubelet's flags and config file, starts
 * the agent (after the TLS bootstrap of its client certificate with `--bootstrap-kubeconfig`), and
 * stops it on SIGINT/SIGTERM (pods keep running for the next agent to adopt).
 * Exit status: 0 after a signal, 2 for bad flags, 1 when start-up fails.
 */
import { FlagError } from '../flags/flags.js';
import { Agent } from './agent.js';
import { nodeName } from './api/machine.js';
import { agentFlagSet, resolveConfig } from './config.js';
import { bootstrapClientCertificate } from './tls-bootstrap.js';

/** Runs `capstan agent [flags]`; resolves with the exit status. */
export async function runAgentCommand(argv: readonly string[]): Promise<number> {
  const flags = agentFlagSet();
  let config;
  try {
    const parsed = flags.parse(argv);
    if (parsed.help) {
      console.log(`usage: capstan agent [flags]\n\n${flags.usage()}`);
      return 0;
    }
    config = resolveConfig(parsed);
  } catch (err) {
    if (err instanceof FlagError) {
      console.error(`capstan agent: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (config.bootstrapKubeconfig) {
    if (!config.kubeconfig) {
      console.error(
        'capstan agent: --bootstrap-kubeconfig needs --kubeconfig (where the agent writes its own)',
      );
      return 2;
    }
    try {
      await bootstrapClientCertificate({
        kubeconfig: config.kubeconfig,
        bootstrapKubeconfig: config.bootstrapKubeconfig,
        certDir: config.certDir,
        nodeName: nodeName(config.hostnameOverride),
      });
    } catch (err) {
      console.error(`capstan agent: TLS bootstrap failed: ${(err as Error).message}`);
      return 1;
    }
  }
  const agent = new Agent(config);
  try {
    await agent.start();
  } catch (err) {
    console.error(`capstan agent: start-up failed: ${(err as Error).message}`);
    await agent.stop();
    return 1;
  }
  console.log(
    `capstan agent: node ${agent.nodeName} (${agent.nodeIP}) serving on ${config.address}:${agent.port}`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await agent.stop();
  return 0;
}
