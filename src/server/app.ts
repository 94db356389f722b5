/**
 * The fastify application of `capstan server`: HTTPS with HTTP/2 (HTTP/1.1 allowed), client
 * certificates requested and verified against the trusted CAs, the Status error handler, the
 * request pipeline, then the routes: health, version, discovery, OpenAPI, resources.
 *
 * Nothing here listens or opens storage (see server.ts); the app can be driven with `inject`.
 */
import fastify, { type FastifyInstance } from 'fastify';
import type { Store } from '../../storage/interface.js';
import { installDiscoveryRoutes } from '../http/discovery.js';
import { installErrorHandler, MAX_REQUEST_BODY_BYTES } from '../http/error-handler.js';
import { installHealthRoutes, type HealthFailureLog } from '../http/health.js';
import { registerOpenApiRoutes } from '../http/openapi.js';
import { registerProfilingRoutes } from '../http/profiling.js';
import { createResourceLayer, mountResources, type ResourceDeps } from './resources.js';
import { installVersionRoute, type VersionInfo } from '../http/version.js';
import type { KindRegistry } from '../registry/registry.js';
import { loadSchemas } from '../registry/schema.js';
import { patchSchemaFrom } from '../resource/patch/schema-adapter.js';
import { Authenticator } from './authentication.js';
import type { ConnectionTracker } from './connections.js';
import { serverHealthChecks } from './health-checks.js';
import type { ServerLifecycle } from './lifecycle.js';
import type { ServerLog } from './log.js';
import type { ServerOptions } from './options.js';
import { installRequestPipeline } from './pipeline.js';
import { buildAuthorization } from '../authz/setup.js';
import { RBAC_BOOTSTRAP_HOOK } from './lifecycle.js';
import { approvalEndpoint } from '../certificates/approval.js';
import { ClientSigner } from '../certificates/signer.js';
import type { CertKeyPair } from '../pki/certificate.js';

/** TLS material of the listener. */
export interface AppTls {
  readonly certPem: string;
  readonly keyPem: string;
  /** CAs that verify client certificates. */
  readonly clientCaPems: readonly string[];
}

/** Everything the app is built from. */
export interface AppDeps {
  readonly options: ServerOptions;
  readonly registry: KindRegistry;
  /** The store under `--etcd-prefix`. */
  readonly store: Store;
  readonly lifecycle: ServerLifecycle;
  readonly tls: AppTls;
  readonly version: VersionInfo;
  readonly connections: ConnectionTracker;
  /** `host:port` for `/api`'s serverAddressByClientCIDRs (known once listening). */
  readonly serverAddress: () => string;
  /** Where failures worth an operator's attention go (health check reasons, 5xx causes). */
  readonly log: ServerLog;
  /** The cluster CA: signs approved `kubernetes.io/kube-apiserver-client` CSRs (none: no signer). */
  readonly ca?: CertKeyPair;
  /** Test hook: an RBAC evaluation bug to plant (`CAPSTAN_AUTHZ_BUG`, see RbacAuthorizer). */
  readonly plantedAuthzBug?: string;
  /** Run the resource controllers (namespace lifecycle); default true. */
  readonly startControllers?: boolean;
}

/** A fastify schema compiler factory whose compilers refuse every schema. */
function refuseSchemas(): () => never {
  return () => {
    throw new Error('capstan routes take no fastify schemas: validate in the handler');
  };
}

