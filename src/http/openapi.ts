/**
 * The OpenAPI endpoints, as kube-apiserver serves them (kube-openapi's handlers):
 *
 * | path                              | media types                                        |
 * |-----------------------------------|----------------------------------------------------|
 * | `/openapi/v2`                     | JSON; gnostic protobuf (`...spec.v2@v1.0+protobuf`, `...spec.v2.v1.0+protobuf`) |
 * | `/openapi/v3`                     | JSON root: group version → `serverRelativeURL` with `?hash=` |
 * | `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>` | JSON (the v3 protobuf form is not served: 406 when it is all the client accepts; kubectl and client-go ask for JSON) |
 *
 * Every response carries an ETag and answers `If-None-Match` with 304. A group-version request
 * with `?hash=` equal to the current ETag is `Cache-Control: public, immutable` (client-go caches
 * it forever); a stale hash is redirected (301) to the current URL. The documents are built on
 * the first request and cached as bytes (src/openapi/documents.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OpenApiDocuments, RenderedDocument } from '../openapi/documents.js';
import type { SchemaSet } from '../registry/schema.js';
import type { CustomKinds } from '../openapi/custom.js';
import type { Registry } from '../registry/types.js';
import { ApiError, notAcceptable } from '../api/errors.js';
import { KUBERNETES_MAJOR, KUBERNETES_MINOR } from './version.js';

const JSON_TYPE = 'application/json';
/** The media type kube answers protobuf requests with (the `@` spelling is deprecated). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const OPENAPI_V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** Media types a client may ask for, in the server's order of preference, and what they select. */
interface Offer<T> {
  readonly mediaType: string;
  readonly value: T;
}

const V2_OFFERS: readonly Offer<'json' | 'protobuf'>[] = [
  { mediaType: JSON_TYPE, value: 'json' },
  { mediaType: OPENAPI_V2_PROTOBUF, value: 'protobuf' },
  { mediaType: OPENAPI_V2_PROTOBUF_DEPRECATED, value: 'protobuf' },
];
const V3_OFFERS: readonly Offer<'json'>[] = [{ mediaType: JSON_TYPE, value: 'json' }];

/** Accept ranges (type only, lower case), highest q first; the client's order among equal q. */
function acceptRanges(header: string | undefined): string[] {
  if (header === undefined || header.trim() === '') return ['*/*'];
  const ranges: { type: string; q: number; i: number }[] = [];
  header.split(',').forEach((part, i) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim());
    let q = 1;
    for (const p of params) if (p.toLowerCase().startsWith('q=')) q = Number.parseFloat(p.slice(2));
    if (type !== '' && Number.isFinite(q) && q > 0) ranges.push({ type: type.toLowerCase(), q, i });
  });
  return ranges.sort((a, b) => b.q - a.q || a.i - b.i).map((r) => r.type);
}

/**
 * The first offer the Accept header admits, taking ranges in the client's preference order and,
 * for wildcards, offers in the server's; undefined when none is acceptable (406).
 */
export function negotiate<T>(accept: string | undefined, offers: readonly Offer<T>[]): Offer<T> | undefined {
  for (const range of acceptRanges(accept)) {
    for (const offer of offers) {
      if (range === '*/*' || range === offer.mediaType) return offer;
      if (range.endsWith('/*') && offer.mediaType.startsWith(range.slice(0, -1))) return offer;
    }
  }
  return undefined;
}

function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const quoted = `"${etag}"`;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === quoted;
  });
}

/** Sends a cached document, or 304 when the client already has this version. */
function send(
  request: FastifyRequest,
  reply: FastifyReply,
  doc: RenderedDocument,
  contentType: string,
): FastifyReply {
  void reply.header('ETag', `"${doc.etag}"`).header('Last-Modified', doc.lastModified.toUTCString());
  if (matchesIfNoneMatch(request.headers['if-none-match'], doc.etag)) return reply.code(304).send();
  return reply.type(contentType).send(doc.body);
}

function notAcceptableFor(path: string, offers: readonly Offer<unknown>[]): ApiError {
  return notAcceptable(
    `only the following media types are accepted at ${path}: ${offers.map((o) => o.mediaType).join(', ')}`,
  );
}

/** What the OpenAPI endpoints are built from. */
export interface OpenApiDeps {
  readonly registry: Registry;
  readonly schemas: SchemaSet;
  /** Custom resources to publish (CRD versions), if any. */
  readonly custom?: CustomKinds;
}

/**
 * Registers `/openapi/v2`, `/openapi/v3` and `/openapi/v3/*` on `app`. Nothing is built until the
 * first request. Unknown group versions under `/openapi/v3/` are 404.
 */
export function registerOpenApiRoutes(app: FastifyInstance, deps: OpenApiDeps): void {
  // The builders are loaded on the first OpenAPI request, not at start-up.
  let loaded: Promise<{ docs: OpenApiDocuments; serverRelativeUrl: (path: string, etag: string) => string }>;
  const load = (): typeof loaded =>
    (loaded ??= import('../openapi/documents.js').then((m) => ({
      docs: new m.OpenApiDocuments(deps.registry, deps.schemas, {
        v2Info: { title: 'Kubernetes', version: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.0` },
        ...(deps.custom === undefined ? {} : { custom: deps.custom }),
      }),
      serverRelativeUrl: m.serverRelativeUrl,
    })));

  app.get('/openapi/v2', async (request, reply) => {
    const { docs } = await load();
    const offer = negotiate(request.headers.accept, V2_OFFERS);
    void reply.header('Vary', 'Accept');
    if (offer === undefined) throw notAcceptableFor('/openapi/v2', V2_OFFERS);
    return offer.value === 'json'
      ? send(request, reply, docs.v2Json(), JSON_TYPE)
      : send(request, reply, docs.v2Protobuf(), OPENAPI_V2_PROTOBUF);
  });

  app.get('/openapi/v3', async (request, reply) =>
    send(request, reply, (await load()).docs.v3Root(), JSON_TYPE),
  );

  app.get('/openapi/v3/*', async (request, reply) => {
    const { docs, serverRelativeUrl } = await load();
    const path = (request.params as { '*'?: string })['*'] ?? '';
    const doc = docs.v3(path);
    // kube's v3 handler answers an unknown group version with an empty 404.
    if (doc === undefined) return reply.code(404).send();
    void reply.header('Vary', 'Accept');
    if (negotiate(request.headers.accept, V3_OFFERS) === undefined)
      throw notAcceptableFor(`/openapi/v3/${path}`, V3_OFFERS);
    const hash = (request.query as Record<string, string | string[] | undefined>)['hash'];
    const wanted = Array.isArray(hash) ? hash[0] : hash;
    if (wanted !== undefined && wanted !== '') {
      if (wanted !== doc.etag)
        return reply.code(301).header('Location', serverRelativeUrl(path, doc.etag)).send();
      const expires = new Date(Date.now() + 365 * 24 * 3600 * 1000);
      void reply.header('Cache-Control', 'public, immutable').header('Expires', expires.toUTCString());
    }
    return send(request, reply, doc, JSON_TYPE);
  });
}
