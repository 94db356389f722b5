/**
 * The persistentvolume-expander beside the binder, clients of a bare RBAC server acting as their
 * own service accounts: a bound claim grown through a class that allows expansion gets kube's
 * `ExternalExpanding` event (no expansion happens: there is no in-tree expander); a volume of a
 * type kube migrates to CSI names its CSI driver in the claim's resizer annotation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim } from '../../src/api/types/core-v1.js';
import type { StorageClass } from '../../src/api/types/storage-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import {
  EVENTS,
  NAMESPACES,
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  STORAGE_CLASSES,
  type ResourceClient,
} from '../../src/client/index.js';
import { persistentVolumeBinderController } from '../../src/controllers/persistentvolume/index.js';
import { persistentVolumeExpanderController } from '../../src/controllers/persistentvolume-expander/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'grow';
let env: InfraEnv;
let pvs: ResourceClient<PersistentVolume>;
let pvcs: ResourceClient<PersistentVolumeClaim>;

beforeAll(async () => {
  env = await startInfraEnv(
    [persistentVolumeBinderController, persistentVolumeExpanderController],
    [
      '--controllers=persistentvolume-binder,persistentvolume-expander',
      '--use-service-account-credentials',
      '--pvclaimbinder-sync-period=1s',
    ],
    ['--controllers=', '--authorization-mode=Node,RBAC'],
  );
  pvs = env.client.resource<PersistentVolume>(PERSISTENT_VOLUMES);
  pvcs = env.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
  await env.client.resource<StorageClass>(STORAGE_CLASSES).create({
    metadata: { name: 'growable' },
    provisioner: 'kubernetes.io/no-provisioner',
    allowVolumeExpansion: true,
  });
}, 60_000);
afterAll(async () => env?.close());

async function boundClaim(name: string, source: Partial<PersistentVolume['spec']>): Promise<void> {
  await pvs.create({
    metadata: { name: `${name}-pv` },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'growable',
      ...source,
    },
  });
  await pvcs.create({
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: 'growable',
      volumeName: `${name}-pv`,
    },
  });
  await until(`${name} Bound`, async () => {
    const c = await pvcs.get(name, { namespace: NS });
    return c.status?.phase === 'Bound' && c.status.capacity?.['storage'] === '1Gi' ? c : undefined;
  });
}

async function grow(name: string, size: string): Promise<void> {
  await pvcs.patch(
    name,
    { spec: { resources: { requests: { storage: size } } } },
    { namespace: NS, type: 'merge' },
  );
}

async function expanding(name: string): Promise<Event[]> {
  const list = await env.client.resource<Event>(EVENTS).list({ namespace: NS });
  return list.items.filter((e) => e.regarding?.name === name && e.reason === 'ExternalExpanding');
}

describe('persistentvolume-expander', () => {
  it('says an external controller must expand a grown claim, and nothing for an unchanged one', async () => {
    await boundClaim('plain', { hostPath: { path: '/tmp/grow-plain' } });
    expect(await expanding('plain')).toEqual([]);
    await grow('plain', '2Gi');
    const [e] = await until('the ExternalExpanding event', async () => {
      const found = await expanding('plain');
      return found.length > 0 ? found : undefined;
    });
    expect(e?.type).toBe('Normal');
    expect(e?.note).toBe('waiting for an external controller to expand this PVC');
    expect(e?.reportingController).toBe('volume_expand');
    const c = await pvcs.get('plain', { namespace: NS });
    expect(c.status?.capacity?.['storage']).toBe('1Gi');
    expect(c.metadata.annotations?.['volume.kubernetes.io/storage-resizer']).toBeUndefined();
  });

  it('hands a migrated in-tree volume to its CSI driver’s resizer', async () => {
    await boundClaim('ebs', { awsElasticBlockStore: { volumeID: 'vol-0123' } });
    await grow('ebs', '3Gi');
    const c = await until('the resizer annotation', async () => {
      const got = await pvcs.get('ebs', { namespace: NS });
      return got.metadata.annotations?.['volume.kubernetes.io/storage-resizer'] === 'ebs.csi.aws.com'
        ? got
        : undefined;
    });
    expect(c.status?.capacity?.['storage']).toBe('1Gi');
    const events = await until('the event', async () => {
      const found = await expanding('ebs');
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.note).toBe(
      'CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc',
    );
    expect(env.errors).toEqual([]);
  });
});
