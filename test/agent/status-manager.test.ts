/**
 * The agent's status manager (src/agent/api/status-manager.ts) against a real server: a pod's
 * status is written by uid, so the final status of a deleted pod never lands on a new pod that
 * took its name (a StatefulSet's pod recreated at once): the server refuses the write, and the
 * manager lets the old pod go instead of retrying forever.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { StatusManager } from '../../src/agent/api/status-manager.js';
import { Client, PODS, loadKubeconfig } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  client = new Client(loadKubeconfig(server.kubeconfigPath));
});

afterAll(async () => {
  await server?.close();
});

const podBody = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName: 'nowhere', containers: [{ name: 'c', image: 'busybox' }] },
});

describe('the status manager', () => {
  it('never writes a deleted pod’s status onto the new pod of the same name', async () => {
    const pods = client.resource<Pod>(PODS);
    const old = await pods.create(podBody('same'), { namespace: 'default' });
    await pods.delete('same', { namespace: 'default', gracePeriodSeconds: 0 });
    const fresh = await pods.create(podBody('same'), { namespace: 'default' });
    expect(fresh.metadata.uid).not.toBe(old.metadata.uid);

    const manager = new StatusManager(client);
    try {
      manager.set(old, { phase: 'Failed', reason: 'Terminated' });
      // The final write is refused (another uid), and the old pod is let go at once.
      const started = Date.now();
      await manager.terminated(old);
      expect(Date.now() - started).toBeLessThan(5_000);
      const now = await pods.get('same', { namespace: 'default' });
      expect(now.metadata.uid).toBe(fresh.metadata.uid);
      expect(now.status?.phase).toBe('Pending');

      // The new pod's own status is written.
      manager.set(fresh, { phase: 'Running' });
      await expect
        .poll(async () => (await pods.get('same', { namespace: 'default' })).status?.phase, {
          timeout: 5_000,
        })
        .toBe('Running');
    } finally {
      manager.stop();
    }
  });

  it('waits for the write in flight to land, woken by it rather than by a polling timer', async () => {
    const pods = client.resource<Pod>(PODS);
    const pod = await pods.create(podBody('waited'), { namespace: 'default' });
    const manager = new StatusManager(client);
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      manager.set(pod, { phase: 'Succeeded', reason: 'Completed' });
      // The write is in flight: terminated() returns once it has landed.
      await manager.terminated(pod);
      const now = await pods.get('waited', { namespace: 'default' });
      expect(now.status?.phase).toBe('Succeeded');
      // Nothing in the wait set a short timer (a poll); the client's own timeouts are long.
      const short = timers.mock.calls.filter(([, ms]) => typeof ms === 'number' && ms < 1_000);
      expect(short).toEqual([]);
    } finally {
      timers.mockRestore();
      manager.stop();
    }
  });
});
