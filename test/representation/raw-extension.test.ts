/**
 * Embedded raw JSON (`runtime.RawExtension`) read back from protobuf storage as it was written:
 * a ControllerRevision's `data` keeps its nulls (kube-controller-manager's DaemonSet and
 * StatefulSet controllers compare it byte for byte with the template they hash, whose
 * `metadata.creationTimestamp` is `null`; without them kube's controllers took every revision for
 * a hash collision). The typed fields' nulls are still dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerRevision } from '../../src/api/types/apps-v1.js';
import { CONTROLLER_REVISIONS, Client, loadKubeconfig } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startTestServer({ args: ['--storage-media-type=application/vnd.kubernetes.protobuf'] });
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe('RawExtension in protobuf storage', () => {
  it('keeps a ControllerRevision’s data byte for byte, nulls included', async () => {
    const data = {
      spec: {
        template: {
          $patch: 'replace',
          metadata: { creationTimestamp: null, labels: { app: 'ds' } },
          spec: { containers: [{ image: 'i', name: 'c', resources: {} }], nodeName: null },
        },
      },
    };
    const revisions = client.resource<ControllerRevision>(CONTROLLER_REVISIONS);
    await revisions.create({ metadata: { name: 'r', namespace: 'default' }, revision: 1, data });
    const list = await revisions.list({ namespace: 'default' });
    const got = list.items.find((r) => r.metadata.name === 'r');
    expect(JSON.stringify(got?.data)).toBe(JSON.stringify(data));
    const one = await revisions.get('r', { namespace: 'default' });
    expect(JSON.stringify(one.data)).toBe(JSON.stringify(data));
    // A typed zero time is not shown as null.
    expect(Object.keys(one.metadata)).not.toContain('deletionTimestamp');
  });
});
