/**
 * A controller manager that loses its Lease (another holder took it, as after a partition or a
 * renewal stalled under load) stops its controllers and campaigns again: once the other holder's
 * lease has expired it leads again. Before, it stayed `waiting` for good, so a single-node cluster
 * whose manager once missed its renew deadline ran no controller from then on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import { loadKubeconfig } from '../../src/client/index.js';
import { parseControllerManagerArgs } from '../../src/controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../../src/controller-manager/manager.js';
import { startControllerEnv, waitFor, type ControllerEnv } from './support.js';

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';
let env: ControllerEnv;
let manager: RunningManager | undefined;
const logs: string[] = [];

beforeAll(async () => {
  env = await startControllerEnv([], 'lease-lost', undefined, ['--controllers=']);
});
afterAll(async () => {
  await manager?.stop();
  await env?.close();
});

describe('controller manager leadership', () => {
  it('campaigns again after its Lease was taken, and leads once that holder is gone', async () => {
    const parsed = parseControllerManagerArgs([
      `--kubeconfig=${env.server.kubeconfigPath}`,
      '--secure-port=0',
      '--leader-elect-lease-duration=3s',
      '--leader-elect-renew-deadline=2s',
      '--leader-elect-retry-period=250ms',
      '--controllers=ttl-after-finished-controller',
    ]);
    if (parsed.help) throw new Error('unexpected --help');
    const m = startControllerManager({
      clientConfig: loadKubeconfig(parsed.options.kubeconfig),
      options: parsed.options,
      log: { info: (l) => logs.push(l), warn: (l) => logs.push(l), error: (l) => logs.push(l) },
    });
    manager = m;
    await waitFor('the manager leading', async () => (m.state() === 'running' ? true : undefined));
    const held = (await env.get<Lease>(LEASE)).json;
    const ours = held.spec?.holderIdentity;
    expect(ours).toMatch(/_/);

    // Another holder takes the Lease; our renewals now fail until the renew deadline passes.
    const taken = await env.send('PUT', LEASE, {
      ...held,
      spec: {
        ...held.spec,
        holderIdentity: 'another-manager',
        leaseDurationSeconds: 6,
        acquireTime: new Date().toISOString().replace(/\.\d+Z$/, '.000000Z'),
        renewTime: new Date().toISOString().replace(/\.\d+Z$/, '.000000Z'),
      },
    });
    expect(taken.status).toBe(200);
    await waitFor('the manager to stop leading', async () => (m.state() === 'waiting' ? true : undefined));
    expect(logs.some((l) => l.includes('lost lease kube-system/kube-controller-manager'))).toBe(true);

    // The other holder never renews: after its lease duration the manager takes it back.
    await waitFor(
      'the manager leading again',
      async () => (m.state() === 'running' ? true : undefined),
      30_000,
    );
    const again = (await env.get<Lease>(LEASE)).json;
    expect(again.spec?.holderIdentity).toBe(ours);
    expect(logs.filter((l) => l.includes('acquired lease')).length).toBe(2);
  }, 60_000);
});
