/**
 * The resource endpoints of `capstan server`: one generic handler for every built-in kind, driven
 * by the registry, over the resource layer the server builds (src/server/resources.ts). Routes
 * `/api/v1/*` and `/apis/{group}/{version}/*` (discovery at `/api/v1` and
 * `/apis/{group}/{version}` themselves is the foundation's), resolves the path
 * (src/resource/target.ts) and dispatches on method and shape:
 *
 * | path                  | GET              | POST   | PUT    | PATCH  | DELETE           |
 * |-----------------------|------------------|--------|--------|--------|------------------|
 * | collection            | list / watch     | create | –      | –      | deletecollection |
 * | all-namespaces list   | list / watch     | –      | –      | –      | –                |
 * | item                  | get (/ watch)    | –      | update | patch  | delete           |
 * | item/status           | get              | –      | update | patch  | –                |
 * | item/scale            | get              | –      | update | patch  | –                |
 * | namespaces/x/finalize | –                | –      | update | –      | –                |
 *
 * Unknown paths and resources are kube's 404; a method the path or the type's verbs do not allow
 * is 405. The deprecated `/api/v1/watch/...` prefix is served too. Body parsers live in this
 * plugin's scope (body.ts), so they apply to these routes only.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ResourceContext, type ResourceReply, type Target } from '../resource/context.js';
import { createResource } from '../resource/create.js';
import { deleteObject, parseDeleteOptions, type DeleteOptions } from '../resource/delete.js';
import { deleteCollection } from '../resource/deletecollection.js';
import { getResource } from '../resource/get.js';
import { listResource } from '../resource/list.js';
import { ConvertingRepresentation } from '../representation/converting.js';
import { deleteNamespace, isNamespaceType } from '../resource/namespace-delete.js';
import { patchResource, unsupportedPatchType, type PatchBody } from '../resource/patch.js';
import { boolParam, param, type Query } from '../resource/query.js';
import { getScale, writeScale } from '../resource/scale.js';
import { resolveTarget } from '../resource/target.js';
import { updateResource } from '../resource/update.js';
import { openWatch } from '../resource/watch.js';
import type { Negotiated } from '../representation/negotiate.js';
import { ProtobufBody } from '../representation/protobuf-body.js';
import { DELETE_OPTIONS_MESSAGE } from '../representation/message-types.js';
import { Representations, type RequestShape } from '../representation/representations.js';
import { JsonSource } from '../representation/source.js';
import type { Representation } from '../representation/types.js';
import type { ResourceType } from '../registry/types.js';
import {
  readWriteOptions,
  warningHeader,
  type RawBody,
  type WriteOptions,
} from '../resource/write-options.js';
import { installBodyParsers, isJsonText, isRequestBody, type RequestBody } from './body.js';
import { MAX_REQUEST_BODY_BYTES, plainNotFound, toApiError } from './error-handler.js';
import { endLine, framed } from './json-newline.js';
import { ApiError, badRequest, methodNotAllowed, unsupportedMediaType } from '../api/errors.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';

/** One call of a {@link CustomEndpoint}. */
export interface EndpointCall {
  readonly ctx: ResourceContext;
  readonly target: Target;
  /** GET, POST, PUT, PATCH or DELETE (HEAD arrives as GET). */
  readonly method: string;
  /** The request: its `user` and `requestInfo` are set by the pipeline. */
  readonly request: FastifyRequest;
  /** The reply, for endpoints that answer on the connection themselves (upgrades). */
  readonly reply: FastifyReply;
  /** The negotiated representation, for endpoints that answer lists (which they render). */
  readonly rep: Representation;
  /**
   * The object body of a POST or PUT, decoded from JSON, YAML or protobuf (as the endpoint's
   * `messageType`); undefined for other methods.
   */
  readonly body: unknown;
}

/**
 * A request the generic verbs do not serve: the create of a virtual kind (TokenReview,
 * SubjectAccessReview, ...) or a subresource with its own behaviour (serviceaccounts/token,
 * certificatesigningrequests/approval). Kube-apiserver gives these their own REST storage; here
 * each is one function, registered by the module that owns the concern.
 */
export interface CustomEndpoint {
  /** Methods it serves; any other is 405. */
  readonly methods: readonly string[];
  /** Protobuf message type of its request body (default: the kind's). */
  readonly messageType?: string;
  /** True when a POST or PUT carries no object (connect subresources: exec, attach, ...). */
  readonly bodyless?: boolean;
  /** For a virtual kind's collection: true when it also serves its items (`.../<name>`). */
  readonly items?: boolean;
  /** The answer; undefined when the endpoint answered itself (it took an upgraded connection). */
  handle(call: EndpointCall): Promise<ResourceReply | undefined>;
}

