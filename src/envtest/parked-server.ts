/**
 * `capstan envtest-parked-server`, a hidden command started only by the envtest assets' etcd
 * stand-in (etcd-standin.ts): it loads the server's code at once, then waits for the
 * kube-apiserver shim's arguments on stdin (one line, a JSON array of strings) and runs
 * `capstan server` with them, exactly as the shim's cold start would. stdin closed before any
 * arguments (the stand-in stopped without a kube-apiserver start): exit 0. Once the stand-in that
 * started it is gone, nobody will stop the server: it stops itself as on SIGTERM.
 */
import type { Readable } from 'node:stream';

/** The first line of `input`, or undefined when it ends before one. */
async function firstLine(input: Readable): Promise<string | undefined> {
  let text = '';
  input.setEncoding('utf8');
  for await (const chunk of input) {
    text += chunk as string;
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end);
  }
  return text === '' ? undefined : text;
}

function parseArgs(line: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return Array.isArray(value) && value.every((a) => typeof a === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the command; resolves with the server's exit status. */
export async function runParkedServerCommand(): Promise<number> {
  // The server's code, and the app module its start imports lazily, are loaded while envtest
  // waits for etcd: a start then only runs it.
  const [{ runServerCommand }, { startupTrace }] = await Promise.all([
    import('../server/run.js'),
    import('../server/startup-trace.js'),
    import('../server/app.js'),
  ]);
  startupTrace('parked');
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 500);
  orphaned.unref();
  const line = await firstLine(process.stdin);
  process.stdin.destroy();
  if (line === undefined) return 0;
  const argv = parseArgs(line);
  if (argv === undefined) {
    console.error('Error: envtest-parked-server: stdin is not a JSON array of arguments');
    return 2;
  }
  return runServerCommand(argv);
}
