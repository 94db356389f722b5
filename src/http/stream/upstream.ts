/**
 * The upstream half of a streaming proxy: a TLS connection to a backend (a node agent), one
 * HTTP/1.1 request written on it by hand (an upgrade request is not something Node's HTTP client
 * hands over byte for byte), and the backend's response head read back, so the caller can relay
 * it verbatim or act on it (a translator needs the 101 and the chosen protocol).
 */
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';

/** Where and how to reach the backend. */
export interface UpstreamTarget {
  readonly host: string;
  readonly port: number;
  /** TLS options: client certificate, CA, server name. */
  readonly tls: ConnectionOptions;
}

/**
 * Opens the TLS connection (HTTP/1.1 only: no ALPN offers h2).
 * @throws Error with the address when the connection or the handshake fails.
 */
export function dialUpstream(target: UpstreamTarget): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      ...target.tls,
      host: target.host,
      port: target.port,
      ALPNProtocols: ['http/1.1'],
    });
    const fail = (err: Error): void => {
      socket.destroy();
      reject(new Error(`dialing ${target.host}:${target.port}: ${err.message}`, { cause: err }));
    };
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

/** The head of an HTTP/1.1 request: request line, `Host`, then `headers` in order. */
export function requestHead(
  method: string,
  path: string,
  host: string,
  headers: readonly (readonly [string, string])[],
): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`];
  for (const [name, value] of headers) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) continue;
    lines.push(`${name}: ${value}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** A response head as read from the wire. */
export interface ResponseHead {
  readonly status: number;
  /** Header values by lower-case name. */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  /** The head's bytes exactly as received (status line to the blank line). */
  readonly raw: Buffer;
  /** Bytes received after the head (the start of the body or of the new protocol). */
  readonly rest: Buffer;
}

const MAX_HEAD_BYTES = 1 << 20;

/**
 * Reads a response head from `conn`; the connection is left paused with its remaining bytes in
 * `rest`.
 * @throws Error when the connection ends first, or the head is malformed or over 1 MiB.
 */
export function readResponseHead(conn: Duplex): Promise<ResponseHead> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const cleanup = (): void => {
      conn.off('data', onData);
      conn.off('end', onEnd);
      conn.off('close', onEnd);
      conn.off('error', onError);
      conn.pause();
    };
    const onEnd = (): void => {
      cleanup();
      reject(new Error('the backend closed the connection before answering'));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      let end = buffer.indexOf('\r\n\r\n');
      let sep = 4;
      if (end < 0) {
        end = buffer.indexOf('\n\n');
        sep = 2;
      }
      if (end < 0) {
        if (buffer.length > MAX_HEAD_BYTES) {
          cleanup();
          reject(new Error('the backend answered a response head over 1 MiB'));
        }
        return;
      }
      cleanup();
      const raw = buffer.subarray(0, end + sep);
      const lines = raw.toString('latin1').split(/\r?\n/);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
      if (!status) {
        reject(new Error(`the backend answered a malformed status line: ${JSON.stringify(lines[0])}`));
        return;
      }
      const headers = new Map<string, string[]>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const list = headers.get(name) ?? [];
        list.push(line.slice(colon + 1).trim());
        headers.set(name, list);
      }
      resolve({ status: Number(status[1]), headers, raw, rest: buffer.subarray(end + sep) });
    };
    conn.on('data', onData);
    conn.once('end', onEnd);
    conn.once('close', onEnd);
    conn.once('error', onError);
  });
}

/** A whole HTTP/1.1 response (for answering on a taken connection), closing the connection. */
export function plainResponse(code: number, reason: string, contentType: string, body: string): string {
  return (
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: ${contentType}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Joins two connections byte for byte until either ends: the end of one ends the other once
 * what was read from it is written (a backend's last bytes, an exit status, reach the client);
 * an error on either destroys both.
 */
export function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  const destroyBoth = (): void => {
    a.destroy();
    b.destroy();
  };
  a.on('error', destroyBoth);
  b.on('error', destroyBoth);
  a.on('close', () => b.end());
  b.on('close', () => a.end());
  a.resume();
  b.resume();
}

/** Headers a proxy never passes on: the client's credentials, impersonation, and `Host`. */
function credentialHeader(lower: string): boolean {
  return lower === 'host' || lower === 'authorization' || lower.startsWith('impersonate-');
}

/**
 * The client's headers (raw, in order, repeated ones kept) to pass to the backend: all but the
 * credentials and `Host`, and but those `drop` names (lower-case).
 */
export function forwardedHeaders(
  rawHeaders: readonly string[],
  drop: (lowerName: string) => boolean = () => false,
): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    const lower = name.toLowerCase();
    if (credentialHeader(lower) || drop(lower)) continue;
    out.push([name, rawHeaders[i + 1] ?? '']);
  }
  return out;
}

/** Reads what is left of a response (up to 64 KiB) until the backend closes or 5 s pass. */
export function readRest(conn: Duplex, first: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks = [first];
    let size = first.length;
    const done = (): void => {
      clearTimeout(timer);
      conn.off('data', onData);
      resolve(Buffer.concat(chunks).subarray(0, 64 * 1024));
      conn.destroy();
    };
    const onData = (c: Buffer): void => {
      chunks.push(c);
      size += c.length;
      if (size >= 64 * 1024) done();
    };
    const timer = setTimeout(done, 5_000);
    conn.on('data', onData);
    conn.once('end', done);
    conn.once('close', done);
    conn.once('error', done);
    conn.resume();
  });
}
