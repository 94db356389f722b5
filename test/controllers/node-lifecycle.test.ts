/**
 * The node lifecycle controller against a real server, with a short grace period: the test
 * plays two kubelets (Ready status and `kube-node-lease` Leases), then lets one go silent. The
 * silent node turns Ready=Unknown with kube's reason and message, gets the unreachable
 * NoSchedule and NoExecute taints and a NodeNotReady event; its pods are marked not ready and
 * evicted as their tolerations say. The other node is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { EVENTS, LEASES, NAMESPACES, NODES, PODS, type ResourceClient } from '../../src/client/index.js';
import { nodeLifecycleController } from '../../src/controllers/node-lifecycle/index.js';
import {
  abortListenerGrowth,
  rfc3339,
  startInfraEnv,
  until,
  watchingSignal,
  type InfraEnv,
} from './infra-env.js';

const NS = 'nl';
let env: InfraEnv;
let nodes: ResourceClient<Node>;
let leases: ResourceClient<Lease>;
let pods: ResourceClient<Pod>;
let heartbeat: NodeJS.Timeout | undefined;
const controller = watchingSignal(nodeLifecycleController);

function microTime(): string {
  return new Date().toISOString().replace('Z', '000Z');
}

async function kubeletNode(name: string): Promise<void> {
  await nodes.create({ metadata: { name } });
  const now = rfc3339();
  // A patch of the status, as kubelet sends: the controller may write the node's taints meanwhile.
  await nodes.patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'MemoryPressure',
            status: 'False',
            reason: 'KubeletHasSufficientMemory',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
    { type: 'merge', subresource: 'status' },
  );
  await leases.create({
    metadata: { name, namespace: 'kube-node-lease' },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() },
  });
}

async function renew(name: string): Promise<void> {
  const lease = await leases.get(name, { namespace: 'kube-node-lease' });
  await leases.update({ ...lease, spec: { ...lease.spec, renewTime: microTime() } });
}

async function boundPod(
  name: string,
  node: string,
  tolerations: NonNullable<Pod['spec']>['tolerations'],
): Promise<void> {
  const pod = await pods.create({
    metadata: { name, namespace: NS },
    spec: {
      nodeName: node,
      containers: [{ name: 'c', image: 'nginx' }],
      ...(tolerations === undefined ? {} : { tolerations }),
    },
  });
  await pods.updateStatus({
    ...pod,
    status: {
      phase: 'Running',
      podIP: '10.9.0.1',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339() }],
    },
  });
}

beforeAll(async () => {
  env = await startInfraEnv(
    [controller.descriptor],
    ['--node-monitor-grace-period=2s', '--node-monitor-period=200ms', '--node-startup-grace-period=3s'],
  );
  nodes = env.client.resource<Node>(NODES);
  leases = env.client.resource<Lease>(LEASES);
  pods = env.client.resource<Pod>(PODS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
  await kubeletNode('alive');
  await kubeletNode('silent');
  heartbeat = setInterval(() => void renew('alive').catch(() => undefined), 300);
  const unreachable = 'node.kubernetes.io/unreachable';
  await boundPod('evict-now', 'silent', [
    { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
  ]);
  await boundPod('evict-later', 'silent', [
    { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 },
  ]);
  await boundPod('stays', 'silent', [{ key: unreachable, operator: 'Exists', effect: 'NoExecute' }]);
  await boundPod('defaults', 'silent', undefined); // the API server adds kube's 300 s tolerations
  await boundPod('elsewhere', 'alive', undefined);
}, 60_000);
afterAll(async () => {
  clearInterval(heartbeat);
  await env?.close();
});

describe('a node that stops renewing its Lease', () => {
  it('turns Ready=Unknown with kube reason and message after the grace period', async () => {
    const node = await until(
      'silent Ready=Unknown',
      async () => {
        const n = await nodes.get('silent');
        return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown' ? n : undefined;
      },
      20_000,
    );
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
    });
    const memory = node.status?.conditions?.find((c) => c.type === 'MemoryPressure');
    expect(memory).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    // Conditions the kubelet never posted are added as never updated.
    const disk = node.status?.conditions?.find((c) => c.type === 'DiskPressure');
    expect(disk).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
    });
  });

  it('gets the unreachable NoSchedule and NoExecute taints', async () => {
    const taints = await until('taints', async () => {
      const n = await nodes.get('silent');
      return (n.spec?.taints ?? []).length === 2 ? n.spec?.taints : undefined;
    });
    expect(taints).toContainEqual({ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' });
    const noExecute = taints?.find((t) => t.effect === 'NoExecute');
    expect(noExecute?.key).toBe('node.kubernetes.io/unreachable');
    expect(noExecute?.timeAdded).toMatch(/^\d{4}-\d\d-\d\dT/);
    const k = await env.kubectl('get', 'node', 'silent', '-o', 'jsonpath={.spec.taints[*].key}');
    expect(k.stdout).toContain('node.kubernetes.io/unreachable');
  });

  it('records NodeNotReady and marks the pods on it not ready', async () => {
    const stays = await until('stays not ready', async () => {
      const p = await pods.get('stays', { namespace: NS });
      return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False' ? p : undefined;
    });
    expect(stays.metadata.deletionTimestamp).toBeUndefined();
    await until('NodeNotReady event', async () => {
      const list = await env.client.resource<Event>(EVENTS).list({});
      return list.items.find((e) => e.reason === 'NodeNotReady' && e.regarding?.name === 'silent');
    });
  });

  it('evicts pods as their NoExecute tolerations say', async () => {
    const now = await until('evict-now deleted', async () => {
      const p = await pods.get('evict-now', { namespace: NS });
      return p.metadata.deletionTimestamp !== undefined ? p : undefined;
    });
    expect(now.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
    });
    await until('evict-later deleted', async () => {
      const p = await pods.get('evict-later', { namespace: NS });
      return p.metadata.deletionTimestamp !== undefined ? p : undefined;
    });
    // Tolerating forever, or for kube's default 300 s: still there, not deleting.
    for (const name of ['stays', 'defaults']) {
      const p = await pods.get(name, { namespace: NS });
      expect(p.metadata.deletionTimestamp, name).toBeUndefined();
    }
    const d = await pods.get('defaults', { namespace: NS });
    expect(
      d.spec?.tolerations?.find((t) => t.key === 'node.kubernetes.io/unreachable')?.tolerationSeconds,
    ).toBe(300);
  });

  it('leaves the node that keeps renewing alone', async () => {
    const alive = await nodes.get('alive');
    expect(alive.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(alive.spec?.taints ?? []).toEqual([]);
    const p = await pods.get('elsewhere', { namespace: NS });
    expect(p.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(p.metadata.deletionTimestamp).toBeUndefined();
  });

  it('comes back: a renewed Lease and Ready status lift the taints', async () => {
    const now = rfc3339();
    // A status patch, as kubelet sends (the controller writes the node's taints meanwhile).
    await nodes.patch(
      'silent',
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    await renew('silent');
    const back = setInterval(() => void renew('silent').catch(() => undefined), 300);
    try {
      await until('taints lifted', async () => {
        const n = await nodes.get('silent');
        return (n.spec?.taints ?? []).length === 0 ? n : undefined;
      });
    } finally {
      clearInterval(back);
    }
    expect(env.errors.join('\n')).toBe('');
  });
});

describe('the health pass loop', () => {
  it('leaves no abort listener behind from one pass to the next', async () => {
    // 2 s is ten passes at --node-monitor-period=200ms.
    expect(await abortListenerGrowth(controller.signal(), 2_000)).toBeLessThanOrEqual(2);
  });
});
