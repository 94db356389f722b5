/**
 * A throwaway local etcd for tests and benchmarks: one member on free 127.0.0.1 ports with a
 * fresh data directory, started from Debian's `/usr/bin/etcd` (override with `CAPSTAN_ETCD_BIN`).
 *
 * The child dies with its parent: on Linux it is started through `setpriv --pdeathsig SIGKILL`
 * when available (this also covers a parent killed with SIGKILL), and an `exit` hook kills it
 * otherwise.
 *
 * @example
 * ```ts
 * const etcd = await startEtcd();
 * const store = await openEtcdStore({ endpoints: etcd.endpoints });
 * // ...
 * await store.close();
 * await etcd.stop();
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Default etcd binary (Debian's etcd-server package). */
export const ETCD_BINARY = process.env['CAPSTAN_ETCD_BIN'] ?? '/usr/bin/etcd';
const SETPRIV = '/usr/bin/setpriv';

/** TLS for the client port (peer traffic stays on plain loopback). PEM file paths. */
export interface LocalEtcdTls {
  readonly certFile: string;
  readonly keyFile: string;
  /**
   * CA that client certificates must chain to; with it, etcd requires client certificates. The
   * readiness probe then presents `certFile`, so that certificate must also allow client auth.
   */
  readonly clientCaFile?: string;
}

/** Options of {@link startEtcd}. */
export interface StartEtcdOptions {
  /** Data directory to use (it is kept by `stop()`). Unset: a fresh temporary one that `stop()` removes. */
  readonly dataDir?: string;
  /** Serve clients over TLS. */
  readonly tls?: LocalEtcdTls;
  /** More etcd flags, e.g. `['--experimental-watch-progress-notify-interval=1s']`. */
  readonly extraArgs?: readonly string[];
  /** How long to wait for the member to report healthy (default 30 000 ms). */
  readonly startTimeoutMs?: number;
  /** Member name (default `capstan-test`); a cluster's members differ. */
  readonly name?: string;
  /** `--initial-cluster` (default: this member alone). */
  readonly initialCluster?: string;
}

/** A running local etcd. */
export interface LocalEtcd {
  /** Client URLs (`http://127.0.0.1:port`, or `https://` with TLS); stable across restarts. */
  readonly endpoints: string[];
  readonly dataDir: string;
  /** Process id of the current etcd process (the last one after it exited). */
  readonly pid: number;
  /** Stops etcd (SIGTERM, then SIGKILL after 5 s) and removes a temporary data dir. Idempotent. */
  stop(): Promise<void>;
  /** Kills etcd with SIGKILL, keeping the data dir (to simulate a crash before `restart()`). */
  kill(): Promise<void>;
  /** Starts etcd again on the same data dir and ports (killing it first if running); waits until healthy. */
  restart(): Promise<void>;
}

/** A member's client and peer ports. */
export interface Ports {
  readonly client: number;
  readonly peer: number;
}

