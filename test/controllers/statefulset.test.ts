/**
 * The statefulset controller on a real server with the fake kubelet: `kubectl rollout status`
 * (1.33) on an OrderedReady set with volumeClaimTemplates and `ordinals.start`, stable names,
 * labels and claims; a template change rolled out with a partition (a pod below it recreated at the
 * current revision's template) then completed; scale-down
 * from the highest ordinal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerRevision, StatefulSet } from '../../src/api/types/apps-v1.js';
import type { PersistentVolumeClaim, Pod } from '../../src/api/types/core-v1.js';
import {
  CONTROLLER_REVISIONS,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STATEFUL_SETS,
} from '../../src/client/index.js';
import { statefulSetController } from '../../src/controllers/statefulset/index.js';
import { kubectlOutput } from '../support/server.js';
import { eventually, startWorkloadCluster, type WorkloadCluster } from '../support/workload-cluster.js';

let c: WorkloadCluster;

beforeAll(async () => {
  c = await startWorkloadCluster([statefulSetController]);
});

afterAll(async () => {
  await c?.close();
});

async function podsOf(app: string): Promise<Pod[]> {
  const list = await c.client.resource<Pod>(PODS).list({ namespace: 'default', labelSelector: `app=${app}` });
  return (list.items ?? []).filter((p) => p.metadata.deletionTimestamp === undefined);
}

async function rollout(name: string): Promise<string> {
  return kubectlOutput(
    '1.33',
    ['rollout', 'status', `statefulset/${name}`, '--timeout=60s'],
    c.server.kubeconfigPath,
    90_000,
  );
}

describe('statefulset controller', () => {
  it('creates ordered pods with stable identity and claims; kubectl rollout status succeeds', async () => {
    await c.client.resource<StatefulSet>(STATEFUL_SETS).create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        serviceName: 'web',
        replicas: 3,
        ordinals: { start: 1 },
        selector: { matchLabels: { app: 'web' } },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1' }] },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    });
    const out = await rollout('web');
    expect(out).toContain('partitioned roll out complete: 3 new pods have been updated');
    const pods = await podsOf('web');
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(['web-1', 'web-2', 'web-3']);
    const set = await c.client.resource<StatefulSet>(STATEFUL_SETS).get('web', { namespace: 'default' });
    const rev = set.status?.updateRevision ?? '';
    expect(rev).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(set.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: rev,
      collisionCount: 0,
    });
    const p2 = pods.find((p) => p.metadata.name === 'web-2');
    expect(p2?.metadata.labels).toMatchObject({
      'statefulset.kubernetes.io/pod-name': 'web-2',
      'apps.kubernetes.io/pod-index': '2',
      'controller-revision-hash': rev,
    });
    expect(p2?.spec?.hostname).toBe('web-2');
    expect(p2?.spec?.subdomain).toBe('web');
    expect(p2?.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName).toBe(
      'data-web-2',
    );
    expect(p2?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'StatefulSet',
      name: 'web',
      controller: true,
      blockOwnerDeletion: true,
    });
    const claim = await c.client
      .resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS)
      .get('data-web-2', { namespace: 'default' });
    expect(claim.metadata.labels).toMatchObject({ app: 'web' });
    expect(claim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', name: 'web' });
    const revs = await c.client
      .resource<ControllerRevision>(CONTROLLER_REVISIONS)
      .list({ namespace: 'default' });
    expect((revs.items ?? []).map((r) => r.metadata.name)).toContain(rev);
  });

  it('rolls a template change out behind a partition, then everywhere', async () => {
    const before = await c.client.resource<StatefulSet>(STATEFUL_SETS).get('web', { namespace: 'default' });
    const oldRev = before.status?.updateRevision;
    await c.client.resource<StatefulSet>(STATEFUL_SETS).patch(
      'web',
      {
        spec: {
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
          template: { spec: { containers: [{ name: 'nginx', image: 'nginx:2' }] } },
        },
      },
      { namespace: 'default', type: 'strategic' },
    );
    const partial = await rollout('web');
    // The partition counts from ordinals.start (kube: replicas[partition:] are updated): only web-3.
    expect(partial).toContain('partitioned roll out complete: 1 new pods have been updated');
    const set = await c.client.resource<StatefulSet>(STATEFUL_SETS).get('web', { namespace: 'default' });
    const newRev = set.status?.updateRevision ?? '';
    expect(newRev).not.toBe(oldRev);
    const byName = new Map(
      (await podsOf('web')).map((p) => [p.metadata.name, p.metadata.labels?.['controller-revision-hash']]),
    );
    expect(byName.get('web-1')).toBe(oldRev);
    expect(byName.get('web-2')).toBe(oldRev);
    expect(byName.get('web-3')).toBe(newRev);
    // A pod below the partition comes back at the current revision's template, not the set's.
    const image = (p: Pod | undefined): string | undefined => p?.spec?.containers?.[0]?.image;
    const oldImage = image((await podsOf('web')).find((p) => p.metadata.name === 'web-1'));
    expect(oldImage).not.toBe('nginx:2');
    const uid = (await podsOf('web')).find((p) => p.metadata.name === 'web-1')?.metadata.uid;
    await c.client.resource<Pod>(PODS).delete('web-1', { namespace: 'default', gracePeriodSeconds: 0 });
    const back = await eventually('web-1 recreated', async () => {
      const p = (await podsOf('web')).find((x) => x.metadata.name === 'web-1');
      return p !== undefined && p.metadata.uid !== uid ? p : undefined;
    });
    expect(back.metadata.labels?.['controller-revision-hash']).toBe(oldRev);
    expect(image(back)).toBe(oldImage);
    await rollout('web');
    await c.client
      .resource<StatefulSet>(STATEFUL_SETS)
      .patch(
        'web',
        { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } },
        { namespace: 'default', type: 'strategic' },
      );
    await rollout('web');
    const done = await eventually('currentRevision = updateRevision', async () => {
      const s = await c.client.resource<StatefulSet>(STATEFUL_SETS).get('web', { namespace: 'default' });
      return s.status?.currentRevision === newRev && s.status.updatedReplicas === 3 ? s : undefined;
    });
    expect(done.status?.currentReplicas).toBe(3);
  });

  it('scales down from the highest ordinal, keeping claims (whenScaled: Retain)', async () => {
    await c.client
      .resource<StatefulSet>(STATEFUL_SETS)
      .patch('web', { spec: { replicas: 1 } }, { namespace: 'default', type: 'merge' });
    await eventually('one pod left', async () => {
      const pods = await podsOf('web');
      return pods.length === 1 ? pods : undefined;
    });
    expect((await podsOf('web')).map((p) => p.metadata.name)).toEqual(['web-1']);
    const claims = await c.client
      .resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS)
      .list({ namespace: 'default' });
    expect((claims.items ?? []).map((x) => x.metadata.name).sort()).toEqual([
      'data-web-1',
      'data-web-2',
      'data-web-3',
    ]);
    expect(c.errors).toEqual([]);
  });
});
