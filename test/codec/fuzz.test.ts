/**
 * Hostile input: whatever the bytes, the decoders end (every loop consumes input) and throw
 * nothing but a CodecError, which the HTTP layer maps to 400. Random bytes, and mutations of
 * real encodings (which get much further into the decoder than noise does).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CodecError,
  decodeEnvelope,
  decodeWatchEvent,
  encodeWatchFrame,
  WatchFrameSplitter,
} from '../../src/codec/index.js';
import { FIXTURES, SERVED_KINDS, testCodec } from './support.js';

const codec = testCodec();

/** Runs `f`; passes if it returns or throws a CodecError, rethrows anything else. */
function onlyCodecErrors(f: () => unknown): void {
  try {
    f();
  } catch (err) {
    if (!(err instanceof CodecError)) throw err;
    expect(['PROTOBUF_MISSING_MAGIC', 'PROTOBUF_MALFORMED', 'PROTOBUF_TOO_DEEP']).toContain(err.code);
    expect(err.httpStatus).toBe(400);
  }
}

const golden = SERVED_KINDS.map((k) => ({ ...k, body: readFileSync(join(FIXTURES, `${k.fixture}.pb`)) }));

/** A real body with a few bytes overwritten, inserted or cut. */
const mutated = fc
  .tuple(
    fc.constantFrom(...golden),
    fc.array(
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
    fc.option(fc.nat()),
  )
  .map(([g, edits, cut]) => {
    const bytes = [...g.body];
    for (const [at, value, op] of edits) {
      const i = at % (bytes.length + 1);
      if (op === 'set') bytes[i] = value;
      else if (op === 'insert') bytes.splice(i, 0, value);
      else bytes.splice(i, 1);
    }
    const out = Uint8Array.from(bytes);
    return {
      messageType: g.messageType,
      bytes: cut === null ? out : out.subarray(0, cut % (out.length + 1)),
    };
  });

describe('decoders under hostile input', () => {
  it('random bytes: envelope, message, watch event, frame splitter', () => {
    const types = SERVED_KINDS.map((k) => k.messageType);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 512 }),
        fc.constantFrom(...types),
        fc.boolean(),
        (bytes, type, magic) => {
          const body = magic ? Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...bytes]) : bytes;
          onlyCodecErrors(() => decodeEnvelope(body));
          onlyCodecErrors(() => codec.decodeObject(type, body));
          onlyCodecErrors(() => codec.decodeMessage(type, bytes));
          onlyCodecErrors(() => decodeWatchEvent(bytes));
          onlyCodecErrors(() => new WatchFrameSplitter(1024).push(bytes));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('mutated real encodings', () => {
    fc.assert(
      fc.property(mutated, ({ messageType, bytes }) => {
        onlyCodecErrors(() => codec.decodeObject(messageType, bytes));
        onlyCodecErrors(() => codec.decodeMessage(messageType, bytes.subarray(Math.min(4, bytes.length))));
        onlyCodecErrors(() => new WatchFrameSplitter().push(encodeWatchFrame('ADDED', bytes)));
      }),
      { numRuns: 1500 },
    );
  });

  it('deep nesting is PROTOBUF_TOO_DEEP, not a stack overflow', () => {
    // JSONSchemaProps.not inside JSONSchemaProps.not ..., 5000 levels (the limit is 200).
    const crd = codec.plan('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps');
    const not = crd.jsonOrder.find((f) => f.jsonName === 'not');
    if (not === undefined) throw new Error('JSONSchemaProps has not');
    const varint = (n: number): number[] => {
      const out: number[] = [];
      for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
      out.push(n);
      return out;
    };
    const key = varint(not.key);
    const lengths = [0];
    for (let i = 1; i < 5000; i++) {
      const inner = lengths[i - 1] as number;
      lengths.push(key.length + varint(inner).length + inner);
    }
    const parts: number[] = [];
    for (let i = lengths.length - 1; i > 0; i--) parts.push(...key, ...varint(lengths[i - 1] as number));
    const body = Uint8Array.from(parts);
    const err = (() => {
      try {
        codec.decodeMessage(crd.name, body);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(CodecError);
    expect((err as CodecError).code).toBe('PROTOBUF_TOO_DEEP');
  });

  it('a length past the end is PROTOBUF_MALFORMED', () => {
    // metadata (field 1) claiming 2^31 bytes.
    const bytes = Uint8Array.of(0x0a, 0x80, 0x80, 0x80, 0x80, 0x08);
    expect(() => codec.decodeMessage('k8s.io.api.core.v1.Pod', bytes)).toThrowError(
      expect.objectContaining({ code: 'PROTOBUF_MALFORMED' }) as Error,
    );
  });

  it('deep JSON is PROTOBUF_TOO_DEEP on encode', () => {
    let schema: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 10_000; i++) schema = { not: schema };
    expect(() =>
      codec.encodeMessage('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', schema),
    ).toThrowError(expect.objectContaining({ code: 'PROTOBUF_TOO_DEEP' }) as Error);
  });
});
