/**
 * The environment of the infrastructure controllers' tests: a bare Capstan server (no
 * in-process controllers) and a controller manager started beside it with the flags a test
 * gives (short grace periods, CIDR flags) and only the controllers it names, acting as the
 * admin (the server may run some in-process ones too, such as its scheduler); a client of the server to play users and kubelets; kubectl 1.33; polling.
 */
import { getEventListeners } from 'node:events';
import { expect } from 'vitest';
import { Client, loadKubeconfig } from '../../src/client/index.js';
import type { ControllerDescriptor } from '../../src/controllers/context.js';
import { parseControllerManagerArgs } from '../../src/controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../../src/controller-manager/manager.js';
import { kubectlPath, runKubectl, startTestServer, type TestServer } from '../support/server.js';

/** A server, a manager running some controllers, and a client. */
export interface InfraEnv {
  readonly server: TestServer;
  readonly manager: RunningManager;
  readonly client: Client;
  /** Lines the manager logged as errors. */
  readonly errors: string[];
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** Starts the environment (kubectl 1.33 is required). */
export async function startInfraEnv(
  controllers: readonly ControllerDescriptor[],
  flags: readonly string[] = [],
  serverArgs: readonly string[] = [],
  serverControllers: readonly string[] = [],
): Promise<InfraEnv> {
  expect(kubectlPath('1.33'), 'kubectl 1.33 is required').toBeDefined();
  const server = await startTestServer({ args: serverArgs, controllers: serverControllers });
  const parsed = parseControllerManagerArgs(['--leader-elect=false', '--secure-port=0', ...flags]);
  if (parsed.help) throw new Error('unexpected --help');
  const config = loadKubeconfig(server.kubeconfigPath);
  const errors: string[] = [];
  const manager = startControllerManager({
    clientConfig: config,
    options: { ...parsed.options, qps: -1, burst: 0 },
    controllers,
    log: {
      info: () => undefined,
      warn: () => undefined,
      error: (line, err) => errors.push(`${line}: ${err instanceof Error ? err.message : String(err)}`),
    },
  });
  const client = new Client({ ...config, qps: -1 });
  return {
    server,
    manager,
    client,
    errors,
    kubectl: (...args) => runKubectl('1.33', args, server.kubeconfigPath, 60_000),
    close: async () => {
      await manager.stop();
      await client.close();
      await server.close();
    },
  };
}

/** Polls `fn` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 20_000,
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
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** kube's RFC 3339 seconds. */
export function rfc3339(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** A controller that also hands its stop signal to the test, to look at the signal's listeners. */
export function watchingSignal(descriptor: ControllerDescriptor): {
  readonly descriptor: ControllerDescriptor;
  signal(): AbortSignal;
} {
  let seen: AbortSignal | undefined;
  return {
    descriptor: {
      ...descriptor,
      start(ctx) {
        seen = ctx.signal;
        return descriptor.start(ctx);
      },
    },
    signal() {
      expect(seen, `${descriptor.name} was started`).toBeDefined();
      return seen as AbortSignal;
    },
  };
}

/** How many abort listeners `signal` gained over `ms`: a loop that leaves one per turn shows. */
export async function abortListenerGrowth(signal: AbortSignal, ms: number): Promise<number> {
  const before = getEventListeners(signal, 'abort').length;
  await new Promise((r) => setTimeout(r, ms));
  return getEventListeners(signal, 'abort').length - before;
}
