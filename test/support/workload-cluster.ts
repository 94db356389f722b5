/**
 * A whole cluster for workload controller tests: an in-process Capstan server, the controller
 * manager running only the controllers a test gives (so a test can inject a clock), against the
 * server over HTTPS with the admin kubeconfig, and a {@link FakeKubelet} playing scheduler and
 * kubelets. Everything acts through the API, as in a real cluster.
 */
import { Client, loadKubeconfig, type ClientConfig } from '../../src/client/index.js';
import { defaultManagerOptions } from '../../src/controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../../src/controller-manager/manager.js';
import type { ControllerDescriptor } from '../../src/controllers/context.js';
import { FakeKubelet, type FakeKubeletOptions } from './pod-phases.js';
import { startTestServer, type TestServer } from './server.js';

/** A running test cluster. */
export interface WorkloadCluster {
  readonly server: TestServer;
  readonly client: Client;
  readonly kubelet: FakeKubelet;
  readonly manager: RunningManager;
  /** Error lines the controller manager logged. */
  readonly errors: string[];
  close(): Promise<void>;
}

/** Starts a server, the given controllers and the fake kubelet. Always `close()` it. */
export async function startWorkloadCluster(
  controllers: readonly ControllerDescriptor[],
  kubelet: FakeKubeletOptions = {},
): Promise<WorkloadCluster> {
  const server = await startTestServer();
  const config: ClientConfig = { ...loadKubeconfig(server.kubeconfigPath), qps: -1, burst: 0 };
  const errors: string[] = [];
  const defaults = defaultManagerOptions();
  const manager = startControllerManager({
    clientConfig: config,
    options: defaultManagerOptions({
      leaderElection: { ...defaults.leaderElection, enabled: false },
      useServiceAccountCredentials: false,
      qps: -1,
      burst: 0,
    }),
    controllers,
    log: {
      info: () => undefined,
      warn: (line) => errors.push(line),
      error: (line, err) => errors.push(`${line}: ${err instanceof Error ? err.message : String(err)}`),
    },
  });
  const client = new Client(config);
  const fake = new FakeKubelet(client, kubelet);
  await fake.start();
  return {
    server,
    client,
    kubelet: fake,
    manager,
    errors,
    close: async () => {
      await fake.stop();
      await manager.stop();
      await client.close();
      await server.close();
    },
  };
}

/** Polls `probe` every 100 ms until it returns a value other than undefined (at most `ms`). */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
