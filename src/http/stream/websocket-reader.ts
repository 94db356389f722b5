/**
 * A response byte stream (a container's log) sent over WebSocket, as kube-apiserver sends a
 * streamed answer to a client that asked for it with a WebSocket handshake (apimachinery's
 * `wsstream.Reader`):
 *
 * - the subprotocol is the first the client offers among `binary.k8s.io` (binary messages) and
 *   `base64.binary.k8s.io` (text messages holding base64); a client that offers none gets binary;
 *   one that offers only others gets 403;
 * - each chunk read from the stream is one message, with no channel byte;
 * - the end of the stream closes the WebSocket normally, and a client that goes away ends the
 *   stream (what the client sends is ignored).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { TakenUpgrade } from '../upgrade.js';
import { plainResponse } from './upstream.js';
import {
  handshakeProblem,
  handshakeResponse,
  offeredSubprotocols,
  OPCODE,
  WebSocketConnection,
} from './websocket.js';

/** The subprotocols a streamed answer is offered in, and whether each is binary. */
const READER_PROTOCOLS: ReadonlyMap<string, boolean> = new Map([
  ['', true],
  ['binary.k8s.io', true],
  ['base64.binary.k8s.io', false],
]);

/** The subprotocol chosen for `headers`, or undefined when the client offers none we speak. */
export function readerProtocol(headers: IncomingHttpHeaders): string | undefined {
  const offered = offeredSubprotocols(headers);
  return (offered.length === 0 ? [''] : offered).find((p) => READER_PROTOCOLS.has(p));
}

/**
 * Answers the handshake of `client` and sends `body` over it (see the module comment). Resolves
 * when the WebSocket is done; `body` is destroyed if the client leaves first.
 */
export async function streamOverWebSocket(
  client: TakenUpgrade,
  request: { readonly method: string; readonly headers: IncomingHttpHeaders },
  body: Readable,
): Promise<void> {
  const protocol = readerProtocol(request.headers);
  const problem =
    handshakeProblem(request.method, request.headers) ??
    (protocol === undefined
      ? `requested protocol(s) are not supported: [${offeredSubprotocols(request.headers).join(' ')}]; supports [${[...READER_PROTOCOLS.keys()].join(' ')}]`
      : undefined);
  if (problem !== undefined || protocol === undefined) {
    body.destroy();
    client.connection.end(plainResponse(403, 'Forbidden', 'text/plain', `${problem ?? ''}\n`));
    return;
  }
  const binary = READER_PROTOCOLS.get(protocol) ?? true;
  client.connection.write(handshakeResponse(request.headers['sec-websocket-key'] ?? '', protocol));
  let gone = false;
  const ws = new WebSocketConnection(
    client.connection,
    {
      message: () => undefined,
      closed: () => {
        gone = true;
        body.destroy();
      },
    },
    client.head,
  );
  try {
    for await (const chunk of body) {
      if (gone) break;
      const bytes = chunk as Buffer;
      const sent = binary
        ? ws.send(bytes, OPCODE.binary)
        : ws.send(Buffer.from(bytes.toString('base64')), OPCODE.text);
      if (!sent) await ws.drained();
    }
  } catch {
    // The stream broke off (the agent went away, or the client did): close what is left.
  }
  ws.close();
  client.connection.end();
}
