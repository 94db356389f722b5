/**
 * storage/etcd/messages.ts against protobufjs with long.js (the reference: etcd3's own proto
 * files, read with etcd3's conventions), on arbitrary messages:
 * - a response protobufjs encodes decodes to what protobufjs's `toObject` gives;
 * - a request encoded here decodes, in protobufjs, to the request protobufjs itself would send;
 * - 64-bit integers keep every bit (lease ids are above 2^53), and bad bytes throw.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import {
  decodeRangeResponse,
  decodeStatusResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchRequest,
} from '../../../storage/etcd/messages.js';

const require = createRequire(import.meta.url);
const protoDir = join(dirname(require.resolve('etcd3/package.json')), 'proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(protoDir, target.replace(/^.*\//, ''));
root.loadSync('rpc.proto', { keepCase: true });
const type = (name: string): protobuf.Type => root.lookupType(`etcdserverpb.${name}`);
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

/** protobufjs's bytes of `obj` as message `name`. */
function pbEncode(name: string, obj: object): Buffer {
  const t = type(name);
  return Buffer.from(t.encode(t.fromObject(obj)).finish());
}

/** protobufjs's reading of `bytes` as message `name`. */
function pbDecode(name: string, bytes: Uint8Array): unknown {
  const t = type(name);
  return t.toObject(t.decode(bytes), TO_OBJECT);
}

const int64 = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 1n << 20n }),
    fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
    fc.constantFrom(0n, (1n << 53n) - 1n, 1n << 53n, (1n << 63n) - 1n, -1n, -(1n << 63n)),
  )
  .map(String);
const uint64 = fc
  .oneof(fc.bigInt({ min: 0n, max: 1n << 20n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }))
  .map(String);
const bytes = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));

const header = fc.record(
  { cluster_id: uint64, member_id: uint64, revision: int64, raft_term: uint64 },
  { requiredKeys: [] },
);
const keyValue = fc.record(
  { key: bytes, create_revision: int64, mod_revision: int64, version: int64, value: bytes, lease: int64 },
  { requiredKeys: [] },
);
const rangeResponse = fc.record(
  { header, kvs: fc.array(keyValue, { maxLength: 3 }), more: fc.boolean(), count: int64 },
  { requiredKeys: [] },
);
const putResponse = fc.record({ header, prev_kv: keyValue }, { requiredKeys: [] });
const deleteRangeResponse = fc.record(
  { header, deleted: int64, prev_kvs: fc.array(keyValue, { maxLength: 2 }) },
  { requiredKeys: [] },
);
const { txnResponse } = fc.letrec<{ txnResponse: object; responseOp: object }>((tie) => ({
  responseOp: fc.oneof(
    { depthSize: 'small' },
    rangeResponse.map((r) => ({ response_range: r })),
    putResponse.map((r) => ({ response_put: r })),
    deleteRangeResponse.map((r) => ({ response_delete_range: r })),
    tie('txnResponse').map((r) => ({ response_txn: r })),
  ),
  txnResponse: fc.record(
    { header, succeeded: fc.boolean(), responses: fc.array(tie('responseOp'), { maxLength: 3 }) },
    { requiredKeys: [] },
  ),
}));
const watchResponse = fc.record(
  {
    header,
    watch_id: int64,
    created: fc.boolean(),
    canceled: fc.boolean(),
    compact_revision: int64,
    cancel_reason: fc.string({ maxLength: 20 }),
    fragment: fc.boolean(),
    events: fc.array(
      fc.record(
        { type: fc.constantFrom('Put', 'Delete'), kv: keyValue, prev_kv: keyValue },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: [] },
);
const statusResponse = fc.record(
  {
    header,
    version: fc.string({ maxLength: 10 }),
    dbSize: int64,
    leader: uint64,
    raftIndex: uint64,
    raftTerm: uint64,
    raftAppliedIndex: uint64,
    errors: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }),
    dbSizeInUse: int64,
    isLearner: fc.boolean(),
  },
  { requiredKeys: [] },
);

const rangeRequest = fc.record(
  {
    key: bytes,
    range_end: bytes,
    limit: int64,
    revision: int64,
    sort_order: fc.constantFrom('None', 'Ascend', 'Descend'),
    sort_target: fc.constantFrom('Key', 'Version', 'Create', 'Mod', 'Value'),
    serializable: fc.boolean(),
    keys_only: fc.boolean(),
    count_only: fc.boolean(),
    min_mod_revision: int64,
    max_mod_revision: int64,
    min_create_revision: int64,
    max_create_revision: int64,
  },
  { requiredKeys: [] },
);
const compare = fc
  .tuple(
    fc.record(
      {
        result: fc.constantFrom('Equal', 'Greater', 'Less', 'NotEqual'),
        target: fc.constantFrom('Version', 'Create', 'Mod', 'Value', 'Lease'),
        key: bytes,
        range_end: bytes,
      },
      { requiredKeys: [] },
    ),
    fc.oneof(
      fc.constant({}),
      int64.map((v) => ({ version: v })),
      int64.map((v) => ({ create_revision: v })),
      int64.map((v) => ({ mod_revision: v })),
      bytes.map((v) => ({ value: v })),
      int64.map((v) => ({ lease: v })),
    ),
  )
  .map(([c, union]) => ({ ...c, ...union }));
