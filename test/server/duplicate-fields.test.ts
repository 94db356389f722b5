/**
 * The duplicate-key scanner of JSON bodies (kube's `duplicate field "a.b"` warnings), on
 * arbitrary texts: keys and values with quotes, backslashes and escapes must not end a string
 * early or late, so a text without repeats reports none and a repeated key is reported at its path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateJsonFields } from '../../src/resource/fields/duplicates.js';

const text = fc.string({ unit: fc.constantFrom('a', '"', '\\', '/', 'é', '\n', 'b', '\u0001') });
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    text,
    fc.array(tie('json'), { maxLength: 3 }),
    fc.dictionary(text, tie('json'), { maxKeys: 3 }),
  ),
})).json;

describe('duplicateJsonFields', () => {
  it('finds nothing in JSON.stringify output, whatever the strings hold', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(duplicateJsonFields(JSON.stringify(v))).toEqual([]);
        expect(duplicateJsonFields(JSON.stringify(v, null, 2))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('reports a repeated key at its path, after values with escapes', () => {
    fc.assert(
      fc.property(text, value, value, fc.dictionary(text, value, { maxKeys: 3 }), (key, a, b, rest) => {
        const inner = `{${JSON.stringify(key)}:${JSON.stringify(a)},${JSON.stringify(key)}:${JSON.stringify(b)}}`;
        const body = `{"before":${JSON.stringify(rest)},"spec":${inner},"after":${JSON.stringify(rest)}}`;
        expect(duplicateJsonFields(body)).toEqual([`spec.${key}`]);
      }),
      { numRuns: 500 },
    );
  });
});
