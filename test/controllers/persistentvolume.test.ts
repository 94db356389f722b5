/**
 * The persistent volume controllers against a bare server (its scheduler in-process for the
 * WaitForFirstConsumer case) and a controller manager running only them: static binding by
 * class, size, access modes and selector; pre-binding by volumeName with kube's mismatch event;
 * Retain and Delete on release; the protection finalizers; and the local-path provisioner's
 * whole round trip (default class, scheduler's node choice, provisioning, bind, helper pod
 * removal). kubectl 1.33 shows the phases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from '../../src/api/types/core-v1.js';
import type { StorageClass } from '../../src/api/types/storage-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import {
  EVENTS,
  NAMESPACES,
  NODES,
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STORAGE_CLASSES,
  isNotFound,
  type ResourceClient,
} from '../../src/client/index.js';
import { persistentVolumeBinderController } from '../../src/controllers/persistentvolume/index.js';
import { pvProtectionController } from '../../src/controllers/pv-protection/index.js';
import { pvcProtectionController } from '../../src/controllers/pvc-protection/index.js';
import { localPathProvisionerController } from '../../src/controllers/local-path/index.js';
import { rfc3339, startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'vols';
let env: InfraEnv;
let pvs: ResourceClient<PersistentVolume>;
let pvcs: ResourceClient<PersistentVolumeClaim>;
let pods: ResourceClient<Pod>;

function volume(
  name: string,
  size: string,
  extra: Partial<PersistentVolume['spec']> = {},
  labels = {},
): PersistentVolume {
  return {
    metadata: { name, labels },
    spec: {
      capacity: { storage: size },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: `/tmp/${name}` },
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'manual',
      ...extra,
    },
  };
}

function claim(
  name: string,
  size: string,
  extra: Partial<PersistentVolumeClaim['spec']> = {},
): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      storageClassName: 'manual',
      ...extra,
    },
  };
}

async function claimPhase(name: string, phase: string): Promise<PersistentVolumeClaim | undefined> {
  const c = await pvcs.get(name, { namespace: NS });
  return c.status?.phase === phase ? c : undefined;
}

async function volumePhase(name: string, phase: string): Promise<PersistentVolume | undefined> {
  const v = await pvs.get(name);
  return v.status?.phase === phase ? v : undefined;
}

async function gone(get: () => Promise<unknown>): Promise<true | undefined> {
  try {
    await get();
    return undefined;
  } catch (err) {
    return isNotFound(err) ? true : undefined;
  }
}

async function eventFor(name: string, reason: string): Promise<Event | undefined> {
  const list = await env.client.resource<Event>(EVENTS).list({ namespace: NS });
  return list.items.find((e) => e.regarding?.name === name && e.reason === reason);
}

beforeAll(async () => {
  env = await startInfraEnv(
    [
      persistentVolumeBinderController,
      pvcProtectionController,
      pvProtectionController,
      localPathProvisionerController,
    ],
    ['--pvclaimbinder-sync-period=1s', '--controllers=*,local-path-provisioner'],
    [],
    ['scheduler'],
  );
  pvs = env.client.resource<PersistentVolume>(PERSISTENT_VOLUMES);
  pvcs = env.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
  pods = env.client.resource<Pod>(PODS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
}, 60_000);
afterAll(async () => env?.close());

describe('persistentvolume-binder', () => {
  it('binds a claim to the smallest volume that fits its size, modes and selector', async () => {
    await pvs.create(volume('small', '1Gi'));
    await pvs.create(volume('big', '5Gi'));
    await pvs.create(volume('huge', '10Gi'));
    await pvs.create(volume('rwx', '3Gi', { accessModes: ['ReadWriteMany'] }));
    await pvs.create(volume('labelled', '8Gi', {}, { tier: 'gold' }));
    await pvcs.create(claim('data', '2Gi'));
    const bound = await until('data Bound', () => claimPhase('data', 'Bound'));
    expect(bound.spec?.volumeName).toBe('big');
    expect(bound.status?.capacity?.['storage']).toBe('5Gi');
    expect(bound.status?.accessModes).toEqual(['ReadWriteOnce']);
    expect(bound.metadata.annotations?.['pv.kubernetes.io/bind-completed']).toBe('yes');
    expect(bound.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    const pv = await until('big Bound', () => volumePhase('big', 'Bound'));
    expect(pv.spec?.claimRef).toMatchObject({ namespace: NS, name: 'data', uid: bound.metadata.uid });
    expect(pv.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    expect(pv.status?.lastPhaseTransitionTime).toBeDefined();

    await pvcs.create(claim('gold', '1Gi', { selector: { matchLabels: { tier: 'gold' } } }));
    expect((await until('gold Bound', () => claimPhase('gold', 'Bound'))).spec?.volumeName).toBe('labelled');
    await pvcs.create(claim('shared', '1Gi', { accessModes: ['ReadWriteMany'] }));
    expect((await until('shared Bound', () => claimPhase('shared', 'Bound'))).spec?.volumeName).toBe('rwx');

    const out = await env.kubectl('get', 'pv,pvc', '-n', NS);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/persistentvolume\/big\s+5Gi\s+RWO\s+Retain\s+Bound\s+vols\/data\s+manual/);
    expect(out.stdout).toMatch(/persistentvolumeclaim\/data\s+Bound\s+big\s+5Gi\s+RWO\s+manual/);
    expect(out.stdout).toMatch(/persistentvolume\/small\s+1Gi\s+RWO\s+Retain\s+Available/);
  });

  it('leaves a claim nothing fits Pending, with kube event, and binds it when a volume appears', async () => {
    await pvcs.create(claim('later', '20Gi'));
    await until('later Pending', () => claimPhase('later', 'Pending'));
    await pvcs.create(claim('classless', '1Gi', { storageClassName: '' }));
    const ev = await until('FailedBinding event', () => eventFor('classless', 'FailedBinding'));
    expect(ev.note).toBe('no persistent volumes available for this claim and no storage class is set');
    await pvs.create(volume('twenty', '20Gi'));
    expect((await until('later Bound', () => claimPhase('later', 'Bound'))).spec?.volumeName).toBe('twenty');
  });

  it('binds a claim to the volume it names, and refuses one too small with VolumeMismatch', async () => {
    await pvs.create(volume('named', '2Gi'));
    await pvcs.create(claim('byname', '1Gi', { volumeName: 'named' }));
    const c = await until('byname Bound', () => claimPhase('byname', 'Bound'));
    // The user chose the volume: the claim is not marked bound by the controller.
    expect(c.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    await pvs.create(volume('tiny', '1Mi'));
    await pvcs.create(claim('toobig', '1Gi', { volumeName: 'tiny' }));
    const ev = await until('VolumeMismatch', () => eventFor('toobig', 'VolumeMismatch'));
    expect(ev.type).toBe('Warning');
    expect(ev.note).toBe('Cannot bind to requested volume "tiny": requested PV is too small');
    expect((await pvcs.get('toobig', { namespace: NS })).status?.phase).toBe('Pending');
    const described = await env.kubectl('describe', 'pvc', 'toobig', '-n', NS);
    expect(described.stdout).toContain('VolumeMismatch');
  });

  it('releases a Retain volume and fails a Delete volume no provisioner owns', async () => {
    await pvs.create(
      volume('gone-delete', '1Gi', { persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'del' }),
    );
    await pvcs.create(claim('to-delete', '1Gi', { storageClassName: 'del' }));
    await until('to-delete Bound', () => claimPhase('to-delete', 'Bound'));
    await pvcs.delete('to-delete', { namespace: NS });
    const failed = await until('gone-delete Failed', () => volumePhase('gone-delete', 'Failed'));
    expect(failed.status?.message).toContain('no deletable volume plugin matched');

    await pvcs.delete('gold', { namespace: NS });
    const released = await until('labelled Released', () => volumePhase('labelled', 'Released'));
    expect(released.spec?.claimRef?.name).toBe('gold');
  });
});

describe('protection controllers', () => {
  it('keeps a claim a running pod uses until the pod is gone, and a bound volume until released', async () => {
    await pvs.create(volume('kept', '1Gi', { storageClassName: 'keep' }));
    await pvcs.create(claim('kept', '1Gi', { storageClassName: 'keep' }));
    await until('kept Bound', () => claimPhase('kept', 'Bound'));
    await pods.create({
      metadata: { name: 'user', namespace: NS },
      spec: {
        nodeName: 'nowhere',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'kept' } }],
      },
    });
    await pvs.delete('kept');
    await pvcs.delete('kept', { namespace: NS });
    await new Promise((r) => setTimeout(r, 1500));
    const held = await pvcs.get('kept', { namespace: NS });
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toContain('kubernetes.io/pvc-protection');
    expect((await pvs.get('kept')).metadata.finalizers).toContain('kubernetes.io/pv-protection');
    await pods.delete('user', { namespace: NS, gracePeriodSeconds: 0 });
    await until('claim kept gone', () => gone(() => pvcs.get('kept', { namespace: NS })));
    await until('volume kept gone', () => gone(() => pvs.get('kept')));
  });
});

describe('local-path provisioner', () => {
  it('provisions on the scheduled node, binds, and removes the directory through a helper pod', async () => {
    const cls = await until('the local-path class', async () =>
      env.client.resource<StorageClass>(STORAGE_CLASSES).get('local-path'),
    );
    expect(cls.metadata.annotations?.['storageclass.kubernetes.io/is-default-class']).toBe('true');
    expect(cls.volumeBindingMode).toBe('WaitForFirstConsumer');

    const nodes = env.client.resource<Node>(NODES);
    const node = await nodes.create({ metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } });
    await nodes.updateStatus({
      ...node,
      status: {
        allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        conditions: [
          { type: 'Ready', status: 'True', lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339() },
        ],
      },
    });
    // No class named: the DefaultStorageClass admission plugin gives it local-path.
    const pvc = await pvcs.create({
      metadata: { name: 'local', namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '128Mi' } } },
    });
    expect(pvc.spec?.storageClassName).toBe('local-path');
    const waiting = await until('WaitForFirstConsumer', () => eventFor('local', 'WaitForFirstConsumer'));
    expect(waiting.note).toBe('waiting for first consumer to be created before binding');

    await pods.create({
      metadata: { name: 'consumer', namespace: NS },
      spec: {
        // The node admission gave it the not-ready taint; no node agent here lifts it.
        tolerations: [{ operator: 'Exists' }],
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'local' } }],
      },
    });
    const bound = await until('local Bound', () => claimPhase('local', 'Bound'), 30_000);
    expect(bound.metadata.annotations?.['volume.kubernetes.io/selected-node']).toBe('n1');
    expect(bound.metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe(
      'capstan.dev/local-path',
    );
    const name = `pvc-${pvc.metadata.uid ?? ''}`;
    expect(bound.spec?.volumeName).toBe(name);
    const pv = await pvs.get(name);
    expect(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by']).toBe('capstan.dev/local-path');
    expect(pv.spec?.hostPath).toEqual({
      path: `/var/lib/kubelet/local-path/${name}_${NS}_local`,
      type: 'DirectoryOrCreate',
    });
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
    ]);
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    await until('consumer scheduled', async () => {
      const p = await pods.get('consumer', { namespace: NS });
      return p.spec?.nodeName === 'n1' ? p : undefined;
    });
    expect(await eventFor('local', 'ProvisioningSucceeded')).toBeDefined();

    // Released: a helper pod on n1 removes the directory; the volume goes once it succeeded.
    await pods.delete('consumer', { namespace: NS, gracePeriodSeconds: 0 });
    await pvcs.delete('local', { namespace: NS });
    const helper = await until('the helper pod', async () =>
      pods.get(`helper-pod-delete-${name}`, { namespace: 'kube-system' }),
    );
    expect(helper.spec?.nodeName).toBe('n1');
    expect(helper.spec?.containers?.[0]?.command).toEqual(['rm', '-rf', `/data/${name}_${NS}_local`]);
    expect(helper.spec?.volumes?.[0]?.hostPath?.path).toBe('/var/lib/kubelet/local-path');
    expect((await pvs.get(name)).status?.phase).toBe('Released');
    await pods.updateStatus({ ...helper, status: { phase: 'Succeeded' } });
    await until('the volume gone', () => gone(() => pvs.get(name)));
    await until('the helper pod gone', () =>
      gone(() => pods.get(helper.metadata.name ?? '', { namespace: 'kube-system' })),
    );
  });
});

describe('no errors', () => {
  it('logged none', () => {
    expect(env.errors).toEqual([]);
  });
});