/**
 * Custom endpoints by `<group>/<resource>` (a virtual kind's collection) or
 * `<group>/<resource>/<subresource>` (an item's subresource); the core group is ''.
 */
export type CustomEndpoints = ReadonlyMap<string, CustomEndpoint>;

/** What the resource routes serve with: the handlers' context and the server's representations. */
export interface ResourceRoutesDeps {
  readonly ctx: ResourceContext;
  readonly reps: Representations;
  /** Endpoints the generic verbs do not serve (default none). */
  readonly endpoints?: CustomEndpoints;
  /**
   * The context a request to `type` runs with (multi-version custom resources convert through
   * their store); default `ctx` itself.
   */
  readonly contextFor?: (ctx: ResourceContext, type: ResourceType, method: string) => ResourceContext;
}

/**
 * The request manager's managedFields entry on the body of a virtual kind's create (a review),
 * which the endpoint echoes in its answer: kube's create handler records it for every kind,
 * stored or not.
 */
function trackVirtualCreate(
  ctx: ResourceContext,
  type: ResourceType,
  body: JsonObject,
  write: WriteOptions,
): void {
  if (!isJsonObject(body['metadata'])) body['metadata'] = {};
  ctx.fields.trackUpdate(type, undefined, undefined, body as KubeObject, write, ctx.now());
}

/** The custom endpoint `target` reaches, if any. */
function customEndpointOf(endpoints: CustomEndpoints, target: Target): CustomEndpoint | undefined {
  if (endpoints.size === 0) return undefined;
  const { type } = target;
  if (target.subresource !== undefined) {
    return endpoints.get(`${type.group}/${type.plural}/${target.subresource}`);
  }
  if (!type.virtual) return undefined;
  const endpoint = endpoints.get(`${type.group}/${type.plural}`);
  return target.name === undefined || endpoint?.items === true ? endpoint : undefined;
}

/** What one request renders with (issue 5): the server's factory and the negotiated form. */
interface Rendering {
  readonly reps: Representations;
  readonly negotiated: Negotiated;
  readonly rep: Representation;
}

const SCALE_MESSAGE = 'k8s.io.api.autoscaling.v1.Scale';

const NOT_ALLOWED = 'the server does not allow this method on the requested resource';

function notFoundPath(): ApiError {
  return new ApiError('NotFound', 'the server could not find the requested resource', {});
}

function requireVerb(target: Target, verb: string): void {
  if (!target.type.verbs.includes(verb) || target.type.virtual) throw methodNotAllowed(NOT_ALLOWED);
}

/** The object body of a POST or PUT (not a patch format); protobuf decodes as `messageType`. */
function objectBody(body: unknown, reps: Representations, messageType: string): unknown {
  if (!isRequestBody(body)) throw badRequest('the request has no body');
  if (body.patchType !== undefined) throw unsupportedMediaType();
  if (body.value === undefined) throw badRequest('the request has an empty body');
  if (body.value instanceof ProtobufBody) {
    // Kinds without a protobuf form (custom resources) take JSON and YAML only, as kube.
    if (messageType === '') {
      throw new ApiError(
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
      );
    }
    return body.value.decode(reps.codec, messageType);
  }
  return body.value;
}

/**
 * The patch of a PATCH request to a built-in kind (`builtIn`) or a custom resource. A media type
 * that is no patch format is refused as kube refuses it: for a built-in kind by its router
 * (go-restful's bare `415: Unsupported Media Type`), for a custom resource by its handler, which
 * lists the patch formats custom resources take (no strategic merge patch; that one is refused
 * so too, on every subresource).
 */
function patchBody(body: unknown, builtIn: boolean): PatchBody {
  const patchType = isRequestBody(body) ? body.patchType : undefined;
  if (patchType === undefined || (patchType === 'strategic' && !builtIn)) {
    if (builtIn) throw new ApiError('UnsupportedMediaType', '415: Unsupported Media Type', {});
    throw unsupportedPatchType(false);
  }
  const value = (body as RequestBody).value;
  if (value === undefined) throw badRequest('the request has an empty body');
  return { patchType, patch: value };
}

