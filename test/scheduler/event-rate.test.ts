/**
 * The scheduler's events follow its client connection's QPS and burst, as kube-scheduler's event
 * clientset does: a backlog bound at a high QPS leaves a Scheduled event for every pod, none
 * dropped behind a fixed event rate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { Client, EVENTS, loadKubeconfig, PODS } from '../../src/client/index.js';
import { schedulerConfigFrom } from '../../src/scheduler/config.js';
import { startScheduler, type RunningScheduler } from '../../src/scheduler/run.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createReadyNode, node, pod } from './harness.js';

const NS = 'default';
const PODS_TO_BIND = 1500;

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('scheduler events at the configured client QPS', () => {
  let server: TestServer;
  let client: Client;
  let running: RunningScheduler | undefined;
  const abort = new AbortController();

  beforeAll(async () => {
    server = await startTestServer();
    client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
    for (let i = 0; i < 4; i++) {
      await createReadyNode(client, node(`n${i}`, { cpu: '64', memory: '256Gi', pods: '1000' }));
    }
  });
  afterAll(async () => {
    abort.abort();
    await running?.done;
    await client?.close();
    await server?.close();
  });

  it(`a backlog of ${PODS_TO_BIND} pods bound at 5000 QPS gets a Scheduled event each`, async () => {
    const pods = client.resource<Pod>(PODS);
    for (let i = 0; i < PODS_TO_BIND; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, PODS_TO_BIND - i) }, (_, j) =>
          pods.create(pod(`p${i + j}`, { cpu: '10m' })),
        ),
      );
    }
    // The QPS comes from the configuration file's clientConnection, not the client config.
    const { qps: _qps, burst: _burst, ...clientConfig } = loadKubeconfig(server.kubeconfigPath);
    running = startScheduler(
      clientConfig,
      {
        config: schedulerConfigFrom({
          apiVersion: 'kubescheduler.config.k8s.io/v1',
          kind: 'KubeSchedulerConfiguration',
          leaderElection: { leaderElect: false },
          clientConnection: { qps: 5000, burst: 5000 },
        }),
        log: () => undefined,
      },
      abort.signal,
    );
    const bound = async (): Promise<number> =>
      (await pods.list({ namespace: NS })).items.filter((p) => (p.spec?.nodeName ?? '') !== '').length;
    await waitFor('every pod bound', async () => (await bound()) === PODS_TO_BIND, 60_000);
    const scheduled = async (): Promise<Set<string>> =>
      new Set(
        (await client.resource<Event>(EVENTS).list({ namespace: NS })).items
          .filter((e) => e.reason === 'Scheduled')
          .map((e) => e.regarding?.name ?? ''),
      );
    // A fixed 50 events/s behind a 1000-event queue drops most of these; at the configured rate
    // every one is written shortly after its binding.
    await waitFor('a Scheduled event per pod', async () => (await scheduled()).size === PODS_TO_BIND, 30_000);
    expect((await scheduled()).size).toBe(PODS_TO_BIND);
  }, 150_000);
});
