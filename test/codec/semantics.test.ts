/**
 * The emission rule and Go's JSON quirks, spelled out byte by byte on small objects (the
 * golden fixtures pin the same for every kind).
 */
import { describe, expect, it } from 'vitest';
import { CodecError } from '../../src/codec/index.js';
import { formatDuration, parseDuration } from '../../src/codec/duration.js';
import { formatRfc3339, parseRfc3339 } from '../../src/codec/time.js';
import { testCodec } from './support.js';

const codec = testCodec();
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const ascii = (s: string): string => Buffer.from(s).toString('hex');
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const POD = 'k8s.io.api.core.v1.Pod';
const CM = 'k8s.io.api.core.v1.ConfigMap';
const DEPLOY_SPEC = 'k8s.io.api.apps.v1.DeploymentSpec';
const CONTAINER = 'k8s.io.api.core.v1.Container';
const PROPS = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

/** Zero ObjectMeta as Go writes it: every plain string and int64, and an empty Time. */
const ZERO_META = '0a00' + '1200' + '1a00' + '2200' + '2a00' + '3200' + '3800' + '4200';

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (err) {
    if (err instanceof CodecError) return err.code;
    throw err;
  }
  return undefined;
}

/** Field numbers of the top-level fields of a message whose fields are all length-delimited. */
function topLevel(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length;) {
    out.push((bytes[i] as number) >>> 3);
    let len = 0;
    let shift = 0;
    let b: number;
    i++;
    do {
      b = bytes[i++] as number;
      len |= (b & 0x7f) << shift;
      shift += 7;
    } while (b >= 0x80);
    i += len;
  }
  return out;
}

/** The value bytes of the first field `number` of a flat message (test helper, one-byte keys). */
function fieldBody(bytes: Uint8Array, key: number): string {
  const at = bytes.indexOf(key);
  return hex(bytes.subarray(at + 2, at + 2 + (bytes[at + 1] as number)));
}

describe('emission rule (Go generated Marshal)', () => {
  it('writes plain fields even when JSON lacks them, in field-number order', () => {
    expect(hex(codec.encodeMessage(META, {}))).toBe(ZERO_META);
    expect(hex(codec.encodeMessage(META, { name: '', generation: 0, creationTimestamp: null }))).toBe(
      ZERO_META,
    );
    // ConfigMap: metadata is a plain struct (always written); immutable is a pointer, maps per entry.
    expect(hex(codec.encodeMessage(CM, {}))).toBe('0a10' + ZERO_META);
  });

  it('writes a pointer field exactly when JSON has it, zero included', () => {
    const spec = (o: Record<string, unknown>): string => hex(codec.encodeMessage(DEPLOY_SPEC, o));
    expect(spec({ replicas: 0 })).toMatch(/^0800/); // replicas (1) *int32 = 0
    expect(spec({})).not.toMatch(/^08/);
    expect(spec({ replicas: null })).toBe(spec({}));
  });

  it('writes an empty plain struct with its own plain fields (spec and status of a Pod)', () => {
    const pod = codec.encodeMessage(POD, {});
    expect(topLevel(pod)).toEqual([1, 2, 3]);
    expect(hex(pod.subarray(0, 18))).toBe('0a10' + ZERO_META);
    // PodStatus has plain strings (phase, message, ...): even an absent status has a body.
    const status = codec.encodeMessage('k8s.io.api.core.v1.PodStatus', {});
    expect(status.length).toBeGreaterThan(0);
    expect(hex(pod)).toContain('1a' + hex(Uint8Array.of(status.length)) + hex(status));
  });

  it('writes negative int32 as ten-byte varints, like Go uint64(int32)', () => {
    const c = codec.encodeMessage('k8s.io.api.core.v1.ContainerPort', { containerPort: -1 });
    expect(hex(c)).toContain('18ffffffffffffffffff01');
  });

  it('sorts map entries by UTF-8 bytes, as Go sort.Strings', () => {
    const labels = { b: '', a: '', '\u00e9': '', '\uffff': '', '\u{1f600}': '', '': '' };
    const bytes = codec.encodeMessage(META, { labels });
    const back = codec.decodeMessage(META, bytes)['labels'] as Record<string, string>;
    // UTF-16 order would put U+1F600 (a surrogate pair) before U+FFFF; UTF-8 order does not.
    expect(Object.keys(back)).toEqual(['', 'a', 'b', '\u00e9', '\uffff', '\u{1f600}']);
    let keys = '';
    for (let i = ZERO_META.length / 2; i < bytes.length;) {
      const len = bytes[i + 1] as number;
      keys += hex(bytes.subarray(i + 2, i + 2 + len)).slice(4, 4 + 2 * (bytes[i + 3] as number)) + '|';
      i += 2 + len;
    }
    expect(keys).toBe(['', ascii('a'), ascii('b'), 'c3a9', 'efbfbf', 'f09f9880'].join('|') + '|');
  });

  it('keeps a __proto__ map key as data', () => {
    const back = codec.decodeMessage(
      CM,
      codec.encodeMessage(CM, JSON.parse('{"data":{"__proto__":"x"}}') as Record<string, unknown>),
    );
    expect(Object.keys(back['data'] as object)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(back['data'])).toBe(Object.prototype);
  });

  it('ignores kind, apiVersion and unknown properties', () => {
    expect(hex(codec.encodeMessage(CM, { kind: 'X', apiVersion: 'y', bogus: { a: 1 } }))).toBe(
      hex(codec.encodeMessage(CM, {})),
    );
  });

  it('rejects values that do not fit their field', () => {
    expect(codeOf(() => codec.encodeMessage(CONTAINER, { name: 5 }))).toBe('PROTOBUF_INVALID_VALUE');
    expect(
      codeOf(() => codec.encodeMessage('k8s.io.api.core.v1.ContainerPort', { containerPort: 2 ** 31 })),
    ).toBe('PROTOBUF_INVALID_VALUE');
    expect(codeOf(() => codec.encodeMessage(META, { creationTimestamp: 'yesterday' }))).toBe(
      'PROTOBUF_INVALID_VALUE',
    );
    expect(codeOf(() => codec.encodeMessage(META, { labels: ['a'] }))).toBe('PROTOBUF_INVALID_VALUE');
    expect(codeOf(() => codec.encodeMessage('no.such.Type', {}))).toBe('PROTOBUF_UNKNOWN_TYPE');
  });
});

