/**
 * The envelope, list and watch framing byte for byte (magic, field order, lengths), and the
 * typed errors of a mangled envelope.
 */
import { describe, expect, it } from 'vitest';
import {
  CodecError,
  decodeEnvelope,
  decodeWatchEvent,
  encodeEnvelope,
  encodeWatchFrame,
  ENVELOPE_TAIL,
  envelopeHead,
  PROTOBUF_MAGIC,
  WatchFrameSplitter,
} from '../../src/codec/index.js';
import { testCodec } from './support.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const ascii = (s: string): string => Buffer.from(s).toString('hex');

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (err) {
    if (err instanceof CodecError) return err.code;
    throw err;
  }
  return undefined;
}

describe('envelope', () => {
  it('is magic, typeMeta{apiVersion, kind}, raw, empty contentEncoding and contentType', () => {
    const raw = Uint8Array.of(0x0a, 0x00);
    expect(hex(PROTOBUF_MAGIC)).toBe('6b387300');
    expect(hex(encodeEnvelope('v1', 'Pod', raw))).toBe(
      '6b387300' + // k8s\0
        '0a09' +
        '0a02' +
        ascii('v1') +
        '1203' +
        ascii('Pod') + // typeMeta (1): apiVersion (1), kind (2)
        '1202' +
        '0a00' + // raw (2)
        '1a00' + // contentEncoding (3)
        '2200', // contentType (4)
    );
  });

  it('uses multi-byte lengths for large objects and is head + raw + tail', () => {
    const raw = new Uint8Array(300).fill(7);
    const body = encodeEnvelope('apps/v1', 'Deployment', raw);
    const head = envelopeHead('apps/v1', 'Deployment', raw.length);
    expect(hex(head.subarray(head.length - 3))).toBe('12ac02'); // 300 = 0xac 0x02
    expect(hex(body)).toBe(hex(head) + hex(raw) + hex(ENVELOPE_TAIL));
    const env = decodeEnvelope(body);
    expect([env.apiVersion, env.kind, env.raw.length, env.contentEncoding, env.contentType]).toEqual([
      'apps/v1',
      'Deployment',
      300,
      '',
      '',
    ]);
  });

  it('rejects a body without the magic as PROTOBUF_MISSING_MAGIC (400)', () => {
    expect(codeOf(() => decodeEnvelope(new Uint8Array(0)))).toBe('PROTOBUF_MISSING_MAGIC');
    expect(codeOf(() => decodeEnvelope(Buffer.from('{"kind":"Pod"}')))).toBe('PROTOBUF_MISSING_MAGIC');
    expect(codeOf(() => decodeEnvelope(Uint8Array.of(0x6b, 0x38, 0x73)))).toBe('PROTOBUF_MISSING_MAGIC');
    const err = new CodecError('PROTOBUF_MISSING_MAGIC', 'x');
    expect(err.httpStatus).toBe(400);
  });

  it('rejects a mangled envelope as PROTOBUF_MALFORMED', () => {
    const good = encodeEnvelope('v1', 'Pod', Uint8Array.of(0x0a, 0x00));
    expect(codeOf(() => decodeEnvelope(PROTOBUF_MAGIC))).toBe('PROTOBUF_MALFORMED'); // nothing after it
    expect(codeOf(() => decodeEnvelope(good.subarray(0, good.length - 3)))).toBe('PROTOBUF_MALFORMED'); // truncated
    expect(codeOf(() => decodeEnvelope(Uint8Array.of(...PROTOBUF_MAGIC, 0x10, 0x01)))).toBe(
      'PROTOBUF_MALFORMED',
    ); // typeMeta as varint
    expect(codeOf(() => decodeEnvelope(Uint8Array.of(...PROTOBUF_MAGIC, 0x00)))).toBe('PROTOBUF_MALFORMED'); // field 0
  });

  it('skips unknown fields and reports content fields', () => {
    const body = Uint8Array.of(
      ...PROTOBUF_MAGIC,
      0x28,
      0x05, // unknown field 5, varint
      0x0a,
      0x04,
      0x12,
      0x02,
      ...Buffer.from('CM'), // typeMeta with kind only
      0x12,
      0x00,
      0x1a,
      0x04,
      ...Buffer.from('gzip'),
      0x22,
      0x03,
      ...Buffer.from('x/y'),
    );
    const env = decodeEnvelope(body);
    expect([env.apiVersion, env.kind, hex(env.raw), env.contentEncoding, env.contentType]).toEqual([
      '',
      'CM',
      '',
      'gzip',
      'x/y',
    ]);
  });
});