/** Starts a single-member etcd and resolves once it is healthy. */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<LocalEtcd> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'capstan-etcd-')));
  try {
    // Free ports are only free until etcd binds them; retry with new ones if another process won.
    for (let attempt = 1; ; attempt++) {
      const ports = { client: await freePort(), peer: await freePort() };
      try {
        const member = new Member(dataDir, ports, options);
        await member.start();
        return new Handle(member, dataDir, ownDir);
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  } catch (err) {
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

class Handle implements LocalEtcd {
  readonly endpoints: string[];
  #stopped = false;

  constructor(
    readonly member: Member,
    readonly dataDir: string,
    readonly ownDir: boolean,
  ) {
    this.endpoints = [member.endpoint];
  }

  get pid(): number {
    return this.member.pid;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.member.terminate('SIGTERM');
    if (this.ownDir) await rm(this.dataDir, { recursive: true, force: true });
  }

  kill(): Promise<void> {
    return this.member.terminate('SIGKILL');
  }

  async restart(): Promise<void> {
    if (this.#stopped) throw new Error('etcd-local: restart after stop()');
    await this.member.terminate('SIGKILL');
    await this.member.start();
  }
}

/** One etcd process slot: data dir and ports fixed, the process replaced on restart. */
export class Member {
  readonly endpoint: string;
  #child: ChildProcess | undefined;
  #pid = -1;
  #exited: Promise<void> = Promise.resolve();
  #stderr = '';
  readonly #onParentExit = (): void => {
    this.#child?.kill('SIGKILL');
  };

  constructor(
    readonly dataDir: string,
    readonly ports: Ports,
    readonly options: StartEtcdOptions,
  ) {
    this.endpoint = `${options.tls ? 'https' : 'http'}://127.0.0.1:${ports.client}`;
  }

  /** The current process, or the last one once it exited. */
  get pid(): number {
    return this.#pid;
  }

  async start(): Promise<void> {
    const peer = `http://127.0.0.1:${this.ports.peer}`;
    const tls = this.options.tls;
    const name = this.options.name ?? 'capstan-test';
    const args = [
      `--name=${name}`,
      `--data-dir=${this.dataDir}`,
      `--listen-client-urls=${this.endpoint}`,
      `--advertise-client-urls=${this.endpoint}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${this.options.initialCluster ?? `${name}=${peer}`}`,
      '--logger=zap',
      '--log-outputs=stderr',
      '--log-level=error',
      ...(tls === undefined ? [] : [`--cert-file=${tls.certFile}`, `--key-file=${tls.keyFile}`]),
      ...(tls?.clientCaFile === undefined
        ? []
        : [`--trusted-ca-file=${tls.clientCaFile}`, '--client-cert-auth']),
      ...(this.options.extraArgs ?? []),
    ];
    const [command, argv] = existsSync(SETPRIV)
      ? [SETPRIV, ['--pdeathsig', 'SIGKILL', ETCD_BINARY, ...args]]
      : [ETCD_BINARY, args];
    this.#stderr = '';
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    this.#pid = child.pid ?? -1;
    process.on('exit', this.#onParentExit);
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-4096);
    });
    let exitedEarly: ((err: Error) => void) | undefined;
    this.#exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        process.off('exit', this.#onParentExit);
        if (this.#child === child) this.#child = undefined;
        exitedEarly?.(
          new Error(`etcd exited (${signal ?? String(code)}) before it was healthy: ${this.#stderr.trim()}`),
        );
        resolve();
      });
      child.once('error', (err) => {
        exitedEarly?.(err);
        resolve();
      });
    });
    const died = new Promise<never>((_, reject) => {
      exitedEarly = reject;
    });
    died.catch(() => undefined);
    try {
      await Promise.race([this.#waitHealthy(this.options.startTimeoutMs ?? 30_000), died]);
    } catch (err) {
      await this.terminate('SIGKILL');
      throw err;
    } finally {
      exitedEarly = undefined;
    }
  }

  async terminate(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await this.#exited;
    clearTimeout(timer);
  }

  async #waitHealthy(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (await this.#healthy()) return;
      if (Date.now() > until)
        throw new Error(`etcd at ${this.endpoint} not healthy after ${timeoutMs} ms: ${this.#stderr.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** etcd's `/health` on the client port reports true once the member has a leader. */
  #healthy(): Promise<boolean> {
    const tls = this.options.tls;
    return new Promise((resolve) => {
      const url = new URL('/health', this.endpoint);
      const onResponse = (res: IncomingMessage): void => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
        res.on('error', () => resolve(false));
      };
      const req =
        tls === undefined
          ? httpRequest(url, { timeout: 1_000 }, onResponse)
          : httpsRequest(
              url,
              {
                timeout: 1_000,
                // Only readiness matters here; the store under test verifies the server itself.
                rejectUnauthorized: false,
                // With client-certificate auth, the probe presents the server's own pair, so test
                // certificates for it must allow client auth too.
                ...(tls.clientCaFile === undefined
                  ? {}
                  : { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }),
              },
              onResponse,
            );
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
      req.end();
    });
  }
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
