/**
 * The OpenAPI endpoints over HTTP (fastify inject): media type negotiation, ETags and 304,
 * the v3 hash contract (immutable when current, 301 when stale), an empty 404 (kube's v3 handler)
 * and a 406 Status.
 */
import fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { negotiate, OPENAPI_V2_PROTOBUF, registerOpenApiRoutes } from '../../src/http/openapi.js';
import { loadGnosticDocumentType } from '../../src/openapi/v2-protobuf.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';

const PB_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

let app: FastifyInstance;

beforeAll(async () => {
  app = fastify();
  installErrorHandler(app);
  registerOpenApiRoutes(app, { registry: loadRegistry(), schemas: loadSchemas() });
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

describe('negotiate', () => {
  const offers = [
    { mediaType: 'application/json', value: 'json' },
    { mediaType: 'application/x-pb', value: 'pb' },
  ];
  it('takes the client preference, then the server order for wildcards', () => {
    expect(negotiate(undefined, offers)?.value).toBe('json');
    expect(negotiate('application/x-pb, application/json', offers)?.value).toBe('pb');
    expect(negotiate('application/x-pb;q=0.5, application/json', offers)?.value).toBe('json');
    expect(negotiate('text/html, application/*', offers)?.value).toBe('json');
    expect(negotiate('text/html', offers)).toBeUndefined();
    expect(negotiate('application/json;q=0', offers)).toBeUndefined();
  });
});

describe('/openapi/v2', () => {
  it('serves gnostic protobuf to client-go (deprecated and current media type names)', async () => {
    for (const accept of [PB_DEPRECATED, OPENAPI_V2_PROTOBUF]) {
      const res = await app.inject({ url: '/openapi/v2', headers: { accept } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(OPENAPI_V2_PROTOBUF);
      expect(res.headers['vary']).toBe('Accept');
      expect(res.headers['etag']).toMatch(/^"[0-9A-F]{128}"$/);
      const type = loadGnosticDocumentType();
      const doc = type.toObject(type.decode(res.rawPayload)) as { swagger: string };
      expect(doc.swagger).toBe('2.0');
    }
  });

  it('serves JSON without an Accept header or when asked', async () => {
    for (const headers of [{}, { accept: 'application/json' }, { accept: '*/*' }]) {
      const res = await app.inject({ url: '/openapi/v2', headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json<{ swagger: string }>().swagger).toBe('2.0');
    }
  });

  it('answers If-None-Match with 304 and a different representation with the same ETag (as kube)', async () => {
    const first = await app.inject({ url: '/openapi/v2', headers: { accept: PB_DEPRECATED } });
    const etag = first.headers['etag'] as string;
    const again = await app.inject({
      url: '/openapi/v2',
      headers: { accept: PB_DEPRECATED, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const json = await app.inject({ url: '/openapi/v2', headers: { accept: 'application/json' } });
    expect(json.headers['etag']).toBe(etag);
  });

  it('refuses media types it cannot produce with a 406 Status', async () => {
    const res = await app.inject({ url: '/openapi/v2', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(406);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
  });
});

describe('/openapi/v3', () => {
  async function rootPaths(): Promise<Record<string, { serverRelativeURL: string }>> {
    const res = await app.inject({ url: '/openapi/v3' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.json<{ paths: Record<string, { serverRelativeURL: string }> }>().paths;
  }

  it('points at each group version by hash; the hashed URL is immutable', async () => {
    const paths = await rootPaths();
    const apps = paths['apis/apps/v1']?.serverRelativeURL;
    expect(apps).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    const res = await app.inject({ url: apps as string, headers: { accept: 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, immutable');
    expect(res.headers['expires']).toBeDefined();
    expect(res.headers['etag']).toBe(`"${(apps as string).split('hash=')[1]}"`);
    expect(res.json<{ openapi: string }>().openapi).toBe('3.0.0');
  });

  it('serves the core group at api/v1, without caching headers when no hash is given', async () => {
    const res = await app.inject({ url: '/openapi/v3/api/v1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBeUndefined();
    const schemas = res.json<{ components: { schemas: Record<string, unknown> } }>().components.schemas;
    expect(schemas['io.k8s.api.core.v1.Pod']).toBeDefined();
    expect(schemas['io.k8s.api.apps.v1.Deployment']).toBeUndefined();
  });

  it('redirects a stale hash to the current URL', async () => {
    const current = (await rootPaths())['apis/batch/v1']?.serverRelativeURL;
    const res = await app.inject({ url: '/openapi/v3/apis/batch/v1?hash=0123' });
    expect(res.statusCode).toBe(301);
    expect(res.headers['location']).toBe(current);
  });

  it('answers If-None-Match with 304', async () => {
    const first = await app.inject({ url: '/openapi/v3' });
    const again = await app.inject({
      url: '/openapi/v3',
      headers: { 'if-none-match': first.headers['etag'] as string },
    });
    expect(again.statusCode).toBe(304);
  });

  it('is an empty 404 for group versions it does not serve, as kube', async () => {
    for (const url of ['/openapi/v3/apis/example.com/v1', '/openapi/v3/api/v2']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).toBe('');
    }
  });

  it('does not serve the v3 protobuf form: 406 when it is all the client takes, JSON when JSON is acceptable too', async () => {
    const pb = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';
    const only = await app.inject({ url: '/openapi/v3/apis/apps/v1', headers: { accept: pb } });
    expect(only.statusCode).toBe(406);
    const either = await app.inject({
      url: '/openapi/v3/apis/apps/v1',
      headers: { accept: `${pb}, application/json` },
    });
    expect(either.statusCode).toBe(200);
    expect(either.headers['content-type']).toMatch(/^application\/json/);
  });
});
