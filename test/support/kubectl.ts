/**
 * Stock kubectl binaries (Google Cloud SDK's `kubectl.1.27` … `kubectl.1.33`) run against a test
 * server. Each kubeconfig gets its own discovery cache directory beside it, so servers that
 * reuse a port never see each other's cached discovery.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Minor versions the machine provides. */
export const KUBECTL_VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'] as const;
/** One of {@link KUBECTL_VERSIONS}. */
export type KubectlVersion = (typeof KUBECTL_VERSIONS)[number];

const KUBECTL_DIR = process.env['CAPSTAN_KUBECTL_DIR'] ?? '/usr/lib/google-cloud-sdk/bin';

/** The binary of a version, or undefined when it is not installed. */
export function kubectlPath(version: KubectlVersion): string | undefined {
  const path = join(KUBECTL_DIR, `kubectl.${version}`);
  return existsSync(path) ? path : undefined;
}

/** How a kubectl run ended. */
export interface KubectlResult {
  /** Exit status (non-zero on failure; kubectl errors are not thrown). */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** How many times kubectl ran: more than 1 after a voided `exec` (see {@link EXEC_CLIENT_RACE}). */
  readonly runs?: number;
}

/**
 * kubectl 1.30–1.33's WebSocket exec client starts reading the connection before it has
 * registered its streams, and drops what arrives in between with this log line (kubernetes
 * issue #131189, fixed in client-go 1.34 by #131203). On a loaded machine a short command can
 * finish inside that window: kubectl then loses its output and exit status and fails with
 * "closed all streams" or prints nothing. The server's order is kube-apiserver's (the
 * handshake, then the agent is dialed), so the only cure is the client's: such a run says by
 * itself that its result is void.
 */
const EXEC_CLIENT_RACE = /Unknown stream id \d+, discarding message/;

/** Runs of an `exec` or `cp` whose result kubectl voided (see {@link EXEC_CLIENT_RACE}) before it gives up. */
const EXEC_RACE_RUNS = 3;

/**
 * The commands that stream over exec: `exec` itself, and `cp`, which runs `tar` in the container
 * through it (a voided `cp` reads "archive/tar: invalid tar header").
 */
const EXEC_COMMANDS: ReadonlySet<string> = new Set(['exec', 'cp']);

/**
 * Runs `run` again while it is an exec-based command (`exec`, `cp`) that kubectl reports as
 * voided by its own stream race; the commands tests run this way are idempotent (a copy of the
 * same file). Any other outcome, failures included, is returned.
 */
async function retryingExecRace(
  args: readonly string[],
  run: () => Promise<KubectlResult>,
): Promise<KubectlResult> {
  let res = await run();
  let runs = 1;
  while (runs < EXEC_RACE_RUNS && EXEC_COMMANDS.has(args[0] ?? '') && EXEC_CLIENT_RACE.test(res.stderr)) {
    process.stderr.write(`kubectl ${args.join(' ')}: client stream race (kubernetes#131189), run again\n`);
    res = await run();
    runs++;
  }
  return { ...res, runs };
}

/**
 * Runs `kubectl.<version> --kubeconfig <path> <args>`; never rejects for a non-zero exit. An
 * `exec` that kubectl's own stream race voided is run again (see {@link EXEC_CLIENT_RACE}).
 * @throws Error when the binary is missing or does not finish within `timeoutMs`.
 */
export function runKubectl(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  timeoutMs = 60_000,
): Promise<KubectlResult> {
  return retryingExecRace(args, () => runKubectlOnce(version, args, kubeconfigPath, timeoutMs));
}

function runKubectlOnce(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  timeoutMs: number,
): Promise<KubectlResult> {
  const bin = kubectlPath(version);
  if (bin === undefined)
    return Promise.reject(new Error(`kubectl ${version} is not installed in ${KUBECTL_DIR}`));
  const cacheDir = join(dirname(kubeconfigPath), `kubectl-cache-${version}`);
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, ...args],
      { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: '' } },
      (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') {
          reject(new Error(`kubectl ${version} did not run: ${err.message}`, { cause: err }));
          return;
        }
        resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
      },
    );
  });
}

/**
 * {@link runKubectl} for a command that must succeed: resolves with its stdout.
 * @throws Error with kubectl's stderr on a non-zero exit.
 */
export async function kubectlOutput(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  timeoutMs?: number,
): Promise<string> {
  const res = await runKubectl(version, args, kubeconfigPath, timeoutMs);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
  return res.stdout;
}

/** Options of {@link kubectlProcess} and {@link runKubectlWith}. */
export interface KubectlRunOptions {
  /** Written to kubectl's stdin, which is then closed (default: stdin closed at once). */
  readonly input?: string | Buffer;
  /** Environment added to the test's (`KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`, ...). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts `kubectl.<version> --kubeconfig <path> <args>` as a child process (long-running commands:
 * `port-forward`); the caller kills it.
 * @throws Error when the binary is missing.
 */
export function kubectlProcess(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  opts: KubectlRunOptions = {},
): ChildProcessWithoutNullStreams {
  const bin = kubectlPath(version);
  if (bin === undefined) throw new Error(`kubectl ${version} is not installed in ${KUBECTL_DIR}`);
  const cacheDir = join(dirname(kubeconfigPath), `kubectl-cache-${version}`);
  const child = spawn(bin, ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, ...args], {
    env: { ...process.env, KUBECONFIG: '', ...opts.env },
  });
  child.stdin.end(opts.input ?? '');
  return child;
}

/**
 * {@link runKubectl} with stdin and environment (`exec -i`, `attach -i`, `cp`); never rejects for
 * a non-zero exit. A voided `exec` is run again with the same input, as in {@link runKubectl}.
 * @throws Error when the binary is missing or does not finish within `timeoutMs`.
 */
export function runKubectlWith(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  opts: KubectlRunOptions = {},
  timeoutMs = 60_000,
): Promise<KubectlResult> {
  return retryingExecRace(args, () => runKubectlWithOnce(version, args, kubeconfigPath, opts, timeoutMs));
}

function runKubectlWithOnce(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  opts: KubectlRunOptions,
  timeoutMs: number,
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = kubectlProcess(version, args, kubeconfigPath, opts);
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kubectl ${args.join(' ')} did not finish within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * Runs kubectl 1.33 with `args` (and `body`, as JSON, for `-f`); answers the `Warning:` lines it
 * printed, without the prefix.
 * @throws Error when kubectl exits non-zero (its stderr in the message).
 */
export async function kubectlWarnings(
  kubeconfigPath: string,
  args: readonly string[],
  body?: unknown,
): Promise<string[]> {
  let all = args;
  if (body !== undefined) {
    const file = join(mkdtempSync(join(tmpdir(), 'kubectl-body-')), 'body.json');
    writeFileSync(file, JSON.stringify(body));
    all = [...args, '-f', file];
  }
  const res = await runKubectl('1.33', all, kubeconfigPath);
  if (res.code !== 0) throw new Error(`kubectl ${all.join(' ')}: exit ${res.code}: ${res.stderr}`);
  return res.stderr
    .split('\n')
    .filter((l) => l.startsWith('Warning: '))
    .map((l) => l.slice('Warning: '.length));
}