/** The bytes of a JSON or YAML body, for field validation. */
function rawBodyOf(body: unknown): RawBody | undefined {
  if (!isRequestBody(body) || body.raw === undefined) return undefined;
  return { bytes: body.raw, yaml: body.mediaType.endsWith('yaml') && !isJsonText(body.raw) };
}

/** The patch type of a PATCH body (undefined for other bodies). */
function patchTypeOf(body: unknown): string | undefined {
  return isRequestBody(body) ? body.patchType : undefined;
}

function deleteBody(body: unknown, reps: Representations): unknown {
  if (!isRequestBody(body)) return undefined;
  if (body.value instanceof ProtobufBody) return body.value.decode(reps.codec, DELETE_OPTIONS_MESSAGE);
  return body.value;
}

/** Streams a watch to the client (headers flushed at once, as kube-apiserver does). */
async function serveWatch(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  reply: FastifyReply,
  rep: Representation,
): Promise<void> {
  const res = reply.raw;
  // Listened for before the watch opens: a client may leave while it is opening.
  let closed = false;
  let wake: (() => void) | undefined;
  const resume = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  res.on('close', () => {
    closed = true;
    resume();
  });
  const session = await openWatch(ctx, target, query, rep);
  void reply.hijack();
  if (closed) {
    session.close();
    return;
  }
  res.on('close', () => session.close());
  res.on('drain', resume);
  // The client went away or the stream broke: nothing left to tell anyone.
  res.on('error', () => undefined);
  res.writeHead(200, { 'content-type': rep.streamContentType, 'cache-control': 'no-cache, private' });
  if (typeof res.flushHeaders === 'function') res.flushHeaders();
  // Written straight from the watcher's batches: a Readable in between cost a few microseconds
  // per delivered event, which thousands of watchers multiply.
  try {
    for await (const chunk of session.lines()) {
      if (closed) break;
      if (!res.write(chunk) && !closed) await new Promise<void>((resolve) => (wake = resolve));
    }
    if (!closed) res.end();
  } catch {
    // The watch broke (its storage watch failed): the stream is cut, as a broken pipe would be.
    res.destroy();
  } finally {
    session.close();
  }
}

