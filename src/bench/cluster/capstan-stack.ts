/**
 * Capstan's whole stack for the cluster bench: one `capstan server` (embedded store, its
 * in-process controllers and scheduler, as `bash tools/run.sh` runs it) and, once asked, one
 * `capstan agent --simulate --nodes=N` process with unlimited client QPS (as kwok's client).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { packageVersion } from '../../server/package-version.js';
import { BenchClient } from '../client.js';
import { capstanEntry } from '../scheduler/process.js';
import { spawnServer } from '../server-process.js';
import { Children } from './children.js';
import type { Stack } from './stack.js';

/** The label every simulated Node carries. */
const SIMULATED = 'node.capstan.dev/simulated=true';

/** Options of {@link startCapstanStack}. */
export interface CapstanStackOptions {
  /** More `capstan server` flags (`--server-arg`). */
  readonly serverArgs: readonly string[];
  readonly progress: (line: string) => void;
}

/**
 * Starts `capstan server` on a fresh temporary data dir and resolves once it answers.
 * @throws BenchError BENCH_SERVER_START when it does not come up (nothing is left running).
 */
export async function startCapstanStack(options: CapstanStackOptions): Promise<Stack> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-cluster-'));
  const children = new Children();
  children.addCleanup(() => rm(dir, { recursive: true, force: true }));
  let client: BenchClient | undefined;
  const stop = async (): Promise<void> => {
    client?.close();
    await children.stopAll();
  };
  try {
    options.progress(`capstan: starting capstan server ${options.serverArgs.join(' ')}`.trim());
    const server = await spawnServer({
      dataDir: join(dir, 'data'),
      extraArgs: options.serverArgs,
      main: capstanEntry(),
    });
    children.adopt('capstan server', server.pid, new Promise(() => undefined), () => server.stop());
    const kubeconfig = server.kubeconfigPath;
    client = new BenchClient(readKubeconfigCredentials(kubeconfig), 2);
    let agentPid: number | undefined;
    let lostWhy: ((why: string) => void) | undefined;
    const lost = new Promise<never>((_, reject) => (lostWhy = (why) => reject(new Error(why))));
    lost.catch(() => undefined);
    const args = options.serverArgs.length === 0 ? '' : ` ${options.serverArgs.join(' ')}`;
    let stopped = false;
    return {
      label: `capstan v${packageVersion()} (server + agent --simulate)`,
      target: `capstan server${args} (embedded store, in-process controllers and scheduler) + capstan agent --simulate --kube-api-qps=-1`,
      kubeconfig,
      client,
      children,
      nodeSelector: SIMULATED,
      lost,
      nodesPid: () => agentPid,
      startNodes: (n) => {
        const agent = children.spawn('capstan agent', process.execPath, [
          capstanEntry(),
          'agent',
          '--simulate',
          `--kubeconfig=${kubeconfig}`,
          `--nodes=${n}`,
          '--kube-api-qps=-1',
        ]);
        agentPid = agent.pid;
        void agent.exited.then((why) => {
          if (!stopped) lostWhy?.(why);
        });
        return Promise.resolve();
      },
      stop: () => {
        stopped = true;
        return stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
