/**
 * Fuzzing every decoder a client reaches through the server (issue 5): arbitrary bytes as JSON,
 * YAML and protobuf bodies (raw, behind the magic, and mutations of a valid envelope) and
 * arbitrary Accept and Content-Type headers. The server never fails (no 5xx, no crash); every
 * refusal is a Status whose code is the HTTP status.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEnvelope } from '../../src/codec/index.js';
import { testCodec } from '../codec/support.js';
import { startResourceApp, type ResourceApp } from './resources.support.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CM = '/api/v1/namespaces/default/configmaps';
const RUNS = { numRuns: 150, seed: 5 };

let s: ResourceApp;
beforeAll(async () => {
  s = await startResourceApp();
  const r = await s.request({
    method: 'POST',
    url: CM,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ metadata: { name: 'target' }, data: { a: 'b' } }),
  });
  expect(r.statusCode).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

const VALID = Buffer.from(
  encodeEnvelope(
    'v1',
    'ConfigMap',
    testCodec().encodeMessage('k8s.io.api.core.v1.ConfigMap', {
      metadata: { name: 'fuzz', labels: { a: 'b' } },
      data: { k: 'v' },
    }),
  ),
);

/** Bytes a hostile client might send as a protobuf body. */
const protobufBytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), b])),
  fc
    .array(fc.tuple(fc.nat(VALID.length - 1), fc.integer({ min: 0, max: 255 })), {
      minLength: 1,
      maxLength: 6,
    })
    .map((edits) => {
      const copy = Buffer.from(VALID);
      for (const [at, value] of edits) copy[at] = value;
      return copy;
    }),
  fc.nat(VALID.length).map((n) => VALID.subarray(0, n)),
);

function expectStatusOrSuccess(code: number, contentType: unknown, body: Buffer): void {
  expect(code).toBeLessThan(500);
  if (code < 400) return;
  expect(String(contentType)).toMatch(/^application\/json/);
  expect(JSON.parse(body.toString('utf8'))).toMatchObject({ kind: 'Status', status: 'Failure', code });
}

describe('arbitrary request bodies', () => {
  it.each([
    ['POST', CM],
    ['PUT', `${CM}/target`],
  ])('%s protobuf bodies never fail the server', async (method, url) => {
    await fc.assert(
      fc.asyncProperty(protobufBytes, async (payload) => {
        const r = await s.app.inject({
          method: method as 'POST' | 'PUT',
          url,
          headers: { 'content-type': PB },
          payload: Buffer.from(payload),
        });
        expectStatusOrSuccess(r.statusCode, r.headers['content-type'], r.rawPayload);
      }),
      RUNS,
    );
  });

  it.each(['application/json', 'application/yaml'])(
    '%s bodies of arbitrary bytes get a 4xx Status',
    async (ct) => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), async (payload) => {
          const r = await s.app.inject({
            method: 'POST',
            url: CM,
            headers: { 'content-type': ct },
            payload: Buffer.from(payload),
          });
          expectStatusOrSuccess(r.statusCode, r.headers['content-type'], r.rawPayload);
        }),
        RUNS,
      );
    },
  );

  it('arbitrary JSON values as bodies never fail the server', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const r = await s.app.inject({
          method: 'POST',
          url: CM,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(value),
        });
        expectStatusOrSuccess(r.statusCode, r.headers['content-type'], r.rawPayload);
      }),
      RUNS,
    );
  });
});

const headerText = fc.string({ maxLength: 120 }).map((t) => t.replace(/[^\x20-\x7e]/g, ''));

describe('arbitrary headers', () => {
  it('any Accept on GET is 200 or a 406 Status', async () => {
    await fc.assert(
      fc.asyncProperty(headerText, async (accept) => {
        const r = await s.app.inject({ method: 'GET', url: `${CM}/target`, headers: { accept } });
        expect([200, 406], accept).toContain(r.statusCode);
        if (r.statusCode === 406) expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', code: 406 });
      }),
      RUNS,
    );
  });

  it('any Content-Type on POST never fails the server', async () => {
    await fc.assert(
      fc.asyncProperty(headerText, async (contentType) => {
        const r = await s.app.inject({
          method: 'POST',
          url: CM,
          headers: { 'content-type': contentType },
          payload: '{"metadata":{"generateName":"ct-"}}',
        });
        expectStatusOrSuccess(r.statusCode, r.headers['content-type'], r.rawPayload);
      }),
      RUNS,
    );
  });
});
