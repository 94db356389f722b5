/**
 * Accept parsing and negotiation (src/representation/accept.ts, negotiate.ts): kube's fallback
 * order, parameters, q-values, and properties over arbitrary header text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { contentMediaType, parseAccept } from '../../src/representation/accept.js';
import { negotiate, statusFormat, type EndpointCapabilities } from '../../src/representation/negotiate.js';

const READ: EndpointCapabilities = { protobuf: true, table: true, metadata: true, watch: false };
const WATCH: EndpointCapabilities = { ...READ, watch: true };
const WRITE: EndpointCapabilities = { protobuf: true, table: false, metadata: false, watch: false };
const NO_PROTOBUF: EndpointCapabilities = { ...READ, protobuf: false };
const PB = 'application/vnd.kubernetes.protobuf';

function refused(accept: string, endpoint: EndpointCapabilities): ApiError {
  try {
    negotiate(accept, endpoint);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`negotiated ${accept}`);
}

describe('parseAccept', () => {
  it('orders by q, then specificity, then header order; drops q=0 and junk', () => {
    const ranges = parseAccept('*/*;q=0.5, text/html;q=0, application/*, junk, application/json;q=0.9, b/c');
    expect(ranges.map((r) => `${r.type}/${r.subtype}`)).toEqual([
      'b/c',
      'application/*',
      'application/json',
      '*/*',
    ]);
  });

  it('keeps parameter values, lower-cases names, unquotes', () => {
    const [r] = parseAccept('application/json; AS=Table; g="meta.k8s.io"; v=v1');
    expect(Object.fromEntries(r?.params ?? [])).toEqual({ as: 'Table', g: 'meta.k8s.io', v: 'v1' });
  });

  it('reads Content-Type media types', () => {
    expect(contentMediaType('Application/JSON; charset=utf-8')).toBe('application/json');
    expect(contentMediaType('*/*')).toBe('');
    expect(contentMediaType('nonsense')).toBe('');
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        for (const r of parseAccept(text)) {
          expect(r.q).toBeGreaterThan(0);
          expect(r.q).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('negotiate', () => {
  it('defaults to JSON; */* and application/* are JSON', () => {
    expect(negotiate(undefined, READ)).toEqual({ format: 'json' });
    expect(negotiate('', READ)).toEqual({ format: 'json' });
    expect(negotiate('*/*', READ)).toEqual({ format: 'json' });
    expect(negotiate('application/*', READ)).toEqual({ format: 'json' });
  });

  it('protobuf then JSON: protobuf; without a protobuf form: JSON', () => {
    expect(negotiate(`${PB},application/json`, READ)).toEqual({ format: 'protobuf' });
    expect(negotiate(`${PB},application/json`, NO_PROTOBUF)).toEqual({ format: 'json' });
    expect(refused(PB, NO_PROTOBUF).code).toBe(406);
  });

  it('Table then JSON: Table where there is one, JSON elsewhere', () => {
    const accept =
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiate(accept, READ)).toEqual({ format: 'json', transform: { kind: 'Table', version: 'v1' } });
    expect(negotiate(accept, WRITE)).toEqual({ format: 'json' });
    expect(refused('application/json;as=Table;v=v1;g=meta.k8s.io', WRITE).reason).toBe('NotAcceptable');
  });

  it('refuses Table in protobuf, unknown as= kinds, wrong groups and versions', () => {
    for (const bad of [
      `${PB};as=Table;g=meta.k8s.io;v=v1`,
      'application/json;as=Pod;g=meta.k8s.io;v=v1',
      'application/json;as=Table;g=apps;v=v1',
      'application/json;as=Table;g=meta.k8s.io;v=v2',
      'application/json;as=Table',
    ]) {
      expect(refused(bad, READ).code, bad).toBe(406);
    }
  });

  it('metadata-only in any format', () => {
    expect(negotiate(`${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`, READ)).toEqual({
      format: 'protobuf',
      transform: { kind: 'PartialObjectMetadataList', version: 'v1' },
    });
    expect(negotiate('application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', READ)).toEqual({
      format: 'yaml',
      transform: { kind: 'PartialObjectMetadata', version: 'v1beta1' },
    });
  });

  it('stream=watch is allowed, other streams are not; watches refuse YAML', () => {
    expect(negotiate(`${PB};stream=watch`, WATCH)).toEqual({ format: 'protobuf' });
    expect(refused('application/json;stream=other', WATCH).code).toBe(406);
    expect(refused('application/yaml', WATCH).code).toBe(406);
    expect(negotiate('application/yaml, application/json', WATCH)).toEqual({ format: 'json' });
  });

  it('errors: the first plain clause, JSON otherwise', () => {
    expect(statusFormat(`${PB}, application/json`)).toBe('protobuf');
    expect(statusFormat('application/json;as=Table;g=meta.k8s.io;v=v1, application/yaml')).toBe('yaml');
    expect(statusFormat('text/html')).toBe('json');
  });

  it('only ever throws a 406 ApiError', () => {
    const clause = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .tuple(
          fc.constantFrom('application/json', 'application/yaml', PB, '*/*', 'application/*', 'text/plain'),
          fc.array(
            fc.tuple(
              fc.constantFrom('as', 'g', 'v', 'q', 'stream', 'pretty', 'x'),
              fc.constantFrom(
                'Table',
                'PartialObjectMetadata',
                'meta.k8s.io',
                'v1',
                'v1beta1',
                '0.5',
                '0',
                'watch',
                '',
              ),
            ),
            { maxLength: 4 },
          ),
        )
        .map(([t, ps]) => [t, ...ps.map(([k, v]) => `${k}=${v}`)].join(';')),
    );
    const endpoint = fc.record({
      protobuf: fc.boolean(),
      table: fc.boolean(),
      metadata: fc.boolean(),
      watch: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(clause, { maxLength: 5 }), endpoint, (clauses, ep) => {
        try {
          const n = negotiate(clauses.join(','), ep);
          if (ep.watch) expect(n.format).not.toBe('yaml');
          if (!ep.protobuf) expect(n.format).not.toBe('protobuf');
          if (n.transform?.kind === 'Table') expect(ep.table && n.format !== 'protobuf').toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).code).toBe(406);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