const { txnRequest } = fc.letrec<{ txnRequest: object; requestOp: object }>((tie) => ({
  requestOp: fc.oneof(
    { depthSize: 'small' },
    rangeRequest.map((r) => ({ request_range: r })),
    fc
      .record(
        {
          key: bytes,
          value: bytes,
          lease: int64,
          prev_kv: fc.boolean(),
          ignore_value: fc.boolean(),
          ignore_lease: fc.boolean(),
        },
        { requiredKeys: [] },
      )
      .map((r) => ({ request_put: r })),
    fc
      .record({ key: bytes, range_end: bytes, prev_kv: fc.boolean() }, { requiredKeys: [] })
      .map((r) => ({ request_delete_range: r })),
    tie('txnRequest').map((r) => ({ request_txn: r })),
  ),
  txnRequest: fc.record(
    {
      compare: fc.array(compare, { maxLength: 2 }),
      success: fc.array(tie('requestOp'), { maxLength: 2 }),
      failure: fc.array(tie('requestOp'), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  ),
}));
const watchRequest = fc.oneof(
  fc
    .record(
      {
        key: bytes,
        range_end: bytes,
        start_revision: int64,
        progress_notify: fc.boolean(),
        filters: fc.array(fc.constantFrom('Noput', 'Nodelete'), { maxLength: 2 }),
        prev_kv: fc.boolean(),
        watch_id: int64,
        fragment: fc.boolean(),
      },
      { requiredKeys: [] },
    )
    .map((r) => ({ create_request: r })),
  int64.map((id) => ({ cancel_request: { watch_id: id } })),
  fc.constant({ progress_request: {} }),
);

describe('etcd messages, against protobufjs with long.js', () => {
  const responses: [string, fc.Arbitrary<object>, (b: Buffer) => unknown][] = [
    ['RangeResponse', rangeResponse, decodeRangeResponse],
    ['TxnResponse', txnResponse, decodeTxnResponse],
    ['WatchResponse', watchResponse, decodeWatchResponse],
    ['StatusResponse', statusResponse, decodeStatusResponse],
  ];
  for (const [name, arbitrary, decode] of responses) {
    it(`decodes a ${name} as protobufjs's toObject does`, () => {
      fc.assert(
        fc.property(arbitrary, (obj) => {
          const wire = pbEncode(name, obj);
          expect(decode(wire)).toEqual(pbDecode(name, wire));
        }),
        { numRuns: 300 },
      );
    });
  }

  const requests: [string, fc.Arbitrary<object>, (r: never) => Buffer][] = [
    ['RangeRequest', rangeRequest, encodeRangeRequest],
    ['TxnRequest', txnRequest, encodeTxnRequest],
    ['WatchRequest', watchRequest, encodeWatchRequest],
  ];
  for (const [name, arbitrary, encode] of requests) {
    it(`encodes a ${name} that protobufjs reads as the one it would send`, () => {
      fc.assert(
        fc.property(arbitrary, (obj) => {
          expect(pbDecode(name, encode(obj as never))).toEqual(pbDecode(name, pbEncode(name, obj)));
        }),
        { numRuns: 300 },
      );
    });
  }

  it('keeps every bit of a lease id above 2^53, both ways', () => {
    const lease = '7587869184387385283';
    const put = encodeTxnRequest({ success: [{ request_put: { key: Buffer.from('k'), lease } }] });
    expect(pbDecode('TxnRequest', put)).toMatchObject({ success: [{ request_put: { lease } }] });
    const res = pbEncode('RangeResponse', { kvs: [{ key: Buffer.from('k'), lease }] });
    expect(decodeRangeResponse(res).kvs[0]?.lease).toBe(lease);
  });

  it('skips unknown fields and refuses truncated bytes', () => {
    const wire = pbEncode('WatchResponse', { watch_id: '7', events: [{ kv: { key: Buffer.from('a') } }] });
    // Field 15, length-delimited, 2 bytes: unknown to this reader.
    const extended = Buffer.concat([wire, Buffer.from([(15 << 3) | 2, 2, 1, 2])]);
    expect(decodeWatchResponse(extended)).toEqual(pbDecode('WatchResponse', wire));
    expect(() => decodeWatchResponse(wire.subarray(0, wire.length - 1))).toThrow(RangeError);
    expect(() => decodeTxnResponse(Buffer.from([0x1a, 0x05, 0x0a]))).toThrow(RangeError);
  });
});
