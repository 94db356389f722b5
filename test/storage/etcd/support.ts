/**
 * Shared pieces of the etcd backend's own tests: whether to run them, a local etcd per file, and a
 * TCP proxy in front of etcd that a test can cut (drop every connection) or block (refuse new
 * ones), to inject connection faults between the store and etcd.
 */
import { existsSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { ETCD_BINARY } from '../../../tools/etcd-local.js';

/**
 * True when the etcd tests should run: the binary exists, or `CAPSTAN_REQUIRE_ETCD=1` or `CI=true`
 * demands them (they then fail rather than skip when it is missing).
 */
export const runEtcdTests =
  existsSync(ETCD_BINARY) || process.env['CAPSTAN_REQUIRE_ETCD'] === '1' || process.env['CI'] === 'true';

/** A loopback TCP proxy to one upstream `host:port` whose connections a test can cut. */
export class CuttableProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #blocked = false;
  /** Connections accepted so far (each gRPC reconnect makes one). */
  connections = 0;
  /** Connections refused while blocked. */
  refused = 0;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Starts a proxy on a free 127.0.0.1 port forwarding to `upstream` (`http://host:port` or `host:port`). */
  static async start(upstream: string): Promise<CuttableProxy> {
    const url = new URL(upstream.includes('://') ? upstream : `http://${upstream}`);
    const server = createServer();
    const proxy = new CuttableProxy(server);
    server.on('connection', (client) => proxy.#accept(client, url.hostname, Number(url.port)));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** The proxy's address as an etcd endpoint. */
  get endpoint(): string {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Drops every open connection, both sides, as a network failure would. */
  cut(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  /** While blocked, new connections are closed at once (etcd looks down). */
  block(blocked: boolean): void {
    this.#blocked = blocked;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket, host: string, port: number): void {
    if (this.#blocked) {
      this.refused += 1;
      client.destroy();
      return;
    }
    this.connections += 1;
    const upstream = connect(port, host);
    this.#sockets.add(client);
    this.#sockets.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** UTF-8 bytes of `text`. */
export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Text of `value`. */
export function text(value: Uint8Array): string {
  return new TextDecoder().decode(value);
}

/** Polls `check` every 20 ms until it holds; a hang guard, not a timing assertion. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The member etcd reports as leader (its maintenance status, through the JSON gateway). */
export async function etcdLeaderOf<M extends { readonly endpoint: string }>(
  members: readonly M[],
): Promise<M> {
  for (const m of members) {
    try {
      const res = await fetch(`${m.endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}' });
      const s = (await res.json()) as { header?: { member_id?: string }; leader?: string };
      if (s.leader !== undefined && s.header?.member_id === s.leader) return m;
    } catch {
      // a stopped member
    }
  }
  throw new Error('no leader found');
}
