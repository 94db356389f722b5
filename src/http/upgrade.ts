/**
 * HTTP/1.1 upgrades (`Connection: Upgrade`: SPDY/3.1 and WebSocket) through the normal request
 * pipeline. Node hands an upgrade request to the server's `'upgrade'` event with the raw
 * connection instead of to the request handler; {@link installUpgrades} routes it into the
 * fastify app anyway, with a response bound to that connection, so authentication, audit, flow
 * control, authorization and the routes treat it as any other request. A route that serves
 * upgrades takes the connection with {@link takeUpgrade} (the reply is hijacked; from then on the
 * bytes are the route's); one that does not answers normally and the connection closes after
 * the answer (an upgrade request is never kept alive).
 *
 * HTTP/2 has no upgrade: such a request reaches the routes as an ordinary request, and
 * {@link takeUpgrade} answers undefined for it.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The response of a request that came through `'upgrade'`. Until a route takes the connection
 * it is an ordinary HTTP/1.1 response (with `Connection: close`); after, `end()` (what a
 * graceful shutdown calls on long-running responses) ends the connection instead of writing a
 * response into the upgraded byte stream. It closes when the connection closes.
 */
class UpgradeResponse extends ServerResponse {
  readonly upgraded: Duplex;
  readonly head: Buffer;
  #taken = false;

  constructor(req: IncomingMessage, connection: Duplex, head: Buffer) {
    super(req);
    this.upgraded = connection;
    this.head = head;
    this.shouldKeepAlive = false;
    this.assignSocket(connection as Socket);
    // Nothing else reads this connection: once the answer is out, it is closed.
    this.once('finish', () => {
      if (!this.#taken) connection.end();
    });
  }

  /** The route owns the connection from now on. */
  take(): void {
    this.#taken = true;
  }

  override end(...args: unknown[]): this {
    if (this.#taken) {
      this.upgraded.end();
      return this;
    }
    return (ServerResponse.prototype.end as unknown as (...a: unknown[]) => this).apply(this, args);
  }
}

/** True when the request asks to switch protocols (`Connection: Upgrade` with `Upgrade`). */
export function isUpgradeRequest(headers: IncomingMessage['headers']): boolean {
  const connection = headers.connection;
  const tokens = (Array.isArray(connection) ? connection.join(',') : (connection ?? ''))
    .toLowerCase()
    .split(',')
    .map((t) => t.trim());
  return tokens.includes('upgrade') && typeof headers.upgrade === 'string' && headers.upgrade !== '';
}

/**
 * Routes the upgrade requests of `app`'s server into the app (see the module comment). Call
 * before the server listens: Node only reports upgrades to a server that has an `'upgrade'`
 * listener (without one the request would reach the handler with the connection still parsed
 * as HTTP).
 */
export function installUpgrades(app: FastifyInstance): void {
  app.server.on('upgrade', (req: IncomingMessage, connection: Duplex, head: Buffer) => {
    connection.on('error', () => connection.destroy());
    app.routing(req, new UpgradeResponse(req, connection, head));
  });
}

/** An upgraded connection a route took over. */
export interface TakenUpgrade {
  /** The client's connection, positioned after the request's headers. */
  readonly connection: Duplex;
  /** Bytes the client sent after the headers (usually none: clients wait for the 101). */
  readonly head: Buffer;
}

/**
 * Takes the connection of an upgrade request: the reply is hijacked (fastify writes nothing
 * more), and the caller answers on the connection itself (a 101 and the new protocol, or an
 * HTTP error). Undefined when the request did not come through an upgrade (HTTP/2, or no
 * `Upgrade` header): the caller answers through `reply`.
 */
export function takeUpgrade(request: FastifyRequest, reply: FastifyReply): TakenUpgrade | undefined {
  const res = reply.raw as unknown;
  if (!(res instanceof UpgradeResponse) || request.raw !== res.req) return undefined;
  void reply.hijack();
  res.take();
  return { connection: res.upgraded, head: res.head };
}
