/**
 * A controller manager that loses its Lease (another holder took it, as after a partition or a
 * renewal stalled under load) stops its controllers and campaigns again: once the other holder's
 * lease has expired it leads again. Before, it stayed `waiting` for good, so a single-node cluster
 * whose manager once missed its renew deadline ran no controller from then on.
 *
 * Its renewals also never wait behind its controllers' requests in the client-side rate limiter
 * (leader election has a client of its own, as in kube): a controller that queues far more
 * requests than `--kube-api-qps` allows within the renew deadline does not cost the lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import { loadKubeconfig } from '../../src/client/index.js';
import { parseControllerManagerArgs } from '../../src/controller-manager/options.js';
import { startControllerManager, type RunningManager } from '../../src/controller-manager/manager.js';
import type { ControllerDescriptor } from '../../src/controllers/context.js';
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

/** The manager's flags with short Lease timings (3 s lease, 2 s renew deadline), plus `extra`. */
function managerArgs(
  ...extra: string[]
): Extract<ReturnType<typeof parseControllerManagerArgs>, { help: false }> {
  const parsed = parseControllerManagerArgs([
    `--kubeconfig=${env.server.kubeconfigPath}`,
    '--secure-port=0',
    '--leader-elect-lease-duration=3s',
    '--leader-elect-renew-deadline=2s',
    '--leader-elect-retry-period=250ms',
    ...extra,
  ]);
  if (parsed.help) throw new Error('unexpected --help');
  return parsed;
}

describe('controller manager leadership', () => {
  it('campaigns again after its Lease was taken, and leads once that holder is gone', async () => {
    const parsed = managerArgs('--controllers=ttl-after-finished-controller');
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

  it("keeps its Lease while a controller's requests fill the client's rate limit", async () => {
    await manager?.stop();
    manager = undefined;
    // The first test's manager released nothing: wait for its lease to run out.
    await new Promise((r) => setTimeout(r, 3_500));
    const parsed = managerArgs('--kube-api-qps=4', '--kube-api-burst=1', '--controllers=flood');
    const ownLogs: string[] = [];
    let sent = 0;
    // 40 requests at 4 per second: 10 s of queue, five times the renew deadline.
    const flood: ControllerDescriptor = {
      name: 'flood',
      serviceAccount: 'flood',
      start: (ctx) => {
        for (let i = 0; i < 40; i++)
          void ctx.client
            .request({ method: 'GET', path: '/api/v1/namespaces/default' })
            .then(() => sent++)
            .catch(() => undefined);
      },
    };
    const m = startControllerManager({
      clientConfig: loadKubeconfig(parsed.options.kubeconfig),
      options: parsed.options,
      controllers: [flood],
      log: { info: (l) => ownLogs.push(l), warn: (l) => ownLogs.push(l), error: (l) => ownLogs.push(l) },
    });
    manager = m;
    await waitFor('the manager leading', async () => (m.state() === 'running' ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 5_000));
    // The flood is still queued (it takes 10 s) ...
    expect(sent).toBeLessThan(40);
    // ... and the lease was renewed through it all.
    expect(ownLogs.filter((l) => l.includes('lost lease'))).toEqual([]);
    expect(m.state()).toBe('running');
  }, 60_000);
});
