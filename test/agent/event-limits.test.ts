/**
 * The agent's events are held to `--event-qps` / `--event-burst` (the spec's 5 and 10), as
 * kubelet's event client is: a burst goes out at once, the rest at the rate. Against a real
 * in-process server.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types/core-v1.js';
import { ApiEventRecorder } from '../../src/agent/api/event-recorder.js';
import { CORE_EVENTS, Client, NAMESPACES, loadKubeconfig } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
const NS = 'agent-event-limits';

beforeAll(async () => {
  server = await startTestServer({ args: ['--controllers='] });
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
  await client.resource(NAMESPACES).create({ metadata: { name: NS } });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function count(): Promise<number> {
  return (await client.resource<Event>(CORE_EVENTS).list({ namespace: NS })).items.length;
}

it('writes a burst, then the rest at --event-qps', async () => {
  const recorder = new ApiEventRecorder(client, 'node-1', { qps: 2, burst: 3 });
  const pod: Pod = { metadata: { name: 'p', namespace: NS, uid: 'u-1' } };
  const start = performance.now();
  for (let i = 0; i < 7; i++) recorder.event(pod, 'Normal', 'Pulled', `image ${i}`);
  await recorder.flush();
  // 3 at once, then 4 more at 2 per second: the last one no sooner than 2 s after the first.
  expect(performance.now() - start).toBeGreaterThanOrEqual(1_900);
  expect(await count()).toBe(7);
});

it('0 QPS means no limit, as kubelet has it', async () => {
  const recorder = new ApiEventRecorder(client, 'node-1', { qps: 0, burst: 1 });
  const pod: Pod = { metadata: { name: 'q', namespace: NS, uid: 'u-2' } };
  const before = await count();
  const start = performance.now();
  for (let i = 0; i < 10; i++) recorder.event(pod, 'Normal', 'Created', `container ${i}`);
  await recorder.flush();
  expect(await count()).toBe(before + 10);
  expect(performance.now() - start).toBeLessThan(1_900);
});
