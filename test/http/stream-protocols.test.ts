/**
 * The streaming protocol pieces on their own (the end-to-end proof with kubectl and containerd is
 * test/agent/streaming.test.ts): SPDY/3.1 frames and their header blocks (a valid zlib stream
 * over the whole connection, decoded here with one inflater as a Go peer does), WebSocket
 * handshake and framing (RFC 6455's example key, masked client frames, fragmentation, ping,
 * close), and the final Status the exec translator derives from the agent's error stream.
 */
import { constants, inflateSync } from 'node:zlib';
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { nameValueBlock, SpdySession } from '../../src/http/stream/spdy.js';
import { finalStatus } from '../../src/http/stream/translator.js';
import {
  encodeFrame,
  handshakeResponse,
  OPCODE,
  WebSocketConnection,
} from '../../src/http/stream/websocket.js';

/** A duplex whose writes are collected and whose readable side the test feeds. */
function fakeConnection(): { conn: Duplex; written: Buffer[] } {
  const written: Buffer[] = [];
  const conn = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      written.push(chunk);
      done();
    },
  });
  return { conn, written };
}

/** Lets pushed bytes reach the 'data' listeners. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Splits SPDY frames. */
function frames(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 8 <= bytes.length;) {
    const len = bytes.readUInt32BE(at + 4) & 0xffffff;
    out.push(bytes.subarray(at, at + 8 + len));
    at += 8 + len;
  }
  return out;
}

/** A masked client frame. */
function clientFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | payload.length]), mask, masked]);
}

describe('SPDY/3.1 client frames', () => {
  it('opens streams whose header blocks form one zlib stream, sends data and FIN', () => {
    const { conn, written } = fakeConnection();
    const session = new SpdySession(conn, Buffer.alloc(0), () => undefined);
    const a = session.open({ streamtype: 'error' });
    const b = session.open({ streamtype: 'stdin' });
    b.write(Buffer.from('hello'));
    b.end();
    const [synA, synB, data, fin] = frames(Buffer.concat(written));
    expect(a.id).toBe(1);
    expect(b.id).toBe(3);
    // SYN_STREAM: control bit, version 3, type 1.
    expect(synA?.subarray(0, 4).toString('hex')).toBe('80030001');
    expect(synB?.readUInt32BE(8)).toBe(3);
    // Each block ends as a sync flush does: Go's inflater only hands out a stored block's bytes
    // once the next block begins, so a block without it is read past its frame.
    for (const syn of [synA, synB]) expect(syn?.subarray(-5).toString('hex')).toBe('000000ffff');
    // Both header blocks through one inflater, as the receiver decodes them.
    const blocks = Buffer.concat([
      synA?.subarray(18) ?? Buffer.alloc(0),
      synB?.subarray(18) ?? Buffer.alloc(0),
    ]);
    const plain = inflateSync(blocks, { finishFlush: constants.Z_SYNC_FLUSH });
    expect(plain).toEqual(
      Buffer.concat([nameValueBlock({ streamtype: 'error' }), nameValueBlock({ streamtype: 'stdin' })]),
    );
    expect(data?.readUInt32BE(0)).toBe(3);
    expect(data?.subarray(8).toString()).toBe('hello');
    expect(fin?.readUInt32BE(4)).toBe(0x01000000); // FLAG_FIN, length 0
  });

  it('delivers DATA to its stream, ends it on FIN, answers pings', async () => {
    const { conn, written } = fakeConnection();
    const session = new SpdySession(conn, Buffer.alloc(0), () => undefined);
    const got: string[] = [];
    let ended = false;
    session.open(
      { streamtype: 'stdout' },
      { data: (c) => got.push(c.toString()), end: () => (ended = true) },
    );
    written.length = 0;
    const data = Buffer.alloc(8 + 3);
    data.writeUInt32BE(1, 0);
    data.writeUInt32BE(0x01000003, 4); // FIN, 3 bytes
    data.write('out', 8);
    const ping = Buffer.from('8003000600000004' + '00000002', 'hex');
    conn.push(Buffer.concat([data.subarray(0, 5)]));
    conn.push(Buffer.concat([data.subarray(5), ping]));
    await tick();
    expect(got).toEqual(['out']);
    expect(ended).toBe(true);
    expect(Buffer.concat(written).toString('hex')).toBe('800300060000000400000002');
  });
});

describe('WebSocket server side', () => {
  it("accepts RFC 6455's example key and names the chosen subprotocol", () => {
    const res = handshakeResponse('dGhlIHNhbXBsZSBub25jZQ==', 'v5.channel.k8s.io');
    expect(res).toContain('Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n');
    expect(res).toContain('Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n');
    expect(res.endsWith('\r\n\r\n')).toBe(true);
  });

  it('unmasks and reassembles messages, answers ping with pong and close with close', async () => {
    const { conn, written } = fakeConnection();
    const messages: string[] = [];
    let closed = false;
    new WebSocketConnection(conn, {
      message: (d) => messages.push(d.toString()),
      closed: () => (closed = true),
    });
    conn.push(clientFrame(OPCODE.binary, Buffer.from('hel'), false));
    conn.push(clientFrame(OPCODE.ping, Buffer.from('p')));
    conn.push(clientFrame(OPCODE.continuation, Buffer.from('lo')));
    await tick();
    expect(messages).toEqual(['hello']);
    expect(written[0]).toEqual(encodeFrame(OPCODE.pong, Buffer.from('p')));
    conn.push(clientFrame(OPCODE.close, Buffer.from([0x03, 0xe8])));
    await tick();
    expect(written[1]).toEqual(encodeFrame(OPCODE.close, Buffer.from([0x03, 0xe8])));
    expect(closed).toBe(true);
  });

  it('encodes lengths in 7, 16 and 64 bits', () => {
    expect(encodeFrame(OPCODE.binary, Buffer.alloc(125)).subarray(0, 2).toString('hex')).toBe('827d');
    expect(encodeFrame(OPCODE.binary, Buffer.alloc(300)).subarray(0, 4).toString('hex')).toBe('827e012c');
    expect(encodeFrame(OPCODE.binary, Buffer.alloc(70000)).subarray(0, 10).toString('hex')).toBe(
      '827f0000000000011170',
    );
  });
});

describe("the translator's final Status", () => {
  it('is Success for an empty or successful error stream', () => {
    expect(finalStatus(Buffer.alloc(0))).toEqual({ metadata: {}, status: 'Success' });
    expect(finalStatus(Buffer.from('{"metadata":{},"status":"Success"}'))).toEqual({
      metadata: {},
      status: 'Success',
    });
  });

  it('carries a non-zero exit code as an ExitCode cause', () => {
    const agent = {
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: exit status 7',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    };
    expect(finalStatus(Buffer.from(JSON.stringify(agent)))).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
  });

  it('turns anything else into an InternalError', () => {
    expect(finalStatus(Buffer.from('not json'))).toMatchObject({ reason: 'InternalError', code: 500 });
    expect(finalStatus(Buffer.from('{"status":"Failure","message":"container not found"}'))).toMatchObject({
      reason: 'InternalError',
      message: 'Internal error occurred: container not found',
    });
    expect(
      finalStatus(
        Buffer.from(
          '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"300"}]}}',
        ),
      ),
    ).toMatchObject({ reason: 'InternalError' });
  });
});
