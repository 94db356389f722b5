/**
 * `capstan server` as a command: parse the flags, start, print where the admin kubeconfig is,
 * serve until SIGTERM or SIGINT, shut down gracefully. Exit status: 0 after a clean shutdown (or
 * `--help`), 2 for bad flags, 1 when the server cannot start. A second signal during shutdown
 * exits at once with status 1, as kube-apiserver does.
 */
import { startupTrace } from './startup-trace.js';
import { FlagError } from '../flags/flags.js';
import { notImplementedWarnings, parseServerArgs, serverHelp } from './options.js';
import { ServerLog } from './log.js';
import { servedUrls } from '../pki/served-addresses.js';
import { startServer, type RunningServer, type ServingServer } from './server.js';

/** Output streams of the command (tests pass their own). */
export interface CommandIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const PROCESS_IO: CommandIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a command built on the server runs beside it (`capstan cluster`'s nodes): started once the
 * server serves (before its controller manager and scheduler, which do not wait for it), stopped
 * before it shuts down.
 */
export type Companion = (server: ServingServer, io: CommandIo) => Promise<() => Promise<void>>;

/** Runs `capstan server <argv>` until a signal; resolves with the exit status. */
export async function runServerCommand(
  argv: readonly string[],
  io: CommandIo = PROCESS_IO,
  companion?: Companion,
): Promise<number> {
  startupTrace('main');
  let parsed;
  try {
    parsed = parseServerArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.err(`Error: ${err.message}`);
    io.err("Run 'capstan server --help' for usage.");
    return 2;
  }
  if (parsed.help) {
    io.out(serverHelp());
    return 0;
  }
  const { options } = parsed;
  const log = new ServerLog(io.err);
  for (const warning of notImplementedWarnings(options)) log.warn(warning);

  // Signals are handled from before the start: /healthz can answer before startServer resolves
  // (the kubernetes Service is reconciled beside the post-start hooks), so a supervisor may stop
  // the server then. A signal during the start stops it once started; a second one exits at once.
  let signalled = false;
  let stopRequested!: () => void;
  const stopping = new Promise<void>((resolve) => (stopRequested = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      io.err(`received ${signal} again: exiting without finishing the shutdown`);
      process.exit(1);
    }
    signalled = true;
    log.warn(`received ${signal}: shutting down`);
    stopRequested();
  };
  const release = (): void => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  // The companion starts before startServer resolves; its stdout lines follow the server's.
  const held: string[] = [];
  let holding = true;
  const companionIo: CommandIo = {
    out: (line) => (holding ? void held.push(line) : io.out(line)),
    err: io.err,
  };
  let companionStarting: Promise<() => Promise<void>> | undefined;
  const serving = (s: ServingServer): void => {
    companionStarting = companion?.(s, companionIo);
    companionStarting?.catch(() => undefined); // awaited below
  };
  let server: RunningServer;
  try {
    server = await startServer(options, { log, serving });
  } catch (err) {
    release();
    io.err(`Error: ${describe(err)}`);
    await companionStarting?.then((stop) => stop()).catch(() => undefined);
    return 1;
  }
  io.out(`admin kubeconfig: ${server.kubeconfigPath}`);
  io.out(
    `serving on ${servedUrls(options.bindAddress, server.port).join(', ')} (store: ${server.storeLocation})`,
  );
  io.out(`try: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces`);
  holding = false;
  for (const line of held.splice(0)) io.out(line);
  let stopCompanion: (() => Promise<void>) | undefined;
  if (companionStarting !== undefined) {
    try {
      stopCompanion = await companionStarting;
    } catch (err) {
      io.err(`Error: ${describe(err)}`);
      await server.shutdown();
      release();
      return 1;
    }
  }

  await stopping;
  try {
    await stopCompanion?.();
  } catch (err) {
    log.error('stopping the nodes failed', err);
  }
  try {
    await server.shutdown();
  } catch (err) {
    log.error('shutdown failed', err);
    return 1;
  }
  release();
  return 0;
}
