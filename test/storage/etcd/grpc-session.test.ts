import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GrpcFailure, GrpcSession } from '../../../storage/etcd/grpc-session.js';

/** A gRPC-shaped server on node:http2 (nghttp2: Huffman, dynamic table, CONTINUATION, its own flow control). */
async function grpcServer(
  handle: (stream: ServerHttp2Stream, request: Buffer, path: string) => void,
  settings: { maxConcurrentStreams?: number } = {},
): Promise<{ server: Http2Server; port: number }> {
  const server = createServer({ settings, maxSessionMemory: 200 });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('error', () => {}); // the resets some tests make
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => handle(stream, Buffer.concat(chunks).subarray(5), String(headers[':path'])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Answers with `body` as one gRPC message and the given trailers. */
function reply(
  stream: ServerHttp2Stream,
  body: Buffer,
  trailers: Record<string, string> = { 'grpc-status': '0' },
): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  stream.end(frame);
}

const open: { close(): void }[] = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

function session(port: number): GrpcSession {
  const s = new GrpcSession({ host: '127.0.0.1', port });
  open.push({ close: () => s.destroy() });
  return s;
}

describe('GrpcSession (a gRPC unary client on its own HTTP/2 framing)', () => {
  it('carries requests and responses larger than every default window, many at once', async () => {
    const { server, port } = await grpcServer((stream, request, path) => {
      // Answers 6 MiB (past the 4 MiB call window) derived from the request, to prove both directions.
      const out = Buffer.alloc(path === '/svc/Big' ? 6 << 20 : 16, request[request.length - 1]);
      out.write(path, 0, 'latin1');
      reply(stream, out);
    });
    open.push(server);
    const s = session(port);
    const requests = [1, 2, 3].map((n) => Buffer.alloc(200_000 + n, n));
    const bodies = await Promise.all(requests.map((r) => s.unary('/svc/Big', r).done));
    for (const [i, body] of bodies.entries()) {
      expect(body.length).toBe(6 << 20);
      expect(body.subarray(0, 8).toString('latin1')).toBe('/svc/Big');
      expect(body[body.length - 1]).toBe(i + 1);
    }
    // 200 small calls on one connection (more than the server's stream limit at once).
    const small = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.unary('/svc/Small', Buffer.from([i])).done),
    );
    expect(small.map((b) => b[b.length - 1])).toEqual(Array.from({ length: 200 }, (_, i) => i & 0xff));
  });

  it("queues calls beyond the server's MAX_CONCURRENT_STREAMS", async () => {
    let active = 0;
    let most = 0;
    const { server, port } = await grpcServer(
      (stream) => {
        active += 1;
        most = Math.max(most, active);
        setTimeout(() => {
          active -= 1;
          reply(stream, Buffer.from('ok'));
        }, 5);
      },
      { maxConcurrentStreams: 3 },
    );
    open.push(server);
    const s = session(port);
    await s.unary('/svc/Warm', Buffer.from('x')).done; // the server's SETTINGS have arrived
    const all = await Promise.all(
      Array.from({ length: 12 }, () => s.unary('/svc/Slow', Buffer.from('x')).done),
    );
    expect(all.map(String)).toEqual(Array(12).fill('ok'));
    expect(most).toBe(3);
  });

  it('ends a call with its gRPC status and message, even one split over CONTINUATION frames', async () => {
    const long = 'é'.repeat(5_000); // percent-encoded: 30,000 octets of header value, past one frame
    const { server, port } = await grpcServer((stream, request) => {
      const which = request.toString();
      if (which === 'trailers-only') {
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': '11',
            'grpc-message': 'out%20of%20range',
          },
          { endStream: true },
        );
      } else if (which === 'long') {
        reply(stream, Buffer.alloc(0), { 'grpc-status': '3', 'grpc-message': encodeURIComponent(long) });
      } else if (which === 'http-404') {
        stream.respond({ ':status': 404 }, { endStream: true });
      } else if (which === 'no-status') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        stream.end();
      } else {
        stream.close(0x2); // RST_STREAM INTERNAL_ERROR
      }
    });
    open.push(server);
    const s = session(port);
    const failure = (body: string) =>
      s.unary('/svc/Fail', Buffer.from(body)).done.then(
        () => 'resolved',
        (e: unknown) => e,
      );
    expect(await failure('trailers-only')).toMatchObject({ code: 11, details: 'out of range' });
    expect(await failure('long')).toMatchObject({ code: 3, details: long });
    expect(await failure('http-404')).toMatchObject({ code: 12 });
    expect(await failure('no-status')).toMatchObject({ code: 14, details: 'call ended without a status' });
    const reset = await failure('reset');
    expect(reset).toBeInstanceOf(GrpcFailure);
    expect(reset).toMatchObject({ code: 14 });
    // The connection is still good after all that.
    expect(s.usable).toBe(true);
  });

  it('cancel resets the stream on the wire and ends the call with CANCELLED', async () => {
    const { server, port } = await grpcServer(() => {});
    open.push(server);
    const resetCode = new Promise<number>((resolve) =>
      server.on('stream', (stream) => stream.on('close', () => resolve(stream.rstCode))),
    );
    const call = session(port).unary('/svc/Hang', Buffer.from('x'));
    setTimeout(() => call.cancel(), 20);
    await expect(call.done).rejects.toMatchObject({ code: 1 });
    expect(await resetCode).toBe(8); // CANCEL
  });

  it('fails every open call with UNAVAILABLE when the connection drops, and when nothing listens', async () => {
    const tcp = createTcpServer((socket) => setTimeout(() => socket.destroy(), 50));
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    open.push(tcp);
    const port = (tcp.address() as AddressInfo).port;
    const s = session(port);
    const calls = [s.unary('/svc/A', Buffer.from('a')).done, s.unary('/svc/B', Buffer.from('b')).done];
    for (const c of calls) await expect(c).rejects.toMatchObject({ code: 14 });
    expect(s.usable).toBe(false);
    await expect(s.unary('/svc/C', Buffer.from('c')).done).rejects.toMatchObject({ code: 14 });
    tcp.close();
    const refused = session(port);
    const failure = await refused.unary('/svc/D', Buffer.from('d')).done.catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 14 });
    expect((failure as GrpcFailure).details).toContain('ECONNREFUSED');
  });

  it('a connection that cannot even start (bad TLS material) fails its calls and streams with UNAVAILABLE', async () => {
    const s = new GrpcSession({
      host: '127.0.0.1',
      port: 1,
      tls: { cert: Buffer.from('junk'), key: Buffer.from('junk') },
    });
    open.push({ close: () => s.destroy() });
    expect(s.usable).toBe(false);
    const failure = await s.unary('/svc/A', Buffer.from('a')).done.catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 14 });
    expect((failure as GrpcFailure).details).toMatch(/^cannot connect: /);
    const ended = new Promise<GrpcFailure | undefined>((resolve) =>
      s.stream('/svc/W', { message: () => {}, end: resolve }),
    );
    expect(await ended).toMatchObject({ code: 14 });
  });

  it('after GOAWAY it takes no new calls; calls the server took still finish', async () => {
    const { server, port } = await grpcServer((stream, request) => {
      if (request.toString() === 'first') {
        stream.session?.goaway(0, stream.id); // nothing after this stream
        setTimeout(() => reply(stream, Buffer.from('done')), 20);
      }
    });
    open.push(server);
    const s = session(port);
    const first = s.unary('/svc/A', Buffer.from('first')).done;
    await new Promise((r) => setTimeout(r, 10));
    expect(String(await first)).toBe('done');
    expect(s.usable).toBe(false);
    await expect(s.unary('/svc/B', Buffer.from('later')).done).rejects.toMatchObject({ code: 14 });
  });

  it("streams: messages both ways, split across frames or several in one, then the server's status", async () => {
    const server = createServer();
    open.push(server);
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '5', 'grpc-message': 'done' }));
      let got = Buffer.alloc(0);
      stream.on('data', (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        while (got.length >= 5 && got.length >= 5 + got.readUInt32BE(1)) {
          const body = got.subarray(5, 5 + got.readUInt32BE(1));
          got = got.subarray(5 + body.length);
          if (body.toString() === 'end') {
            stream.end();
            return;
          }
          // Two answers per request, written as one chunk, the second one 40 KB (several frames).
          const a = Buffer.from(`echo ${body.toString()}`);
          const b = Buffer.alloc(40_000, body[0]);
          const out = Buffer.alloc(10 + a.length + b.length);
          out.writeUInt32BE(a.length, 1);
          a.copy(out, 5);
          out.writeUInt32BE(b.length, 6 + a.length);
          b.copy(out, 10 + a.length);
          stream.write(out);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const s = session((server.address() as AddressInfo).port);
    const messages: string[] = [];
    const ended = new Promise<GrpcFailure | undefined>((resolve) => {
      const call = s.stream('/svc/Chat', {
        message: (bytes) =>
          messages.push(bytes.length === 40_000 ? `${bytes.length}x${bytes[0]}` : bytes.toString()),
        end: resolve,
      });
      call.write(Buffer.from('a'));
      call.write(Buffer.from('b'));
      setTimeout(() => call.write(Buffer.from('end')), 30);
    });
    expect(await ended).toMatchObject({ code: 5, details: 'done' });
    expect(messages).toEqual(['echo a', '40000x97', 'echo b', '40000x98']);

    // A cancelled stream hears nothing more, and the server sees the reset.
    let heard = 0;
    const reset = new Promise<number>((resolve) =>
      server.once('stream', (stream) => stream.on('close', () => resolve(stream.rstCode))),
    );
    const call = s.stream('/svc/Chat', { message: () => (heard += 1), end: () => (heard += 1) });
    call.write(Buffer.from('c'));
    await new Promise((r) => setTimeout(r, 30));
    const before = heard;
    call.cancel();
    expect(await reset).toBe(8);
    expect(heard).toBe(before);
  });

  it('a connection that stops answering fails its open calls once a keepalive ping goes unanswered', async () => {
    // Accepts the connection and reads everything, answers nothing (a peer gone silent).
    const tcp = createTcpServer((socket) => socket.resume());
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    open.push(tcp);
    const s = new GrpcSession({
      host: '127.0.0.1',
      port: (tcp.address() as AddressInfo).port,
      keepalive: { intervalMs: 30, timeoutMs: 60 },
    });
    open.push({ close: () => s.destroy() });
    const ended = new Promise<GrpcFailure | undefined>((resolve) =>
      s.stream('/svc/Watch', { message: () => {}, end: resolve }),
    );
    expect(await ended).toMatchObject({ code: 14, details: 'keepalive ping not answered' });
    expect(s.usable).toBe(false);
  });
});
