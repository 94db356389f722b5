/**
 * The `json` log line: byte for byte what `JSON.stringify` writes for the event, for events with
 * strings that need escaping (quotes, backslashes, control characters, lone surrogates) and
 * without, with and without the optional fields, and with one user object shared by many events
 * (its JSON is kept per user).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLine, sortedMap, type AuditEvent, type AuditUser } from '../../src/audit/event.js';

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', 'a"b', 'back\\slash', 'tab\there', '\u0000', '\ud800', '\udc00x', '\u2028', 'é€😀'),
);
const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

const user: fc.Arbitrary<AuditUser> = fc.record(
  {
    username: text,
    uid: text,
    groups: fc.array(text, { maxLength: 3 }),
    extra: fc.dictionary(text, fc.array(text, { maxLength: 2 }), { maxKeys: 2 }),
  },
  { requiredKeys: ['username'] },
);

const event = (u: fc.Arbitrary<AuditUser>): fc.Arbitrary<AuditEvent> =>
  fc
    .record({
      level: fc.constantFrom('Metadata', 'Request', 'RequestResponse'),
      auditID: text,
      stage: fc.constantFrom('RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'),
      requestURI: text,
      verb: text,
      user: u,
      impersonatedUser: opt(user),
      sourceIPs: opt(fc.array(text, { maxLength: 3 })),
      userAgent: opt(text),
      objectRef: opt(
        fc.record(
          {
            resource: text,
            namespace: text,
            name: text,
            apiGroup: text,
            apiVersion: text,
            subresource: text,
          },
          { requiredKeys: [] },
        ),
      ),
      responseStatus: opt(fc.record({ metadata: fc.constant({}), message: opt(text), code: fc.integer() })),
      requestObject: opt(fc.jsonValue()),
      responseObject: opt(fc.jsonValue()),
      requestReceivedTimestamp: text,
      stageTimestamp: text,
      annotations: opt(fc.dictionary(text, text, { maxKeys: 3 })),
    })
    .map((r) => {
      // As the server builds events: absent fields are left out, not set to undefined.
      const ev: Record<string, unknown> = { kind: 'Event', apiVersion: 'audit.k8s.io/v1' };
      for (const [k, v] of Object.entries(r)) if (v !== undefined) ev[k] = v;
      return ev as unknown as AuditEvent;
    });

describe('jsonLine', () => {
  it('writes what JSON.stringify writes', () => {
    fc.assert(
      fc.property(event(user), (ev) => {
        expect(jsonLine(ev)).toBe(`${JSON.stringify(ev)}\n`);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a shared user right across events', () => {
    fc.assert(
      fc.property(
        user,
        fc.array(event(fc.constant(null as unknown as AuditUser)), { minLength: 1, maxLength: 4 }),
        (u, evs) => {
          for (const ev of evs) {
            const withUser = { ...ev, user: u };
            expect(jsonLine(withUser)).toBe(`${JSON.stringify(withUser)}\n`);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('sortedMap', () => {
  // Integer-like keys are left out: a JavaScript object always puts them first.
  const key = fc.string().filter((k) => !/^(0|[1-9]\d*)$/.test(k));
  it('copies the map with its keys in order, sorted or not', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.string()), (m) => {
        const out = sortedMap(m);
        expect(out).not.toBe(m);
        expect(Object.keys(out)).toEqual(Object.keys(m).sort());
        expect(out).toEqual(m);
      }),
    );
  });
});