describe('decoding as kube serves (Go encoding/json)', () => {
  it('shows plain structs, null for nil non-omitempty pointers and lists, drops omitempty zeros', () => {
    expect(codec.decodeMessage(POD, new Uint8Array(0))).toEqual({
      metadata: { creationTimestamp: null },
      spec: { containers: null },
      status: {},
    });
    const role = codec.decodeMessage('k8s.io.api.rbac.v1.ClusterRole', new Uint8Array(0));
    expect(role).toEqual({ metadata: { creationTimestamp: null }, rules: null });
    // Plain zero strings are dropped with omitempty, kept without it.
    expect(codec.decodeMessage(CONTAINER, new Uint8Array(0))).toEqual({ name: '', resources: {} });
  });

  it('keeps zero values of pointers', () => {
    const spec = codec.decodeMessage(DEPLOY_SPEC, Uint8Array.of(0x08, 0x00));
    expect(spec['replicas']).toBe(0);
  });

  it('skips unknown fields, accepts packed repeated scalars, merges a repeated message field', () => {
    const base = codec.encodeMessage(META, { name: 'n' });
    const withUnknown = Uint8Array.of(...base, 0xf8, 0x06, 0x01); // field 111, varint
    expect(codec.decodeMessage(META, withUnknown)).toEqual(codec.decodeMessage(META, base));
    const sc = 'k8s.io.api.core.v1.PodSecurityContext';
    const unpacked = codec.encodeMessage(sc, { supplementalGroups: [1, 300] });
    const packed = Uint8Array.of(0x22, 0x03, 0x01, 0xac, 0x02); // field 4 packed
    expect(codec.decodeMessage(sc, packed)['supplementalGroups']).toEqual([1, 300]);
    expect(codec.decodeMessage(sc, unpacked)['supplementalGroups']).toEqual([1, 300]);
    const twice = Uint8Array.of(0x0a, 0x03, 0x0a, 0x01, 0x61, 0x0a, 0x03, 0x1a, 0x01, 0x62); // metadata{name} metadata{namespace}
    expect(codec.decodeMessage(CM, twice)['metadata']).toEqual({
      name: 'a',
      namespace: 'b',
      creationTimestamp: null,
    });
  });

  it('rejects a known field with the wrong wire type', () => {
    expect(codeOf(() => codec.decodeMessage(META, Uint8Array.of(0x08, 0x01)))).toBe('PROTOBUF_MALFORMED');
  });
});

