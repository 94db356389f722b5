/**
 * The fastify application of `capstan server`: HTTPS with HTTP/2 (HTTP/1.1 allowed), client
 * certificates requested and verified against the trusted CAs, the Status error handler, the
 * request pipeline, then the routes: health, version, discovery, OpenAPI, resources.
 *
 * Nothing here listens or opens storage (see server.ts); the app can be driven with `inject`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fastify, { type FastifyInstance } from 'fastify';
import type { Store } from '../../storage/interface.js';
import { installDiscoveryRoutes } from '../http/discovery.js';
import { installErrorHandler, MAX_REQUEST_BODY_BYTES } from '../http/error-handler.js';
import { installHealthRoutes, type HealthFailureLog } from '../http/health.js';
import { installMetricsRoute } from '../metrics/route.js';
import { requestObserver } from '../metrics/apiserver.js';
import { processMetrics } from '../metrics/process.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { instrumentStore, type CountedResource } from '../metrics/storage.js';
import { registerOpenApiRoutes } from '../http/openapi.js';
import { registerProfilingRoutes } from '../http/profiling.js';
import {
  createResourceLayer,
  mountResources,
  type ControllerFactory,
  type ResourceDeps,
} from './resources.js';
import { CrdRequests, PublishedSchemas, startCrdController } from '../apiextensions/index.js';
import {
  Aggregator,
  aggregatorProxy,
  DEFAULT_IDENTITY_HEADERS,
  remoteDiscovery,
  type IdentityHeaders,
  type ProxyClientCert,
} from '../aggregation/index.js';
import { LayeredRegistry } from '../registry/layered.js';
import { advertiseAddressOf } from '../apiserver-loops/kubernetes-service.js';
import { endpointReconcilerTypeOf } from '../apiserver-loops/endpoint-reconciler.js';
import { installVersionRoute, type VersionInfo } from '../http/version.js';
import type { KindRegistry } from '../registry/registry.js';
import { loadSchemas } from '../registry/schema.js';
import { patchSchemaFrom } from '../resource/patch/schema-adapter.js';
import { anonymousExposureWarning, buildAuthentication } from '../authn/config.js';
import type { SecretLike } from '../authn/bootstrap-token.js';
import { compileOrigins, hstsHeaderValue, installCorsAndHsts } from '../http/cors.js';
import { opensslCiphers } from '../tls/cipher-suites.js';
import { ServingTls } from '../tls/serving.js';
import { parseSniCertKey } from '../tls/sni.js';
import { ServiceAccounts } from './service-accounts.js';
import type { ServiceAccountKeys } from '../serviceaccount/keys.js';
import type { EncryptionConfig } from '../encryption/config.js';
import { chainsByPrefix, encryptingStore } from '../encryption/encrypting-store.js';
import { isLongRunning, type ConnectionTracker } from './connections.js';
import { connectionLimits } from './connection-limits.js';
import { deprecatedApis, deprecatedApisGauge } from './deprecated-apis.js';
import { Deprecations } from '../registry/deprecations.js';
import { serverHealthChecks } from './health-checks.js';
import type { ServerLifecycle } from './lifecycle.js';
import type { ServerLog } from './log.js';
import type { ServerOptions } from './options.js';
import { buildFlowControl } from './flow-control.js';
import { installRequestPipeline } from './pipeline.js';
import { requestDeadline } from './deadline.js';
import { retryAfterOnShutdown } from './retry-after.js';
import { AUTHORIZATION_CONFIG_RELOAD_MS, buildAuthorization } from '../authz/setup.js';
import { RBAC_BOOTSTRAP_HOOK } from './lifecycle.js';
import { bindingEndpoints } from './binding-endpoints.js';
import { componentStatusEndpoint, type InProcessComponents } from './component-statuses.js';
import { approvalEndpoint } from '../certificates/approval.js';
import { evictionEndpoint } from './eviction.js';
import { kubeletClientOptions, podLogEndpoint } from './kubelet-proxy.js';
import { serverMetricsApi } from './metrics-api.js';
import { podStreamEndpoint, podStreamMetrics } from './pod-streams.js';
import { proxySubresources } from './proxy-subresources.js';
import { installUpgrades } from '../http/upgrade.js';
import { webhookAdmission, type WebhookObserver } from '../admission/webhook/index.js';
import { validatingAdmissionPolicy } from '../admission/policy/index.js';
import { celMatchConditions } from '../admission/policy/match-conditions.js';
import { buildAudit } from '../audit/index.js';
import { allowAllAnnotationStep } from '../authz/authorization-step.js';
import { buildAdmission } from './admission.js';
import type { AuthorizerChain } from '../authz/authorizer.js';
import type { CelAuthorize } from '../cel/authz.js';

/** TLS material of the listener. */
export interface AppTls {
  readonly certPem: string;
  readonly keyPem: string;
  /** CAs that verify client certificates (the cluster CA first, then `--client-ca-file`'s). */
  readonly clientCaPems: readonly string[];
  /** The cluster CA (default: the first of `clientCaPems`). */
  readonly clusterCaPem?: string;
  /** `--tls-cert-file`/`--tls-private-key-file`, reloaded when they change. */
  readonly certFile?: string;
  readonly keyFile?: string;
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
  /** Deprecated API versions (default: kube 1.33's, none of the served ones). */
  readonly deprecations?: Deprecations;
  /** `host:port` for `/api`'s serverAddressByClientCIDRs (known once listening). */
  readonly serverAddress: () => string;
  /** Where failures worth an operator's attention go (health check reasons, 5xx causes). */
  readonly log: ServerLog;
  /** Run the resource controllers (namespace lifecycle); default true. */
  readonly startControllers?: boolean;
  /**
   * Service-account token keys and the cluster CA; without them the app has no service-account
   * tokens, TokenRequest, issuer discovery, pod ServiceAccount admission or their controllers.
   */
  readonly serviceAccounts?: { readonly keys: ServiceAccountKeys; readonly caPem: string };
  /** `--encryption-provider-config`, parsed: the listed resources are stored encrypted. */
  readonly encryption?: EncryptionConfig;
  /** Test hook: an RBAC evaluation bug to plant (`CAPSTAN_AUTHZ_BUG`, see RbacAuthorizer). */
  readonly plantedAuthzBug?: string;
  /** How often `--authorization-config` is looked at for changes (default one minute, as kube's). */
  readonly authorizationConfigReloadMs?: number;
  /** Test hook: the endpoint reconciler's lease TTL and interval instead of kube's 15 s and 10 s. */
  readonly endpointLease?: { readonly ttlSeconds?: number; readonly intervalMs?: number };
  /**
   * Which of the controller manager and scheduler run inside this server (set by the caller once
   * they start; `componentstatuses` reads it). Default: neither.
   */
  readonly inProcess?: InProcessComponents;
}

