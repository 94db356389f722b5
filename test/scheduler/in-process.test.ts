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
});
