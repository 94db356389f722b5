/**
 * `capstan server` runs the scheduler in-process as system:kube-scheduler over loopback, with
 * leader election on kube-system/kube-scheduler; `--controllers` without it runs none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { Client, LEASES, loadKubeconfig, NODES, PODS } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { node, pod } from './harness.js';

describe('in-process scheduler', () => {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startTestServer({ controllers: ['scheduler'] });
    client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('binds pods as system:kube-scheduler, holding the kube-scheduler Lease', async () => {
    expect(server.server.scheduler).toBeDefined();
    const nodes = client.resource<Node>(NODES);
    const created = await nodes.create(node('n1'));
    await nodes.update({ ...created, spec: { ...created.spec, taints: [] } });
    await client.resource<Pod>(PODS).create(pod('in-proc', { cpu: '100m' }));
    const deadline = Date.now() + 30_000;
    let nodeName = '';
    while (nodeName === '' && Date.now() < deadline) {
      nodeName =
        (await client.resource<Pod>(PODS).get('in-proc', { namespace: 'default' })).spec?.nodeName ?? '';
      if (nodeName === '') await new Promise((r) => setTimeout(r, 200));
    }
    expect(nodeName).toBe('n1');
    const lease = await client.resource<Lease>(LEASES).get('kube-scheduler', { namespace: 'kube-system' });
    expect(lease.spec?.holderIdentity ?? '').not.toBe('');
  });

  it('campaigns again after losing the Lease, and schedules once it holds it again', async () => {
    const leases = client.resource<Lease>(LEASES);
    const ours = (await leases.get('kube-scheduler', { namespace: 'kube-system' })).spec?.holderIdentity;
    // Another holder renews the Lease for longer than the renew deadline (10 s): the scheduler
    // steps down. kube-scheduler would exit here for its supervisor; in the server it must not.
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      const l = await leases.get('kube-scheduler', { namespace: 'kube-system' });
      const now = new Date().toISOString().replace(/Z$/, '000Z');
      await leases
        .update({
          ...l,
          spec: { ...l.spec, holderIdentity: 'intruder', leaseDurationSeconds: 1, renewTime: now },
        })
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
    }
    await client.resource<Pod>(PODS).create(pod('after-loss', { cpu: '100m' }));
    const deadline = Date.now() + 30_000;
    let nodeName = '';
    while (nodeName === '' && Date.now() < deadline) {
      nodeName =
        (await client.resource<Pod>(PODS).get('after-loss', { namespace: 'default' })).spec?.nodeName ?? '';
      if (nodeName === '') await new Promise((r) => setTimeout(r, 200));
    }
    expect(nodeName).toBe('n1');
    const holder = (await leases.get('kube-scheduler', { namespace: 'kube-system' })).spec?.holderIdentity;
    expect(holder).toBe(ours);
  }, 60_000);
});