/** Builds the app; call `ready()` or `listen()` on the result. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const { options } = deps;
  const app = fastify({
    http2: true,
    https: {
      allowHTTP1: true,
      key: deps.tls.keyPem,
      cert: deps.tls.certPem,
      ca: [...deps.tls.clientCaPems],
      requestCert: true,
      // Unverified or absent client certificates are the authenticator's call (401 or anonymous).
      rejectUnauthorized: false,
      ...(options.tlsMinVersion === undefined ? {} : { minVersion: options.tlsMinVersion }),
      ...(options.http2MaxStreamsPerConnection > 0
        ? { settings: { maxConcurrentStreams: options.http2MaxStreamsPerConnection } }
        : {}),
    },
    loggerInstance: deps.log.asFastifyLogger(),
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    // Watches and long lists stream for a long time; kube-apiserver has no idle cut-off either.
    http2SessionTimeout: 0,
    connectionTimeout: 0,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // No route declares a fastify schema (the resource layer negotiates and decodes bodies
    // itself). Compilers that refuse schemas keep ajv and fast-json-stringify, ~45 ms of module
    // loading, off the start path, and make an accidental schema fail loudly at startup.
    schemaController: { compilersFactory: { buildValidator: refuseSchemas, buildSerializer: refuseSchemas } },
  }) as unknown as FastifyInstance;

  deps.connections.attach(app.server as unknown as import('node:http2').Http2SecureServer);
  installErrorHandler(app);
  // The resource layer is built first: the authorizer's RBAC index watches its store.
  const schemas = loadSchemas();
  const resourceDeps: ResourceDeps = {
    registry: deps.registry,
    store: deps.store,
    eventTtlSeconds: Math.floor(options.eventTtlMs / 1000),
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds,
    patchSchema: patchSchemaFrom(schemas),
    schemas,
    storageMediaType: options.storageMediaType,
    watchCache: options.watchCache
      ? {
          defaultSize: options.defaultWatchCacheSize,
          sizes: (options.flags.get('watch-cache-sizes') as readonly string[] | undefined) ?? [],
          // Each type's cache starts on first use: warming every type at boot replays the whole
          // retained history once per type, which delayed the first request on big stores
          // (100,000 objects: 2.9 s against 1.1 s); reads go to storage while a cache warms.
          startAll: false,
          onError: (resource, err) => deps.log.error(`watch cache of ${resource}: storage watch failed`, err),
        }
      : false,
    ...(deps.startControllers === undefined ? {} : { startControllers: deps.startControllers }),
  };
  const layer = createResourceLayer(resourceDeps);
  const authz = buildAuthorization({
    modes: options.authorizationModes,
    store: layer.store,
    policyFile: options.flags.get('authorization-policy-file') as string,
    webhook: {
      configFile: options.flags.get('authorization-webhook-config-file') as string,
      version: options.flags.get('authorization-webhook-version') as string,
      authorizedTtlMs: options.flags.get('authorization-webhook-cache-authorized-ttl') as number,
      unauthorizedTtlMs: options.flags.get('authorization-webhook-cache-unauthorized-ttl') as number,
    },
    now: () => new Date(),
    logError: (message, err) => deps.log.error(message, err),
    ...(deps.plantedAuthzBug === undefined ? {} : { plantedBug: deps.plantedAuthzBug }),
  });
  if (authz.rbacIndex !== undefined) deps.lifecycle.claimHook(RBAC_BOOTSTRAP_HOOK);
  installRequestPipeline(app, new Authenticator({ anonymousAuth: options.anonymousAuth }), {
    impersonation: authz.impersonation,
    ...(authz.authorization === undefined ? {} : { authorization: authz.authorization }),
  });
  const escalation = authz.escalation;
  if (escalation !== undefined) {
    app.addHook('preHandler', (request, reply, done) => {
      const pending = escalation(request, reply);
      if (pending instanceof Promise)
        pending.then(
          () => done(),
          (err: unknown) => done(err as Error),
        );
      else done();
    });
  }
  app.addHook('onReady', (done) => {
    // Not awaited: readyz reports the hook until the bootstrap policy is in place.
    void authz.start(() => deps.lifecycle.completeHook(RBAC_BOOTSTRAP_HOOK));
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    authz.stop();
    done();
  });
  const signer =
    deps.ca === undefined || deps.startControllers === false
      ? undefined
      : new ClientSigner(
          layer.store,
          deps.ca,
          () => new Date(),
          (m, e) => deps.log.error(m, e),
        );
  if (signer !== undefined) {
    app.addHook('onReady', (done) => {
      signer.start();
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      signer.stop();
      done();
    });
  }
  app.addHook('onRequest', (request, reply, done) => {
    deps.connections.onRequest(request, reply);
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    deps.connections.onResponse(request);
    done();
  });

  const healthLog: HealthFailureLog = (endpoint, failures) => {
    for (const f of failures) deps.log.error(`${endpoint} check ${f.name} failed: ${f.reason}`);
  };
  installHealthRoutes(
    app,
    serverHealthChecks({
      store: deps.store,
      lifecycle: deps.lifecycle,
      storeHealthTimeoutMs: options.etcdHealthcheckTimeoutMs,
      storeReadyTimeoutMs: options.etcdReadycheckTimeoutMs,
    }),
    healthLog,
  );
  installVersionRoute(app, deps.version);
  if (options.flags.get('profiling') !== false) registerProfilingRoutes(app);
  installDiscoveryRoutes(app, deps.registry, { serverAddress: deps.serverAddress });
  // One parse of the generated schemas (above) serves OpenAPI, protobuf, strategic merge patch and apply.
  registerOpenApiRoutes(app, { registry: deps.registry, schemas });
  const endpoints = new Map(authz.endpoints);
  endpoints.set('certificates.k8s.io/certificatesigningrequests/approval', approvalEndpoint(authz.chain));
  mountResources(app, { ...resourceDeps, endpoints }, layer);
  return app;
}
