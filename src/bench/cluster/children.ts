/**
 * The child processes of a cluster bench: every one is started through `setpriv --pdeathsig
 * SIGKILL` where that exists (so it dies even when the bench is killed with SIGKILL), killed by
 * an `exit` hook otherwise, and stopped (SIGTERM, then SIGKILL) by {@link Children.stopAll}. A
 * SIGINT or SIGTERM of the bench stops them all and runs the cleanups (temporary directories)
 * before the bench exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const SETPRIV = '/usr/bin/setpriv';
/** How long a child gets between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** One running child. */
export interface Child {
  /** What the reports call it (`etcd`, `kube-apiserver`, `capstan agent`). */
  readonly name: string;
  /** The process's pid (the binary's own: setpriv execs it). */
  readonly pid: number;
  /** Resolves when it exits, with its last stderr lines. */
  readonly exited: Promise<string>;
  /** Whether it has exited. */
  readonly gone: () => boolean;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

/** A free 127.0.0.1 TCP port (free until someone binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no free port')),
      );
    });
  });
}

function tail(text: string, lines = 3): string {
  return text.trim().split('\n').slice(-lines).join(' | ');
}

/** The children of one run, stopped together. */
export class Children {
  readonly #children: Child[] = [];
  readonly #kill = (): void => {
    for (const c of this.#children)
      if (!c.gone())
        try {
          process.kill(c.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
  };
  readonly #interrupt = (signal: NodeJS.Signals): void => {
    void this.stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  #hooked = false;
  readonly #cleanups: (() => Promise<void>)[] = [];
  readonly #logDir: string | undefined;

  /** With `logDir`, each spawned child's whole stderr is also written to `<logDir>/<name>.log`. */
  constructor(options: { readonly logDir?: string } = {}) {
    this.#logDir = options.logDir;
  }

  /** Starts `file args`; it runs until {@link stopAll} (or its own exit). */
  spawn(name: string, file: string, args: readonly string[], env?: NodeJS.ProcessEnv): Child {
    this.#hook();
    const viaSetpriv = existsSync(SETPRIV);
    const child: ChildProcess = viaSetpriv
      ? spawn(SETPRIV, ['--pdeathsig', 'SIGKILL', '--', file, ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: env ?? process.env,
        })
      : spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: env ?? process.env });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-8192)));
    if (this.#logDir !== undefined)
      child.stderr?.pipe(createWriteStream(join(this.#logDir, `${name.replaceAll(/[^\w.-]+/g, '-')}.log`)));
    let gone = false;
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => {
        gone = true;
        resolve(`${name} exited (${signal ?? `code ${code}`}): ${tail(stderr)}`);
      });
      child.once('error', (err) => {
        gone = true;
        resolve(`${name} did not start: ${err.message}`);
      });
    });
    let stopping: Promise<void> | undefined;
    const handle: Child = {
      name,
      pid: child.pid ?? -1,
      exited,
      gone: () => gone,
      stop: () =>
        (stopping ??= (async () => {
          if (gone) return;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          await exited;
          clearTimeout(timer);
        })()),
    };
    this.#children.push(handle);
    return handle;
  }

  /**
   * Takes a process started elsewhere (`spawnServer`, `spawnScheduler`) into the set, so that
   * {@link stopAll} and an interrupt stop it too.
   */
  adopt(name: string, pid: number, exited: Promise<unknown>, stop: () => Promise<void>): Child {
    this.#hook();
    let gone = false;
    const done = exited.then(() => {
      gone = true;
      return `${name} exited`;
    });
    const handle: Child = { name, pid, exited: done, gone: () => gone, stop };
    this.#children.push(handle);
    return handle;
  }

  /** The children still running. */
  running(): Child[] {
    return this.#children.filter((c) => !c.gone());
  }

  /** Registers a cleanup (a temporary directory's removal) run by {@link stopAll} after the children. */
  addCleanup(step: () => Promise<void>): void {
    this.#cleanups.push(step);
  }

  /**
   * Stops every child, the last started first, then runs the cleanups (failures ignored);
   * unhooks the signal handlers.
   */
  async stopAll(): Promise<void> {
    for (const c of [...this.#children].reverse()) await c.stop();
    this.#children.length = 0;
    for (const step of this.#cleanups.splice(0)) await step().catch(() => undefined);
    if (this.#hooked) {
      process.off('exit', this.#kill);
      process.off('SIGINT', this.#interrupt);
      process.off('SIGTERM', this.#interrupt);
      this.#hooked = false;
    }
  }

  #hook(): void {
    if (this.#hooked) return;
    this.#hooked = true;
    process.on('exit', this.#kill);
    process.once('SIGINT', this.#interrupt);
    process.once('SIGTERM', this.#interrupt);
  }
}
