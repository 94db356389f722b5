/**
 * A resource-API server for the resource tests: fastify with the Status error handler and the
 * resource routes over a fresh in-memory store, the registry of the built-in kinds, and the
 * controllers. `inject` for handler tests, `listen` for real clients.
 *
 * The foundation's `test/support/server.ts` harness starts the whole `capstan server` (TLS,
 * HTTP/2, authentication); resources-clients.test.ts uses it for stock clients. The handler
 * tests only need the resource layer, over plain HTTP.
 */
import fastify, {
  type FastifyInstance,
  type HTTPMethods,
  type InjectOptions,
  type LightMyRequestResponse,
} from 'fastify';
import type { Store } from '../../storage/interface.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { mountResources, type ResourceDeps } from '../../src/server/resources.js';
import { loadRegistry } from '../../src/registry/registry.js';

/** Metadata of an object or a list, as these tests read it. */
export interface KMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  continue?: string;
  remainingItemCount?: number;
}

/** A container of a pod template, as these tests read it. */
export interface KContainer {
  name: string;
  image?: string;
  env?: { name: string; value?: string }[];
  ports?: { containerPort: number }[];
}

/**
 * A JSON response as these tests read it: an object, a list, a Status, a watch event or a Scale.
 * Only the fields the tests look at are typed; everything is optional.
 */
export interface KObj {
  kind?: string;
  apiVersion?: string;
  metadata: KMeta;
  items?: KObj[];
  data?: Record<string, string>;
  spec?: {
    replicas?: number;
    finalizers?: string[];
    containers?: KContainer[];
    template?: { spec?: { containers?: KContainer[] } };
  };
  /** A resource's status, or a Status's `Success`/`Failure`. */
  status?: Record<string, unknown> | string;
  reason?: string;
  message?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    group?: string;
    uid?: string;
    causes?: { reason?: string; field?: string; message?: string }[];
  };
  /** Watch events. */
  type?: string;
  object?: KObj;
}

export interface ResourceApp {
  readonly app: FastifyInstance;
  readonly store: Store;
  /** `app.inject` returning the parsed JSON body too. */
  request(options: InjectOptions): Promise<Omit<LightMyRequestResponse, 'json'> & { json(): KObj }>;
  /** Listens on a random loopback port; returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** @param overrides resource deps to replace (a shared `store`, a short event TTL, ...). */
export async function startResourceApp(overrides: Partial<ResourceDeps> = {}): Promise<ResourceApp> {
  const store = overrides.store ?? (await openMemoryStore());
  const registry = loadRegistry();
  // Test clients may keep idle keep-alive sockets; closing must not wait for them.
  const app = fastify({ logger: false, forceCloseConnections: true });
  installErrorHandler(app);
  // The work a server does once listening (the system namespaces): run after ready, as the
  // server's start does before it resolves.
  const listening: ((port: number) => Promise<void>)[] = [];
  mountResources(app, {
    registry,
    store,
    eventTtlSeconds: 3600,
    minRequestTimeoutSeconds: 1800,
    onListening: (task) => listening.push(task),
    ...overrides,
  });
  await app.ready();
  for (const task of listening) await task(0);
  return {
    app,
    store,
    async request(options) {
      const response = await app.inject(options);
      return Object.assign(response, { json: () => JSON.parse(response.body) as KObj });
    },
    async listen() {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const bound = app.server.address();
      if (bound === null || typeof bound === 'string') throw new Error('no TCP address');
      return `http://127.0.0.1:${bound.port}`;
    },
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/** A JSON request body with its content type. */
export function json(
  method: HTTPMethods,
  url: string,
  body?: unknown,
  contentType = 'application/json',
): InjectOptions {
  return body === undefined
    ? { method, url }
    : {
        method,
        url,
        headers: { 'content-type': contentType },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      };
}

/** A minimal valid apps/v1 Deployment. */
export function deployment(name: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    },
  };
}