/** How often TLS and CA files are checked for changes. */
const CERT_RELOAD_INTERVAL_MS = 2_000;

/** A fastify schema compiler factory whose compilers refuse every schema. */
function refuseSchemas(): () => never {
  return () => {
    throw new Error('capstan routes take no fastify schemas: validate in the handler');
  };
}

/** The resources `apiserver_storage_objects` counts: each storage resource once, by kube's name. */
/** kube-apiserver's API paths (see `ApiPathTest`): `/api`, `/version`, `/openid` and served groups. */
function isApiPath(registry: LayeredRegistry, path: string): boolean {
  const [, root = '', group = ''] = path.split('/');
  if (root === 'api' || root === 'version' || root === 'openid') return true;
  return root === 'apis' && group !== '' && registry.group(group) !== undefined;
}

function countedResources(registry: KindRegistry): CountedResource[] {
  const seen = new Map<string, CountedResource>();
  for (const t of registry.all()) {
    if (t.virtual || t.storageResource === '' || seen.has(t.storageResource)) continue;
    seen.set(t.storageResource, {
      resource: t.group === '' ? t.plural : `${t.plural}.${t.group}`,
      storageResource: t.storageResource,
    });
  }
  return [...seen.values()];
}

/** kube's `apiserver_admission_webhook_admission_duration_seconds`, fed by the webhook plugins. */
function webhookDurationObserver(metrics: MetricsRegistry): WebhookObserver {
  const duration = metrics.histogram(
    'apiserver_admission_webhook_admission_duration_seconds',
    'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
    ['name', 'type', 'operation', 'rejected'],
    [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25],
  );
  return (o) => duration.observe([o.name, o.type, o.operation, String(o.rejected)], o.seconds);
}

