/**
 * The crud scenario's CPU per operation: of the one server it measures, or, for a control plane
 * the bench started (`--ha-compare`), of its servers together and of its etcd members; and the
 * load generator's own. The in-process test server runs in this process, so the test names this
 * process as both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchClient } from '../../src/bench/client.js';
import type { ScenarioContext } from '../../src/bench/context.js';
import { JSON_TYPE } from '../../src/bench/objects.js';
import { PRESETS } from '../../src/bench/options.js';
import type { Row } from '../../src/bench/report.js';
import { crudScenario } from '../../src/bench/scenarios/crud.js';
import { readKubeconfigCredentials } from '../../src/pki/kubeconfig-credentials.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: BenchClient;

beforeAll(async () => {
  server = await startTestServer();
  client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath));
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

function context(pids: Pick<ScenarioContext, 'serverPid' | 'planePids'>): ScenarioContext {
  const sizes = PRESETS['quick'];
  if (sizes === undefined) throw new Error('no quick preset');
  return {
    subject: 'test',
    client,
    creds: [],
    ...pids,
    sizes: { ...sizes, clients: [2], durationMs: 150 },
    contentType: JSON_TYPE,
    verbs: new Set(['create', 'update']),
    baselines: {},
    serverArgs: undefined,
    restart: undefined,
    progress: () => undefined,
  };
}

const figures = (rows: Row[], scenario: string): Record<string, number> =>
  rows.find((r) => r.scenario === scenario)?.figures ?? {};

describe('crud CPU per operation', () => {
  it("gives a control plane's servers' and etcd members' CPU per operation", async () => {
    const rows = await crudScenario(
      context({ serverPid: undefined, planePids: { servers: [process.pid], store: [process.pid] } }),
    );
    for (const verb of ['create', 'update']) {
      const f = figures(rows, verb);
      expect(f['ops/s']).toBeGreaterThan(0);
      expect(f['server CPU µs/op']).toBeGreaterThan(0);
      expect(f['etcd CPU µs/op']).toBeGreaterThan(0);
      expect(f['bench CPU µs/op']).toBeGreaterThan(0);
    }
  });

  it('gives one server CPU and no etcd figure for a single server', async () => {
    const rows = await crudScenario(context({ serverPid: process.pid, planePids: undefined }));
    const f = figures(rows, 'create');
    expect(f['server CPU µs/op']).toBeGreaterThan(0);
    expect(f['etcd CPU µs/op']).toBeUndefined();
  });

  it('gives no CPU figure when no process is known, or one cannot be read', async () => {
    const none = await crudScenario(context({ serverPid: undefined, planePids: undefined }));
    expect(figures(none, 'create')['server CPU µs/op']).toBeUndefined();
    const gone = await crudScenario(
      context({ serverPid: undefined, planePids: { servers: [process.pid, 2 ** 22 + 1], store: [] } }),
    );
    expect(figures(gone, 'create')['server CPU µs/op']).toBeUndefined();
    expect(figures(gone, 'create')['ops/s']).toBeGreaterThan(0);
    // The load generator's own CPU is this process's, known whatever the server is.
    expect(figures(none, 'create')['bench CPU µs/op']).toBeGreaterThan(0);
    expect(figures(gone, 'create')['bench CPU µs/op']).toBeGreaterThan(0);
  });
});