describe('special types', () => {
  it('Time: RFC 3339 seconds on the wire as {seconds, nanos: 0}; zero time is empty and null', () => {
    const t = parseRfc3339('2024-01-02T03:04:05Z');
    expect(t.seconds).toBe(1704164645);
    const meta = codec.encodeMessage(META, { creationTimestamp: '2024-01-02T03:04:05Z' });
    expect(fieldBody(meta, 0x42)).toBe('08a5facdac06' + '1000');
    // Fractions and offsets are accepted; Time keeps whole seconds.
    const shifted = codec.encodeMessage(META, { creationTimestamp: '2024-01-02T04:04:05.999+01:00' });
    expect(hex(shifted)).toBe(hex(meta));
    expect(codec.decodeMessage(META, meta)['creationTimestamp']).toBe('2024-01-02T03:04:05Z');
    expect(hex(codec.encodeMessage(META, { creationTimestamp: '0001-01-01T00:00:00Z' }))).toBe(ZERO_META);
    // A set pointer to the zero time is written empty and served as null, as Go does.
    const del = codec.encodeMessage(META, { deletionTimestamp: '0001-01-01T00:00:00Z' });
    expect(hex(del)).toBe(ZERO_META + '4a00');
    expect(codec.decodeMessage(META, del)['deletionTimestamp']).toBeNull();
    expect(formatRfc3339(-62135596800 + 86400 * 365, 0, false)).toBe('0002-01-01T00:00:00Z');
    expect(formatRfc3339(253402300800, 0, false)).toBeUndefined(); // year 10000
    expect(() => parseRfc3339('2023-02-29T00:00:00Z')).toThrowError(CodecError);
    expect(() => parseRfc3339('2024-01-02 03:04:05Z')).toThrowError(CodecError);
  });

  it('MicroTime: six fractional digits, nanos truncated to microseconds', () => {
    const lease = 'k8s.io.api.coordination.v1.LeaseSpec';
    const bytes = codec.encodeMessage(lease, { renewTime: '2024-01-02T03:04:05.123456789Z' });
    expect(codec.decodeMessage(lease, bytes)['renewTime']).toBe('2024-01-02T03:04:05.123456Z');
    expect(hex(bytes)).toContain('08a5facdac06' + '108094ef3a'); // nanos 123456000
  });

  it('IntOrString: type, intVal, strVal all written; JSON number or string', () => {
    const port = 'k8s.io.api.core.v1.ServicePort';
    expect(fieldBody(codec.encodeMessage(port, { targetPort: 80 }), 0x22)).toBe('0800' + '1050' + '1a00');
    expect(fieldBody(codec.encodeMessage(port, { targetPort: 'http' }), 0x22)).toBe(
      '0801' + '1000' + '1a04' + ascii('http'),
    );
    expect(codec.decodeMessage(port, codec.encodeMessage(port, { targetPort: 'http' }))['targetPort']).toBe(
      'http',
    );
    // Plain IntOrString absent: Go's zero value, served as 0.
    expect(codec.decodeMessage(port, new Uint8Array(0))['targetPort']).toBe(0);
  });

  it('Quantity: the canonical string, from a JSON string or number', () => {
    const rr = 'k8s.io.api.core.v1.ResourceRequirements';
    const enc = (v: unknown): Record<string, unknown> =>
      codec.decodeMessage(rr, codec.encodeMessage(rr, { limits: { cpu: v } }))['limits'] as Record<
        string,
        unknown
      >;
    expect(enc('0.5')).toEqual({ cpu: '500m' });
    expect(enc(2)).toEqual({ cpu: '2' });
    expect(enc('1024Mi')).toEqual({ cpu: '1Gi' });
    expect(codeOf(() => codec.encodeMessage(rr, { limits: { cpu: 'lots' } }))).toBe('PROTOBUF_INVALID_VALUE');
  });

  it('raw JSON (FieldsV1, RawExtension, apiextensions JSON): JSON text in `raw`', () => {
    const entry = 'k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry';
    const fields = { 'f:metadata': { 'f:labels': {} } };
    const bytes = codec.encodeMessage(entry, { fieldsV1: fields });
    expect(hex(bytes)).toContain(ascii(JSON.stringify(fields)));
    expect(codec.decodeMessage(entry, bytes)['fieldsV1']).toEqual(fields);
    const rev = 'k8s.io.api.apps.v1.ControllerRevision';
    expect(codec.decodeMessage(rev, codec.encodeMessage(rev, { data: [1, 'a', null] }))['data']).toEqual([
      1,
      'a',
      null,
    ]);
    expect(codec.decodeMessage(rev, codec.encodeMessage(rev, {}))['data']).toBeNull();
    // Raw JSON is written as a Go client writes it (kube keeps those bytes): `<`, `>`, `&` escaped.
    const escaped = codec.encodeMessage(rev, { data: { cmd: 'a && b > c' } });
    expect(hex(escaped)).toContain(ascii('{"cmd":"a \\u0026\\u0026 b \\u003e c"}'));
    expect(codec.decodeMessage(rev, escaped)['data']).toEqual({ cmd: 'a && b > c' });
  });

  it('bytes and map<string, bytes>: base64 in JSON', () => {
    const secret = 'k8s.io.api.core.v1.Secret';
    const bytes = codec.encodeMessage(secret, {
      data: { k: Buffer.from([0, 1, 255]).toString('base64'), e: '' },
    });
    expect(hex(bytes)).toContain('0a01' + ascii('k') + '1203' + '0001ff');
    expect(codec.decodeMessage(secret, bytes)['data']).toEqual({ e: '', k: 'AAH/' });
  });

  it('string-list wrappers (ExtraValue): bare JSON arrays', () => {
    const user = 'k8s.io.api.authentication.v1.UserInfo';
    const extra = { scopes: ['a', 'b'], none: [] };
    const back = codec.decodeMessage(user, codec.encodeMessage(user, { extra }));
    expect(back['extra']).toEqual({ none: [], scopes: ['a', 'b'] });
  });

  it('JSONSchemaProps unions: bool or schema, schema or array', () => {
    const p = (o: Record<string, unknown>): Record<string, unknown> =>
      codec.decodeMessage(PROPS, codec.encodeMessage(PROPS, o));
    expect(p({ additionalProperties: false })['additionalProperties']).toBe(false);
    expect(p({ additionalProperties: { type: 'string' } })['additionalProperties']).toEqual({
      type: 'string',
    });
    expect(p({ items: { type: 'integer' } })['items']).toEqual({ type: 'integer' });
    expect(p({ items: [{ type: 'integer' }, { type: 'string' }] })['items']).toEqual([
      { type: 'integer' },
      { type: 'string' },
    ]);
    expect(p({ dependencies: { a: ['b', 'c'], d: { type: 'object' } } })['dependencies']).toEqual({
      a: ['b', 'c'],
      d: { type: 'object' },
    });
    expect(p({ 'x-kubernetes-preserve-unknown-fields': true, $ref: '#/x', default: { a: 1 } })).toMatchObject(
      {
        $ref: '#/x',
        default: { a: 1 },
        'x-kubernetes-preserve-unknown-fields': true,
      },
    );
  });

  it('Duration: Go duration strings over int64 nanoseconds', () => {
    expect(parseDuration('1m30s')).toBe(90_000_000_000n);
    expect(parseDuration('1.5h')).toBe(5_400_000_000_000n);
    expect(parseDuration('-1us')).toBe(-1000n);
    expect(parseDuration('0')).toBe(0n);
    expect(formatDuration(90_000_000_000n)).toBe('1m30s');
    expect(formatDuration(3_600_000_000_000n)).toBe('1h0m0s');
    expect(formatDuration(1_500_000_000n)).toBe('1.5s');
    expect(formatDuration(1_500_000n)).toBe('1.5ms');
    expect(formatDuration(1000n)).toBe('1\u00b5s');
    expect(formatDuration(0n)).toBe('0s');
    expect(formatDuration(-61_000_000_000n)).toBe('-1m1s');
    for (const bad of ['', '1', '1x', '.s', '9223372036854775808ns'])
      expect(() => parseDuration(bad)).toThrowError(CodecError);
  });
});
