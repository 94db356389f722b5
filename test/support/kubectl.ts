/**
 * Stock kubectl binaries (Google Cloud SDK's `kubectl.1.27` … `kubectl.1.33`) run against a test
 * server. Each kubeconfig gets its own discovery cache directory beside it, so servers that
 * reuse a port never see each other's cached discovery.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
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
}

/**
 * Runs `kubectl.<version> --kubeconfig <path> <args>`; never rejects for a non-zero exit.
 * @throws Error when the binary is missing or does not finish within `timeoutMs`.
 */
export function runKubectl(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  timeoutMs = 60_000,
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
 * a non-zero exit.
 * @throws Error when the binary is missing or does not finish within `timeoutMs`.
 */
export function runKubectlWith(
  version: KubectlVersion,
  args: readonly string[],
  kubeconfigPath: string,
  opts: KubectlRunOptions = {},
  timeoutMs = 60_000,
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