describe('objects and lists', () => {
  const codec = testCodec();
  const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' }, data: { k: 'v' } };
  const type = 'k8s.io.api.core.v1.ConfigMap';

  it('encodeObject equals encodeEnvelope of encodeMessage', () => {
    expect(hex(codec.encodeObject(type, cm))).toBe(
      hex(encodeEnvelope('v1', 'ConfigMap', codec.encodeMessage(type, cm))),
    );
  });

  it('encodeObject needs apiVersion and kind', () => {
    expect(codeOf(() => codec.encodeObject(type, { metadata: {} }))).toBe('PROTOBUF_INVALID_VALUE');
    expect(hex(codec.encodeObject(type, { metadata: {} }, 'v1', 'ConfigMap'))).toBe(
      hex(encodeEnvelope('v1', 'ConfigMap', codec.encodeMessage(type, {}))),
    );
  });

  it('decodeObject puts kind and apiVersion first, as kube serves them', () => {
    const { object, envelope } = codec.decodeObject(type, codec.encodeObject(type, cm));
    expect(envelope.kind).toBe('ConfigMap');
    expect(Object.keys(object)).toEqual(['kind', 'apiVersion', 'metadata', 'data']);
    expect(object).toEqual({ ...cm, metadata: { name: 'a', creationTimestamp: null } });
  });

  it('lists: ListMeta (1) then each item (2), the same from item bytes or from JSON', () => {
    const items = [cm, { metadata: { name: 'b' } }].map((i) => codec.encodeMessage(type, i));
    const meta = { resourceVersion: '7', continue: 'c' };
    const body = codec.encodeListFromItems('v1', 'ConfigMapList', meta, items);
    const metaBytes = codec.encodeMessage('k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta', meta);
    // selfLink (1) and continue (3) are plain strings, always written; remainingItemCount is a pointer.
    expect(hex(metaBytes)).toBe('0a00' + '1201' + ascii('7') + '1a01' + ascii('c'));
    const raw = decodeEnvelope(body).raw;
    expect(hex(raw)).toBe(
      '0a' +
        hex(Uint8Array.of(metaBytes.length)) +
        hex(metaBytes) +
        items.map((i) => '12' + hex(Uint8Array.of(i.length)) + hex(i)).join(''),
    );
    const fromJson = codec.encodeList('k8s.io.api.core.v1.ConfigMapList', {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: meta,
      items: [cm, { metadata: { name: 'b' } }],
    });
    expect(hex(fromJson)).toBe(hex(body));
    const back = codec.decodeObject('k8s.io.api.core.v1.ConfigMapList', body).object;
    expect((back['items'] as unknown[]).length).toBe(2);
    expect(back['metadata']).toEqual({ resourceVersion: '7', continue: 'c' });
  });

  it('an empty list still writes its ListMeta', () => {
    const body = codec.encodeListFromItems('v1', 'PodList', {}, []);
    expect(hex(decodeEnvelope(body).raw)).toBe('0a06' + '0a00' + '1200' + '1a00');
  });
});

describe('watch frames', () => {
  const object = encodeEnvelope('v1', 'Pod', Uint8Array.of(0x0a, 0x00));

  it('are a 4-byte big-endian length, then WatchEvent{type (1), object (2): RawExtension{raw (1)}}', () => {
    const frame = encodeWatchFrame('ADDED', object);
    const event =
      '0a05' +
      ascii('ADDED') +
      '12' +
      hex(Uint8Array.of(object.length + 2)) +
      '0a' +
      hex(Uint8Array.of(object.length)) +
      hex(object);
    expect(hex(frame)).toBe(hex(Uint8Array.of(0, 0, 0, event.length / 2)) + event);
    const decoded = decodeWatchEvent(frame.subarray(4));
    expect([decoded.type, hex(decoded.object)]).toEqual(['ADDED', hex(object)]);
  });

  it('split back from any chunking of the stream', () => {
    const types = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'];
    const stream = Buffer.concat(types.map((t) => encodeWatchFrame(t, object)));
    for (let size = 1; size <= stream.length; size += 7) {
      const splitter = new WatchFrameSplitter();
      const got: string[] = [];
      for (let i = 0; i < stream.length; i += size) {
        for (const f of splitter.push(stream.subarray(i, i + size))) {
          got.push(f.type);
          expect(hex(f.object)).toBe(hex(object));
        }
      }
      expect(got).toEqual(types);
      expect(splitter.pendingBytes).toBe(0);
    }
  });

  it('refuses a frame longer than the limit', () => {
    expect(codeOf(() => new WatchFrameSplitter(10).push(Uint8Array.of(0, 0, 1, 0)))).toBe(
      'PROTOBUF_MALFORMED',
    );
  });
});

describe('list parts', () => {
  const codec = testCodec();
  it('concatenate to encodeListFromItems and alias the items', () => {
    const type = 'k8s.io.api.core.v1.ConfigMap';
    const items = [{ metadata: { name: 'a' } }, { metadata: { name: 'b'.repeat(200) } }].map((i) =>
      codec.encodeMessage(type, i),
    );
    const parts = codec.encodeListParts('v1', 'ConfigMapList', { resourceVersion: '9' }, items);
    expect(hex(Buffer.concat(parts))).toBe(
      hex(codec.encodeListFromItems('v1', 'ConfigMapList', { resourceVersion: '9' }, items)),
    );
    expect(parts).toContain(items[1]);
    expect(hex(Buffer.concat(codec.encodeListParts('v1', 'PodList', {}, [])))).toBe(
      hex(codec.encodeListFromItems('v1', 'PodList', {}, [])),
    );
  });
});
