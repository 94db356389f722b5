/**
 * Request body parsers of the resource endpoints, one per media type, installed in the resource
 * routes' own fastify scope. Each parses the body into a {@link RequestBody} that says which
 * format it came in, so handlers can tell a merge patch from a strategic merge patch:
 *
 * | media type                                 | parse | as                               |
 * |--------------------------------------------|-------|----------------------------------|
 * | `application/json`                         | JSON  | object body (create, update)     |
 * | `application/yaml`                         | YAML  | object body                      |
 * | `application/json-patch+json`              | JSON  | JSON patch (RFC 6902)            |
 * | `application/merge-patch+json`             | JSON  | merge patch (RFC 7386)           |
 * | `application/strategic-merge-patch+json`   | JSON  | strategic merge patch            |
 * | `application/apply-patch+yaml`             | YAML  | server-side apply                |
 * | `application/vnd.kubernetes.protobuf`      | envelope | ProtobufBody (decoded by route) |
 * | none (no `Content-Type`)                   | JSON  | object body, as kube-apiserver   |
 * | anything else                              |   –   | 415 UnsupportedMediaType         |
 *
 * A PATCH in a media type that is no patch format is not parsed: its route answers the 415, in
 * the words kube uses for the kind.
 *
 * Bodies over {@link MAX_REQUEST_BODY_BYTES} are refused with 413 before parsing; malformed
 * bodies are 400s. An empty body parses as `undefined` (a DELETE without options).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Http2ServerRequest } from 'node:http2';
import { createRequire } from 'node:module';
import type { PatchType } from '../resource/patch.js';
import { ProtobufBody } from '../representation/protobuf-body.js';
import { MAX_REQUEST_BODY_BYTES } from './error-handler.js';
import { badRequest, unsupportedMediaType } from '../api/errors.js';

/** A parsed request body and the format it came in. */
export interface RequestBody {
  /** The media type, without parameters. */
  readonly mediaType: string;
  /** Set for the patch media types. */
  readonly patchType: PatchType | undefined;
  /** The parsed JSON value (undefined for an empty body). */
  readonly value: unknown;
  /** The body's bytes (JSON and YAML bodies), for field validation's duplicate-key scan (issue 6). */
  readonly raw?: Buffer;
}

/** True for a value the parsers made. */
export function isRequestBody(value: unknown): value is RequestBody {
  return typeof value === 'object' && value !== null && 'mediaType' in value && 'patchType' in value;
}

function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8')) as unknown;
  } catch (err) {
    throw badRequest(
      `couldn't get version/kind; json parse error: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The yaml package, loaded on the first YAML body: it costs ~45 ms on the server's start path. */
let yamlModule: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));
}

/**
 * True when a YAML-typed body is JSON (its first non-blank byte is `{` or `[`): JSON is YAML, and
 * kube reads such bodies as JSON (sigs.k8s.io/yaml passes JSON through), which is far cheaper.
 */
export function isJsonText(buf: Buffer): boolean {
  for (const b of buf) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b || b === 0x5b;
  }
  return false;
}

function parseYaml(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  if (isJsonText(buf)) return parseJson(buf);
  // Repeated keys are allowed here (the last wins, as in Go); field validation reports them.
  const doc = yaml().parseDocument(buf.toString('utf8'), { uniqueKeys: false });
  const first = doc.errors[0];
  if (first !== undefined) throw badRequest(`error converting YAML to JSON: ${first.message}`);
  // Aliases are expanded with a bound (the yaml package's maxAliasCount), so a "billion laughs"
  // body fails instead of exhausting memory.
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const FORMATS: readonly {
  readonly mediaType: string;
  readonly patchType: PatchType | undefined;
  readonly parse: (b: Buffer) => unknown;
}[] = [
  { mediaType: 'application/json', patchType: undefined, parse: parseJson },
  { mediaType: 'application/yaml', patchType: undefined, parse: parseYaml },
  { mediaType: 'application/json-patch+json', patchType: 'json', parse: parseJson },
  { mediaType: 'application/merge-patch+json', patchType: 'merge', parse: parseJson },
  { mediaType: 'application/strategic-merge-patch+json', patchType: 'strategic', parse: parseJson },
  { mediaType: 'application/apply-patch+yaml', patchType: 'apply', parse: parseYaml },
  // Representations (issue 5): the envelope is checked here, the message decoded by the route.
  { mediaType: 'application/vnd.kubernetes.protobuf', patchType: undefined, parse: parseProtobuf },
];

function parseProtobuf(buf: Buffer): unknown {
  return buf.length === 0 ? undefined : new ProtobufBody(buf);
}

/**
 * True for an HTTP/2 request whose body comes with neither `Content-Length` nor `Content-Type`
 * (`kubectl create --raw -f FILE` streams its file so). fastify looks for a body only where one
 * of those or `Transfer-Encoding` (which HTTP/2 has not) says so, and would see none; the
 * caller marks it chunked in fastify's view of the headers, so the body is read and parsed as
 * JSON like any request without a `Content-Type`. A stream ended with its headers has no body.
 */
function unannouncedHttp2Body(request: FastifyRequest): boolean {
  const raw = request.raw;
  if (!(raw instanceof Http2ServerRequest)) return false;
  const { headers } = raw;
  return (
    headers['content-type'] === undefined &&
    headers['content-length'] === undefined &&
    !raw.stream.endAfterHeaders
  );
}

/**
 * Installs the parsers in `scope` (a fastify plugin scope: the parsers apply to its routes only),
 * replacing fastify's default JSON parser there.
 */
export function installBodyParsers(scope: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request of the resource routes.
  scope.addHook('onRequest', (request, _reply, done) => {
    if (unannouncedHttp2Body(request)) request.headers = { 'transfer-encoding': 'chunked' };
    done();
  });
  scope.removeAllContentTypeParsers();
  for (const format of FORMATS) {
    scope.addContentTypeParser(
      format.mediaType,
      { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BODY_BYTES },
      (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: RequestBody) => void) => {
        if (request.method === 'PATCH' && format.patchType === undefined) {
          // Not a patch format: the route refuses it (kube answers 415 before reading the body).
          done(null, { mediaType: format.mediaType, patchType: undefined, value: undefined });
          return;
        }
        try {
          done(null, {
            mediaType: format.mediaType,
            patchType: format.patchType,
            value: format.parse(body),
            raw: body,
          });
        } catch (err) {
          done(err as Error);
        }
      },
    );
  }
  scope.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BODY_BYTES },
    (request, body: Buffer, done: (err: Error | null, body?: RequestBody) => void) => {
      const contentType = request.headers['content-type'];
      if (contentType !== undefined && contentType !== '') {
        // A PATCH's route answers the 415 (in kube's words for the kind).
        if (request.method === 'PATCH')
          done(null, { mediaType: contentType, patchType: undefined, value: undefined });
        else done(unsupportedMediaType());
        return;
      }
      // No Content-Type: kube reads the body in its first serializer's media type, JSON.
      try {
        done(null, {
          mediaType: 'application/json',
          patchType: undefined,
          value: parseJson(body),
          raw: body,
        });
      } catch (err) {
        done(err as Error);
      }
    },
  );
}
