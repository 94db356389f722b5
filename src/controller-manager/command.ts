/**
 * `capstan controller-manager` as a command: parse the flags, connect (`--kubeconfig`, else the
 * in-cluster configuration; `--master` overrides the server), serve health, run the controllers
 * until SIGTERM or SIGINT. Exit status: 0 after a clean stop (or `--help`), 2 for bad flags, 1
 * when it cannot start.
 */
import { FlagError } from '../flags/flags.js';
import { inClusterConfig, loadKubeconfig, type ClientConfig } from '../client/index.js';
import { controllerManagerHelp, notImplementedWarnings, parseControllerManagerArgs } from './options.js';
import { startControllerManager, type ManagerLog } from './manager.js';
import { startHealthServer } from './health.js';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Timestamped lines on stderr, as klog's. */
const STDERR_LOG: ManagerLog = {
  info: (line) => process.stderr.write(`I ${new Date().toISOString()} ${line}\n`),
  warn: (line) => process.stderr.write(`W ${new Date().toISOString()} ${line}\n`),
  error: (line, err) =>
    process.stderr.write(
      `E ${new Date().toISOString()} ${line}${err === undefined ? '' : `: ${describe(err)}`}\n`,
    ),
};

/** Runs `capstan controller-manager <argv>` until a signal; resolves with the exit status. */
export async function runControllerManagerCommand(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseControllerManagerArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`Error: ${err.message}\nRun 'capstan controller-manager --help' for usage.\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(`${controllerManagerHelp()}\n`);
    return 0;
  }
  const { options } = parsed;
  for (const w of notImplementedWarnings(argv)) STDERR_LOG.warn(w);
  let clientConfig: ClientConfig;
  try {
    clientConfig = options.kubeconfig === '' ? inClusterConfig() : loadKubeconfig(options.kubeconfig);
    if (options.master !== '') clientConfig = { ...clientConfig, server: options.master };
  } catch (err) {
    process.stderr.write(`Error: ${describe(err)}\n`);
    return 1;
  }
  let manager;
  try {
    manager = startControllerManager({ clientConfig, options, log: STDERR_LOG });
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`Error: ${err.message}\n`);
    return 2;
  }
  let health;
  if (options.securePort !== 0) {
    try {
      health = await startHealthServer(manager, options.bindAddress, options.securePort);
      STDERR_LOG.info(`serving /healthz and /metrics on port ${health.port}`);
    } catch (err) {
      await manager.stop();
      process.stderr.write(`Error: cannot listen on --secure-port ${options.securePort}: ${describe(err)}\n`);
      return 1;
    }
  }
  const running = manager;
  const listener = health;
  return new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      STDERR_LOG.warn(`received ${signal}: stopping`);
      Promise.all([running.stop(), listener?.close()]).then(
        () => resolve(0),
        (err: unknown) => {
          STDERR_LOG.error('stopping failed', err);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