async function dispatch(
  ctx: ResourceContext,
  target: Target,
  request: FastifyRequest,
  reply: FastifyReply,
  watchPrefix: boolean,
  custom: CustomEndpoint | undefined,
  r: Rendering,
  warnings: string[],
): Promise<ResourceReply | undefined> {
  const { reps, rep } = r;
  const query = request.query as Query;
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  // --- modifying options (dryRun, fieldManager, fieldValidation, force): issue 6 ---
  const ua = request.headers['user-agent'];
  const writeOf = (kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): WriteOptions => {
    const patchType = kind === 'PatchOptions' ? patchTypeOf(request.body) : undefined;
    const rawBody = rawBodyOf(request.body);
    return readWriteOptions(query, kind, {
      userAgent: ua,
      ...(patchType === undefined ? {} : { patchType }),
      warnings,
      ...(rawBody === undefined ? {} : { rawBody }),
      user: request.user,
      auditAnnotations: (request.auditAnnotations ??= {}),
    });
  };
  const deleteOf = (): DeleteOptions => ({
    ...parseDeleteOptions(deleteBody(request.body, reps), query),
    requester: { user: request.user, warnings, auditAnnotations: (request.auditAnnotations ??= {}) },
  });
  // --- end modifying options ---
  const { type } = target;
  // For a PATCH: built-in kinds have a schema (custom resources: a CRD's); the patch formats differ.
  const builtIn = method === 'PATCH' && type.messageType !== '' && ctx.fields.describes(type.messageType);
  if (custom !== undefined) {
    if (!custom.methods.includes(method)) throw methodNotAllowed(NOT_ALLOWED);
    const body =
      custom.bodyless === true
        ? undefined
        : method === 'POST' || method === 'PUT'
          ? objectBody(request.body, reps, custom.messageType ?? type.messageType)
          : method === 'PATCH'
            ? patchBody(request.body, builtIn)
            : undefined;
    if (type.virtual && method === 'POST' && isJsonObject(body))
      trackVirtualCreate(ctx, type, body, writeOf('CreateOptions'));
    return custom.handle({ ctx, target, method, request, reply, body, rep });
  }
  const allNamespaces = type.namespaced && target.namespace === undefined;
  if (target.name === undefined) {
    if (method === 'GET') {
      if (watchPrefix || boolParam(query, 'watch')) {
        requireVerb(target, 'watch');
        await serveWatch(ctx, target, query, reply, rep);
        return undefined;
      }
      requireVerb(target, 'list');
      return listResource(ctx, target, query, rep);
    }
    if (allNamespaces || watchPrefix) throw methodNotAllowed(NOT_ALLOWED);
    if (method === 'POST') {
      requireVerb(target, 'create');
      return createResource(
        ctx,
        target,
        objectBody(request.body, reps, type.messageType),
        writeOf('CreateOptions'),
      );
    }
    if (method === 'DELETE') {
      requireVerb(target, 'deletecollection');
      return deleteCollection(ctx, target, query, deleteOf());
    }
    throw methodNotAllowed(NOT_ALLOWED);
  }
  if (watchPrefix && (method !== 'GET' || target.subresource !== undefined))
    throw methodNotAllowed(NOT_ALLOWED);
  switch (target.subresource) {
    case undefined:
      switch (method) {
        case 'GET':
          if (watchPrefix || boolParam(query, 'watch')) {
            requireVerb(target, 'watch');
            const pinned = `metadata.name=${target.name.replace(/[\\,=]/g, (c) => `\\${c}`)}`;
            const existing = param(query, 'fieldSelector');
            await serveWatch(
              ctx,
              { ...target, name: undefined },
              { ...query, fieldSelector: existing ? `${existing},${pinned}` : pinned },
              reply,
              rep,
            );
            return undefined;
          }
          requireVerb(target, 'get');
          return getResource(ctx, target, query);
        case 'PUT':
          requireVerb(target, 'update');
          return updateResource(
            ctx,
            target,
            objectBody(request.body, reps, type.messageType),
            writeOf('UpdateOptions'),
          );
        case 'PATCH':
          requireVerb(target, 'patch');
          return patchResource(ctx, target, patchBody(request.body, builtIn), writeOf('PatchOptions'));
        case 'DELETE': {
          requireVerb(target, 'delete');
          const options = deleteOf();
          if (isNamespaceType(type)) return deleteNamespace(ctx, type, target.name, options);
          return deleteObject(ctx, type, target.namespace, target.name, options);
        }
      }
      break;
    case 'status':
    case 'ephemeralcontainers':
    case 'resize':
      if (method === 'GET') return getResource(ctx, { ...target, subresource: undefined }, query);
      if (method === 'PUT')
        return updateResource(
          ctx,
          target,
          objectBody(request.body, reps, type.messageType),
          writeOf('UpdateOptions'),
        );
      if (method === 'PATCH')
        return patchResource(ctx, target, patchBody(request.body, builtIn), writeOf('PatchOptions'));
      break;
    case 'scale':
      if (method === 'GET') return getScale(ctx, target);
      if (method === 'PUT')
        return writeScale(
          ctx,
          target,
          objectBody(request.body, reps, SCALE_MESSAGE),
          undefined,
          writeOf('UpdateOptions'),
        );
      if (method === 'PATCH')
        return writeScale(ctx, target, undefined, patchBody(request.body, builtIn), writeOf('PatchOptions'));
      break;
    case 'finalize':
      if (method === 'PUT')
        return updateResource(
          ctx,
          target,
          objectBody(request.body, reps, type.messageType),
          writeOf('UpdateOptions'),
        );
      break;
  }
  throw methodNotAllowed(NOT_ALLOWED);
}

/** GET is a read or a watch; everything else a write. */
function shapeOf(request: FastifyRequest, watchPrefix: boolean): RequestShape {
  if (request.method !== 'GET' && request.method !== 'HEAD') return 'write';
  return watchPrefix || boolParam(request.query as Query, 'watch') ? 'watch' : 'read';
}

/**
 * Adds `warnings` as `Warning` headers after any set earlier on the raw response (a deprecated
 * version's), each message once, as kube's recorder keeps them (a retried update repeats its
 * strategy's warnings).
 */
function addWarnings(reply: FastifyReply, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const prior = reply.raw.getHeader('warning');
  const earlier = prior === undefined ? [] : Array.isArray(prior) ? prior : [String(prior)];
  void reply.header('warning', [...earlier, ...[...new Set(warnings)].map(warningHeader)]);
}

