/**
 * Property tests over every served kind, with objects generated from the schema model:
 * - JSON → protobuf → JSON is lossless for objects in Go-normal form (the form kube serves),
 *   key order aside, and protobuf → JSON → protobuf gives the same bytes;
 * - any valid JSON (zero values, empty lists, nulls, quantity numbers, time offsets) encodes,
 *   and its decoding is a fixed point: decoding normalises once, then round-trips exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlanArbitraries } from './arbitrary.js';
import { SERVED_KINDS, testCodec } from './support.js';

const codec = testCodec();
const normal = new PlanArbitraries(3);
const loose = new PlanArbitraries(2, true);

describe.each(SERVED_KINDS)('$kind ($apiVersion)', ({ messageType }) => {
  const plan = codec.plan(messageType);

  it('round-trips Go-normal objects losslessly', () => {
    fc.assert(
      fc.property(normal.message(plan), (obj) => {
        const bytes = codec.encodeMessage(messageType, obj);
        const back = codec.decodeMessage(messageType, bytes);
        expect(back).toEqual(obj);
        expect(Buffer.from(codec.encodeMessage(messageType, back)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 20 },
    );
  });

  it('encodes any valid JSON and normalises it once', () => {
    fc.assert(
      fc.property(loose.message(plan), (obj) => {
        const once = codec.decodeMessage(messageType, codec.encodeMessage(messageType, obj));
        const twice = codec.decodeMessage(messageType, codec.encodeMessage(messageType, once));
        expect(JSON.stringify(twice)).toBe(JSON.stringify(once));
      }),
      { numRuns: 20 },
    );
  });
});
