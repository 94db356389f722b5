/**
 * Shared pieces of the controller tests: a server with the controllers and a fake kubelet, raw
 * JSON access as the admin, kubectl 1.33, and polling until a condition holds.
 */
import { expect } from 'vitest';
import {
  adminJson,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type TestServer,
} from '../support/server.js';
import { startFakeKubelet, type FakeKubelet, type FakePod } from '../support/fake-kubelet.js';

/** A reply: the status and the body read as `T` (unchecked: tests assert what they read). */
export interface Reply<T> {
  readonly status: number;
  readonly json: T;
}

/** A JSON object not typed further. */
export type Json = Record<string, unknown>;

/** A server running `controllers`, a namespace, and a fake kubelet for it. */
export interface ControllerEnv {
  readonly server: TestServer;
  readonly ns: string;
  readonly kubelet: FakeKubelet;
  get<T = Json>(path: string): Promise<Reply<T>>;
  send<T = Json>(method: string, path: string, body?: unknown, contentType?: string): Promise<Reply<T>>;
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** Starts the environment (kubectl 1.33 is required); `serverArgs` are more server flags. */
export async function startControllerEnv(
  controllers: readonly string[],
  ns: string,
  ready?: (pod: FakePod) => boolean,
  serverArgs: readonly string[] = [],
): Promise<ControllerEnv> {
  expect(kubectlPath('1.33'), 'kubectl 1.33 is required').toBeDefined();
  // RBAC, as kube clusters run: the controllers must get by with kube's bootstrap roles.
  const server = await startTestServer({
    controllers,
    args: ['--authorization-mode=Node,RBAC', ...serverArgs],
  });
  const tls = adminTls(server.kubeconfigPath);
  const send = async <T = Json>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<Reply<T>> => {
    const r = await adminJson(
      `${server.url}${path}`,
      tls,
      method,
      body,
      contentType === undefined ? {} : { 'content-type': contentType },
    );
    return { status: r.status, json: r.json as T };
  };
  const created = await send('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(created.status).toBe(201);
  const kubelet = startFakeKubelet(server.kubeconfigPath, server.url, {
    namespaces: [ns],
    ...(ready === undefined ? {} : { ready }),
  });
  return {
    server,
    ns,
    kubelet,
    get: <T = Json>(path: string) => send<T>('GET', path),
    send,
    kubectl: (...args) => runKubectl('1.33', ['-n', ns, ...args], server.kubeconfigPath, 120_000),
    close: async () => {
      if (process.env['CAPSTAN_TEST_LOGS'] === '1') for (const l of server.logs) console.log(l);
      await kubelet.stop();
      await server.close();
    },
  };
}

/** Polls `fn` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Items of a list response. */
export function items<T = Json>(r: Reply<unknown>): T[] {
  return (r.json as { items?: T[] }).items ?? [];
}