/** `--proxy-client-cert-file` and `--proxy-client-key-file`, read (both or neither). */
function readProxyClientCert(certFile: string, keyFile: string): ProxyClientCert | undefined {
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') {
    throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  }
  return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
}

/** The identity headers sent to aggregated servers: the first of each `--requestheader-*` flag. */
function identityHeaderNames(flagList: (name: string) => string[]): IdentityHeaders {
  return {
    user: flagList('requestheader-username-headers')[0] ?? DEFAULT_IDENTITY_HEADERS.user,
    uid: flagList('requestheader-uid-headers')[0] ?? DEFAULT_IDENTITY_HEADERS.uid,
    group: flagList('requestheader-group-headers')[0] ?? DEFAULT_IDENTITY_HEADERS.group,
    extraPrefix: flagList('requestheader-extra-headers-prefix')[0] ?? DEFAULT_IDENTITY_HEADERS.extraPrefix,
  };
}

/** Builds the app; call `ready()` or `listen()` on the result. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const { options } = deps;
  const flags = options.flags;
  const flagList = (name: string): string[] =>
    ((flags.get(name) as string[] | undefined) ?? []).filter((v) => v !== '');
  // The handlers' store (JSON values) once the resource layer is mounted; bootstrap tokens read
  // their Secrets through it, and only at request time.
  const resourceStore: { current?: Store } = {};
  const serviceAccounts =
    deps.serviceAccounts === undefined
      ? undefined
      : new ServiceAccounts({
          flags: options.serviceAccount,
          keys: deps.serviceAccounts.keys,
          externalAddress: deps.serverAddress,
        });
  const authn = buildAuthentication({
    flags,
    ...(serviceAccounts === undefined ? {} : { serviceAccounts: serviceAccounts.authenticator }),
    anonymousAuth: options.anonymousAuth,
    authorizationModes: options.authorizationModes,
    clientCaFile: options.clientCaFile,
    clusterCaPem: deps.tls.clusterCaPem ?? deps.tls.clientCaPems[0] ?? '',
    resolvePath: (p) => resolve(p),
    secrets: async (name) => {
      const store = resourceStore.current;
      if (store === undefined) return undefined;
      const { kv } = await store.get(`/secrets/kube-system/${name}`);
      return kv === undefined
        ? undefined
        : (JSON.parse(Buffer.from(kv.value).toString('utf8')) as SecretLike);
    },
  });
  for (const w of authn.warnings) deps.log.warn(w);
  const exposure = anonymousExposureWarning(authn.anonymous, options.authorizationModes);
  if (exposure !== undefined) deps.log.warn(exposure);
  const ciphers = opensslCiphers(flagList('tls-cipher-suites'));
  const servingTls = new ServingTls({
    certPem: deps.tls.certPem,
    keyPem: deps.tls.keyPem,
    ...(deps.tls.certFile === undefined || deps.tls.keyFile === undefined
      ? {}
      : { certFile: deps.tls.certFile, keyFile: deps.tls.keyFile }),
    caBundles:
      authn.requestHeaderCas === undefined ? [authn.clientCas] : [authn.clientCas, authn.requestHeaderCas],
    ...(options.tlsMinVersion === undefined ? {} : { minVersion: options.tlsMinVersion }),
    ...(ciphers === undefined ? {} : { ciphers }),
    sni: flagList('tls-sni-cert-key').map(parseSniCertKey),
  });
  const app = fastify({
    http2: true,
    https: {
      allowHTTP1: true,
      ...servingTls.listenerOptions(),
      requestCert: true,
      // Unverified or absent client certificates are the authenticator's call (401 or anonymous).
      rejectUnauthorized: false,
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
  // kube's cache control filter: no answer is kept by a shared cache unless it says otherwise
  // (the immutable OpenAPI documents do). Set on the raw response, so hijacked replies (watches)
  // carry it too; a header a route sets wins.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.raw.setHeader('cache-control', 'no-cache, private');
    done();
  });
  installCorsAndHsts(
    app,
    compileOrigins(flagList('cors-allowed-origins')),
    hstsHeaderValue(flagList('strict-transport-security-directives')),
  );
  const metrics = new MetricsRegistry(flagList('disabled-metrics'));
  const flowControl = buildFlowControl(options, metrics, isLongRunning, (m, e) => deps.log.error(m, e));
  // Built-in kinds plus the custom resources of CRDs, added and removed as they come and go.
  const registry = new LayeredRegistry(deps.registry);
  installErrorHandler(app, (path) => isApiPath(registry, path));
  // The webhook plugins read their configurations, Services and EndpointSlices through the
  // resource layer's store, built below (they start listing once the app is ready).
  // The authorizer is built after the resource layer; admission asks it at request time through
  // `celAuthorize` (the certificate plugins, and the `authorizer` of CEL in policies and webhook
  // matchConditions). Until it exists everything is allowed.
  const authorizer: { chain?: AuthorizerChain } = {};
  const celAuthorize: CelAuthorize = async (a) => {
    const chain = authorizer.chain;
    if (chain === undefined) return { allowed: true, reason: '', error: '' };
    const answer = await chain.authorize(a);
    return {
      allowed: answer.decision === 'allow',
      reason: answer.reason,
      error: answer.failed ?? answer.evaluationError ?? '',
    };
  };
  const webhooks = webhookAdmission({
    store: () => layer.store,
    registry,
    defaulter: (type, obj) => layer.ctx.strategies.of(type).default(obj),
    observe: webhookDurationObserver(metrics),
    matchConditions: celMatchConditions(celAuthorize),
    onError: (message, err) => deps.log.warn(`${message}: ${String(err)}`),
  });
  // ValidatingAdmissionPolicy reads its policies, bindings, params and namespaces the same way.
  const policies = validatingAdmissionPolicy({
    store: () => layer.store,
    registry,
    authorize: celAuthorize,
    // The server's one load of the built-in schemas (made below, before any request).
    schemas: () => schemas,
    onError: (message, err) => deps.log.warn(`${message}: ${String(err)}`),
  });
  const admission = buildAdmission({
    enable: flagList('enable-admission-plugins'),
    disable: flagList('disable-admission-plugins'),
    configFile: options.admissionControlConfigFile,
    external: new Map([
      // The ServiceAccount step needs the controller that makes `default` accounts.
      ...(serviceAccounts === undefined || deps.startControllers === false
        ? []
        : [['ServiceAccount', serviceAccounts.admission] as const]),
      ['MutatingAdmissionWebhook', webhooks.mutating],
      ['ValidatingAdmissionPolicy', policies.plugin],
      ['ValidatingAdmissionWebhook', webhooks.validating],
    ]),
    authorize: async (user, r) => {
      const answer = await celAuthorize({
        user,
        verb: r.verb,
        isResourceRequest: true,
        path: '',
        apiGroup: r.group,
        apiVersion: '*',
        resource: r.resource,
        subresource: '',
        namespace: '',
        name: r.name,
      });
      return answer.allowed;
    },
    tolerationSeconds: { notReady: 300, unreachable: 300 },
    logError: (message, err) => deps.log.error(message, err),
  });
  const webhooksEnabled =
    admission.chain.plugins.includes(webhooks.mutating) ||
    admission.chain.plugins.includes(webhooks.validating);
  // The resource layer is built first: the authorizer's RBAC index watches its store.
  // One parse of the generated schemas serves OpenAPI, protobuf, strategic merge patch and apply.
  const schemas = loadSchemas();
  const encrypted =
    deps.encryption === undefined
      ? deps.store
      : encryptingStore(deps.store, chainsByPrefix(deps.registry, deps.encryption), options.etcdPrefix);
  const published = new PublishedSchemas();
  const crdRequests = new CrdRequests();
  const crdController: ControllerFactory = (ctx) =>
    startCrdController(ctx, {
      registry,
      published,
      conversions: crdRequests,
      onError: (message, err) => deps.log.error(message, err),
    });
  // API aggregation: the APIService controller, the proxy to remote APIServices' servers.
  const aggregator = new Aggregator({
    localGroups: () => deps.registry.groups(),
    servedGroups: registry,
    clientCert: () => proxyClientCert,
    onError: (message, err) => deps.log.error(message, err),
  });
  const proxyClientCert = readProxyClientCert(
    flags.get('proxy-client-cert-file') as string,
    flags.get('proxy-client-key-file') as string,
  );
  const resourceDeps: ResourceDeps = {
    registry,
    contextFor: (ctx, type, method) => crdRequests.contextFor(ctx, type, method),
    store: instrumentStore(metrics, encrypted, countedResources(deps.registry)),
    eventTtlSeconds: Math.floor(options.eventTtlMs / 1000),
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds,
    patchSchema: patchSchemaFrom(schemas),
    schemas,
    storageMediaType: options.storageMediaType,
    services: {
      ranges: options.serviceClusterIPRanges,
      nodePorts: options.serviceNodePortRange,
      advertiseAddress: advertiseAddressOf(options.advertiseAddress, options.bindAddress),
      endpointReconciler: {
        type: endpointReconcilerTypeOf(flags.get('endpoint-reconciler-type') as string),
        apiserverCount: flags.get('apiserver-count') as number,
        ...deps.endpointLease,
      },
    },
    onListening: (task) => deps.lifecycle.onListening(task),
    shutdownSignal: deps.lifecycle.shutdownSignal,
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
    admission: admission.chain,
    namespaceLifecycle: admission.namespaceLifecycle,
    controllers: [
      ...flowControl.controllers,
      crdController,
      (ctx) => aggregator.start(ctx),
      ...admission.controllers,
    ],
  };
  const layer = createResourceLayer(resourceDeps);
  admission.attach(layer.ctx);
  resourceStore.current = layer.store;
  const authz = buildAuthorization({
    modes: options.authorizationModes,
    ...(options.authorizationConfig === undefined
      ? {}
      : {
          config: {
            ...options.authorizationConfig,
            reloadIntervalMs: deps.authorizationConfigReloadMs ?? AUTHORIZATION_CONFIG_RELOAD_MS,
          },
        }),
    logWarning: (message) => deps.log.warn(message),
    decodeProtobuf: (body, messageType) => body.decode(layer.reps.codec, messageType),
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
  authorizer.chain = authz.chain;
  if (authz.rbacIndex !== undefined) deps.lifecycle.claimHook(RBAC_BOOTSTRAP_HOOK);
  const refuseDuringShutdown = retryAfterOnShutdown(() => deps.lifecycle.rejectingRequests);
  app.addHook('onRequest', (request, reply, done) => {
    if (!refuseDuringShutdown(request, reply)) done();
  });
  // Auditing: a bad policy, log path or webhook configuration is a start-up error (as kube's).
  const audit = buildAudit({ flags: options.audit, isLongRunning, log: deps.log });
  audit.install(app);
  app.addHook('onClose', async () => {
    await audit.shutdown();
  });
  const authorization = authz.authorization ?? (audit.enabled ? allowAllAnnotationStep : undefined);
  const observe = requestObserver(metrics, isLongRunning);
  installRequestPipeline(app, authn.authenticator, {
    auditInit: audit.init,
    ...(observe === undefined ? {} : { observe }),
    ...(audit.enabled ? { audit: audit.step } : {}),
    flowControl: flowControl.step,
    impersonation: authz.impersonation,
    ...(authorization === undefined ? {} : { authorization }),
    deadline: requestDeadline({ requestTimeoutMs: options.requestTimeoutMs, isLongRunning }),
  });
  // After authorization: a refused request gets no deprecation warning.
  const deprecated = deprecatedApis(
    deps.registry,
    deps.deprecations ?? new Deprecations(),
    deprecatedApisGauge(metrics),
    // Read by the audit log with the request's other annotations (audited requests only).
    audit.enabled
      ? (request, key, value) => {
          if (request.audit !== null) (request.auditAnnotations ??= {})[key] = value;
        }
      : undefined,
  );
  if (deprecated !== undefined) {
    app.addHook('onRequest', (request, reply, done) => {
      deprecated(request, reply);
      done();
    });
  }
  // Requests of remote APIServices go to their servers once authorized here.
  const proxy = aggregatorProxy(aggregator, identityHeaderNames(flagList));
  app.addHook('onRequest', (request, reply, done) => {
    let proxied: boolean;
    try {
      proxied = proxy(request, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    // A proxied request is answered by the proxy: the hook chain ends here.
    if (!proxied) done();
  });
  // nodes/proxy, pods/proxy and services/proxy: also answered here, once authorized.
  const kubeletClient = kubeletClientOptions(options.flags);
  const proxySubresource = proxySubresources(() => layer.ctx, kubeletClient);
  app.addHook('onRequest', (request, reply, done) => {
    if (!proxySubresource(request, reply)) done();
  });
  // metrics.k8s.io from the agents' resource metrics (unless an APIService serves it).
  const metricsApi = serverMetricsApi(
    () => layer.ctx,
    kubeletClient,
    aggregator,
    (m) => deps.log.warn(m),
  );
  app.addHook('onRequest', (request, reply, done) => {
    if (!metricsApi.step(request, reply)) done();
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
  servingTls.watch(app.server as unknown as import('node:tls').Server, CERT_RELOAD_INTERVAL_MS, (err) =>
    deps.log.error('reloading TLS files failed; the previous certificates stay in use', err),
  );
  const runtime = processMetrics(metrics);
  if (webhooksEnabled) {
    app.addHook('onReady', (done) => {
      webhooks.start();
      done();
    });
  }
  if (admission.chain.plugins.includes(policies.plugin)) {
    app.addHook('onReady', (done) => {
      policies.start();
      done();
    });
  }
  app.addHook('onClose', (_instance, done) => {
    webhooks.stop();
    policies.stop();
    authz.stop();
    servingTls.stop();
    runtime.stop();
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    deps.connections.onRequest(request, reply);
    done();
  });
  const limits = connectionLimits({
    goawayChance: options.flags.get('goaway-chance') as number,
    maxConnectionBytesPerSec: options.flags.get('max-connection-bytes-per-sec') as number,
  });
  if (limits !== undefined) {
    app.addHook('onRequest', (request, reply, done) => {
      limits(request, reply);
      done();
    });
  }

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
      livezGraceMs: options.flags.get('livez-grace-period') as number,
    }),
    healthLog,
  );
  installVersionRoute(app, deps.version);
  installMetricsRoute(app, metrics);
  if (options.flags.get('profiling') !== false) registerProfilingRoutes(app);
  installDiscoveryRoutes(app, registry, {
    serverAddress: deps.serverAddress,
    remote: metricsApi.discovery(remoteDiscovery(aggregator)),
  });
  registerOpenApiRoutes(app, { registry: deps.registry, schemas, custom: published });
  serviceAccounts?.installRoutes(app);
  const endpoints = new Map([...authn.endpoints, ...(serviceAccounts?.endpoints ?? []), ...authz.endpoints]);
  endpoints.set('certificates.k8s.io/certificatesigningrequests/approval', approvalEndpoint(authz.chain));
  endpoints.set('/pods/eviction', evictionEndpoint());
  for (const [path, endpoint] of bindingEndpoints()) endpoints.set(path, endpoint);
  endpoints.set(
    '/componentstatuses',
    componentStatusEndpoint({
      etcdServers: options.etcdServers,
      etcdTls: { caFile: options.etcdCaFile, certFile: options.etcdCertFile, keyFile: options.etcdKeyFile },
      inProcess: deps.inProcess ?? { controllerManager: false, scheduler: false },
    }),
  );
  endpoints.set('/pods/log', podLogEndpoint(kubeletClient));
  const streamMetrics = podStreamMetrics(metrics);
  for (const kind of ['exec', 'attach', 'portforward'] as const) {
    endpoints.set(
      `/pods/${kind}`,
      podStreamEndpoint(kind, kubeletClient, () => authz.chain, streamMetrics),
    );
  }
  // exec, attach and port-forward arrive as HTTP/1.1 upgrades.
  installUpgrades(app);
  mountResources(app, { ...resourceDeps, endpoints }, layer);
  // After the resource layer's start hook, whose service IP repair reads the store while idle.
  app.addHook('onReady', (done) => {
    // Not awaited: readyz reports the hook until the bootstrap policy is in place.
    void authz.start(() => deps.lifecycle.completeHook(RBAC_BOOTSTRAP_HOOK));
    done();
  });
  serviceAccounts?.attach(layer.ctx);
  return app;
}
