/**
 * Golden tests: for every served kind, a fixture object with every field set
 * (`fixtures/protobuf/<group>.<version>.<Kind>.json`) is encoded and
 * - the enveloped bytes must equal the stored `<name>.pb` (fails when output drifts);
 * - protoc, an independent decoder, must read the message bytes as the declared type, and its
 *   text form must equal the stored `<name>.txt` (reviewable: field names, numbers, values);
 * - `protoc --encode` of that text must give back exactly our bytes: fields in number order,
 *   minimal varints, nothing duplicated, i.e. the canonical form Go's Marshal writes;
 * - decoding our bytes must give back the fixture exactly (same JSON, same key order).
 *
 * Regenerate after an intended change: CAPSTAN_UPDATE_GENERATED=1 npx vitest run test/codec/golden.test.ts
 * (fixtures are rebuilt by the filler in `fill.ts`, then the .pb and .txt from them).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope } from '../../src/codec/index.js';
import { Filler } from './fill.js';
import { FIXTURES, protocDecode, protocEncode, SERVED_KINDS, testCodec, UPDATE } from './support.js';

function fixtureObject(apiVersion: string, kind: string, messageType: string): Record<string, unknown> {
  const codec = testCodec();
  // Go writes TypeMeta as kind, then apiVersion.
  return { kind, apiVersion, ...new Filler().message(codec.plan(messageType)) };
}

describe.each(SERVED_KINDS)('golden $fixture', ({ apiVersion, kind, messageType, fixture }) => {
  const base = join(FIXTURES, fixture);

  if (UPDATE) {
    it('regenerates the golden files', () => {
      mkdirSync(FIXTURES, { recursive: true });
      const obj = fixtureObject(apiVersion, kind, messageType);
      writeFileSync(`${base}.json`, `${JSON.stringify(obj, null, 1)}\n`);
      const body = testCodec().encodeObject(messageType, obj);
      writeFileSync(`${base}.pb`, body);
      writeFileSync(`${base}.txt`, protocDecode(messageType, decodeEnvelope(body).raw));
    });
    return;
  }

  const missing = ['json', 'pb', 'txt'].filter((ext) => !existsSync(`${base}.${ext}`));
  if (missing.length > 0) {
    it('has its fixture files', () => {
      expect.fail(`missing ${base}.{${missing.join(',')}}: regenerate with CAPSTAN_UPDATE_GENERATED=1`);
    });
    return;
  }

  const obj = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as Record<string, unknown>;
  const golden = readFileSync(`${base}.pb`);
  const codec = testCodec();
  const body = codec.encodeObject(messageType, obj);
  const raw = decodeEnvelope(body).raw;

  it('encodes to the stored bytes', () => {
    expect(Buffer.from(body).equals(golden)).toBe(true);
  });

  it('envelopes with the fixture apiVersion and kind', () => {
    const env = decodeEnvelope(body);
    expect([env.apiVersion, env.kind, env.contentEncoding, env.contentType]).toEqual([
      apiVersion,
      kind,
      '',
      '',
    ]);
    expect(Buffer.from(raw).equals(Buffer.from(codec.encodeMessage(messageType, obj)))).toBe(true);
  });

  it('is read by protoc as the stored text form', () => {
    expect(protocDecode(messageType, raw)).toBe(readFileSync(`${base}.txt`, 'utf8'));
  });

  it('is canonical: protoc re-encodes its reading to the same bytes', () => {
    const text = protocDecode(messageType, raw);
    expect(protocEncode(messageType, text).equals(Buffer.from(raw))).toBe(true);
  });

  it('decodes back to the fixture, key order included', () => {
    const back = codec.decodeObject(messageType, body).object;
    expect(back).toEqual(obj);
    expect(JSON.stringify(back)).toBe(JSON.stringify(obj));
  });
});
