/**
 * Port forwarding for WebSocket clients that tunnel SPDY (kubectl 1.31 and later, feature
 * `PortForwardWebsockets`), as kube-apiserver's tunneling handler does: the client offers
 * subprotocols `SPDY/3.1+<protocol>` (`SPDY/3.1+portforward.k8s.io`) and, once upgraded, sends
 * and receives raw SPDY bytes as the payloads of binary WebSocket messages. Here the agent is
 * asked for an ordinary SPDY/3.1 upgrade with those protocols; when it switches, the client's
 * handshake is answered with `SPDY/3.1+` and the protocol the agent chose, and the bytes are
 * relayed unchanged between message payloads and the agent's connection. An agent that does not
 * switch has its answer replayed to the client as it is.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  dialUpstream,
  forwardedHeaders,
  plainResponse,
  readResponseHead,
  requestHead,
  type UpstreamTarget,
} from './upstream.js';
import {
  handshakeProblem,
  handshakeResponse,
  isWebSocketRequest,
  offeredSubprotocols,
  WebSocketConnection,
} from './websocket.js';

/** The prefix of tunneling subprotocols. */
export const TUNNELING_PREFIX = 'SPDY/3.1+';

/** The SPDY protocols a WebSocket request asks to tunnel (prefix removed), in its order. */
export function tunneledProtocols(headers: IncomingHttpHeaders): string[] {
  if (!isWebSocketRequest(headers)) return [];
  return offeredSubprotocols(headers)
    .filter((p) => p.startsWith(TUNNELING_PREFIX) && p.endsWith('.k8s.io'))
    .map((p) => p.slice(TUNNELING_PREFIX.length));
}

/**
 * Serves one tunneled session: the client's WebSocket on `client` to the agent's SPDY at
 * `target` + `path`. Resolves when the session is set up or refused, with the HTTP code kube's
 * `apiserver_stream_tunnel_requests_total` counts it under (101 once switched, else the refusal's
 * code); never rejects.
 */
export async function tunnelStream(
  client: { readonly connection: Duplex; readonly head: Buffer },
  request: { readonly method: string; readonly headers: IncomingHttpHeaders; readonly rawHeaders: string[] },
  target: UpstreamTarget,
  path: string,
): Promise<number> {
  const { connection } = client;
  const fail = (code: number, reason: string, text: string): number => {
    connection.end(plainResponse(code, reason, 'text/plain; charset=utf-8', `${text}\n`));
    return code;
  };
  const protocols = tunneledProtocols(request.headers);
  if (protocols.length === 0)
    return fail(400, 'Bad Request', 'unable to upgrade: no tunneling spdy protocols provided');
  const problem = handshakeProblem(request.method, request.headers);
  if (problem !== undefined) return fail(400, 'Bad Request', problem);

  let upstream: Duplex;
  try {
    upstream = await dialUpstream(target);
  } catch (err) {
    return fail(500, 'Internal Server Error', `error dialing backend: ${(err as Error).message}`);
  }
  const drop = (h: string): boolean =>
    h === 'connection' ||
    h === 'upgrade' ||
    h === 'content-length' ||
    h === 'x-stream-protocol-version' ||
    h.startsWith('sec-websocket-');
  upstream.write(
    requestHead('POST', path, `${target.host}:${target.port}`, [
      ...forwardedHeaders(request.rawHeaders, drop),
      ['Connection', 'Upgrade'],
      ['Upgrade', 'SPDY/3.1'],
      ...protocols.map((p) => ['X-Stream-Protocol-Version', p] as const),
      ['Content-Length', '0'],
    ]),
  );
  connection.once('close', () => upstream.destroy());
  let head;
  try {
    head = await readResponseHead(upstream);
  } catch (err) {
    upstream.destroy();
    return fail(
      500,
      'Internal Server Error',
      `error reading the backend's answer: ${(err as Error).message}`,
    );
  }
  const upgrade = (head.headers.get('upgrade')?.[0] ?? '').toLowerCase();
  const connectionHeader = (head.headers.get('connection')?.[0] ?? '').toLowerCase();
  if (head.status !== 101) {
    // Not switching: the client gets the agent's answer as it is.
    connection.write(head.raw);
    connection.write(head.rest);
    upstream.pipe(connection);
    upstream.resume();
    return head.status;
  }
  if (!connectionHeader.includes('upgrade') || !upgrade.includes('spdy/3.1')) {
    upstream.destroy();
    return fail(500, 'Internal Server Error', 'unable to upgrade: missing upgrade headers in response');
  }
  const chosen = head.headers.get('x-stream-protocol-version')?.[0]?.trim() ?? '';
  connection.write(
    handshakeResponse(
      request.headers['sec-websocket-key'] ?? '',
      chosen === '' ? undefined : `${TUNNELING_PREFIX}${chosen}`,
    ),
  );
  relay(client, upstream, head.rest);
  return 101;
}

/** Relays WebSocket message payloads to `upstream` and its bytes back as binary messages. */
function relay(
  client: { readonly connection: Duplex; readonly head: Buffer },
  upstream: Duplex,
  rest: Buffer,
): void {
  const ws = new WebSocketConnection(
    client.connection,
    {
      message: (data) => {
        if (!upstream.write(data)) {
          ws.pause();
          upstream.once('drain', () => ws.resume());
        }
      },
      closed: () => upstream.end(),
    },
    client.head,
  );
  const forward = (chunk: Buffer): void => {
    if (!ws.send(chunk)) {
      upstream.pause();
      void ws.drained().then(() => upstream.resume());
    }
  };
  if (rest.length > 0) forward(rest);
  upstream.on('data', forward);
  const finish = (): void => {
    ws.close();
    client.connection.end();
  };
  upstream.once('end', finish);
  upstream.once('close', finish);
  upstream.once('error', () => ws.destroy());
  upstream.resume();
}