async function handle(
  base: ResourceContext,
  contextFor: ResourceRoutesDeps['contextFor'],
  reps: Representations,
  endpoints: CustomEndpoints,
  group: string,
  version: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const rest = (request.params as Record<string, string | undefined>)['*'] ?? '';
  let segments = rest.split('/');
  if (segments[segments.length - 1] === '') segments = segments.slice(0, -1);
  const watchPrefix = segments[0] === 'watch';
  if (watchPrefix) segments = segments.slice(1);
  const target = resolveTarget(base.registry, group, version, segments);
  if (target === undefined) {
    // A group the server does not serve is not an API path: kube answers its plain 404.
    if (!base.registry.all().some((t) => t.group === group)) return void plainNotFound(reply);
    throw notFoundPath();
  }
  // kube registers no watch path for what cannot be watched, and no item path for the kinds
  // that are only created (reviews, bindings).
  if (watchPrefix && !target.type.verbs.includes('watch')) throw notFoundPath();
  const custom = customEndpointOf(endpoints, target);
  const virtualItem = target.type.virtual && target.name !== undefined && target.subresource === undefined;
  if (virtualItem && custom === undefined) throw notFoundPath();
  const ctx = contextFor === undefined ? base : contextFor(base, target.type, request.method);
  // Negotiate before doing anything: a 406 must not follow a write.
  const negotiated = reps.negotiate(
    request.headers.accept,
    target.type,
    shapeOf(request, watchPrefix),
    target.subresource,
  );
  const rep = reps.representation(negotiated, target.type, param(request.query as Query, 'includeObject'));
  const warnings: string[] = [];
  let result;
  try {
    result = await dispatch(
      ctx,
      target,
      request,
      reply,
      watchPrefix,
      watchPrefix ? undefined : custom,
      { reps, negotiated, rep },
      warnings,
    );
  } catch (err) {
    // A refused request keeps the warnings gathered before the refusal (kube sends them too).
    if (!reply.sent) addWarnings(reply, warnings);
    throw err;
  }
  if (result === undefined) return;
  addWarnings(reply, warnings);
  if (result.contentType !== undefined) {
    await reply.code(result.code).type(result.contentType).send(framed(result.contentType, result.body));
  } else if (
    negotiated.format === 'json' &&
    negotiated.transform === undefined &&
    !(rep instanceof ConvertingRepresentation)
  ) {
    await reply.code(result.code).type('application/json').send(endLine(result.body));
  } else {
    // Only JSON lists stream; every other form was rendered by the handler (contentType set).
    if (result.body instanceof Readable) throw new Error('a streamed body reached a non-JSON representation');
    await reply
      .code(result.code)
      .type(rep.contentType)
      .send(framed(rep.contentType, rep.object(new JsonSource(result.body))));
  }
}

/** Renders errors of the resource routes as Status in the client's format (issue 5). */
function installStatusRendering(scope: FastifyInstance, reps: Representations): void {
  scope.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.code >= 500) request.log.error({ err }, 'request failed');
    const status = apiError.toStatus();
    if (status.details?.retryAfterSeconds !== undefined) {
      void reply.header('Retry-After', String(status.details.retryAfterSeconds));
    }
    let encoded;
    try {
      encoded = reps.status(request.headers.accept, status);
    } catch {
      encoded = { contentType: 'application/json', body: Buffer.from(JSON.stringify(status)) };
    }
    return reply
      .code(apiError.code)
      .type(encoded.contentType)
      .send(framed(encoded.contentType, Buffer.from(encoded.body)));
  });
}

/**
 * Routes `/api/v1/*` and `/apis/{group}/{version}/*` to the resource handlers, with this
 * plugin's body parsers and Status rendering. What they serve with is built and run by the
 * server (src/server/resources.ts).
 */
export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRoutesDeps): void {
  const { ctx, reps } = deps;
  const endpoints = deps.endpoints ?? new Map<string, CustomEndpoint>();
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  void app.register(async (scope) => {
    installBodyParsers(scope);
    installStatusRendering(scope, reps);
    scope.route({
      method: [...methods],
      url: '/api/v1/*',
      bodyLimit: MAX_REQUEST_BODY_BYTES,
      handler: (request, reply) => handle(ctx, deps.contextFor, reps, endpoints, '', 'v1', request, reply),
    });
    scope.route({
      method: [...methods],
      url: '/apis/:group/:version/*',
      bodyLimit: MAX_REQUEST_BODY_BYTES,
      handler: (request, reply) => {
        const { group, version } = request.params as { group: string; version: string };
        return handle(ctx, deps.contextFor, reps, endpoints, group, version, request, reply);
      },
    });
  });
}
