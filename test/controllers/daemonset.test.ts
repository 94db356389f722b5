/**
 * The daemonset controller on a real server with the fake kubelet: one pod per eligible node
 * (a NoSchedule-tainted node is skipped, the automatic tolerations admit a not-ready taint),
 * pods pinned by `metadata.name` node affinity, `kubectl rollout status` (1.33) for the first
 * rollout and a RollingUpdate of the template, a new node getting its pod.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonSet } from '../../src/api/types/apps-v1.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import { DAEMON_SETS, PODS } from '../../src/client/index.js';
import { daemonSetController } from '../../src/controllers/daemonset/index.js';
import { kubectlOutput } from '../support/server.js';
import { eventually, startWorkloadCluster, type WorkloadCluster } from '../support/workload-cluster.js';

let c: WorkloadCluster;

beforeAll(async () => {
  c = await startWorkloadCluster([daemonSetController], {
    nodes: ['node-a', 'node-b', 'node-c'],
    taints: {
      'node-b': [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }],
      'node-c': [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }],
    },
  });
});

afterAll(async () => {
  await c?.close();
});

async function podsOf(app: string): Promise<Pod[]> {
  const list = await c.client.resource<Pod>(PODS).list({ namespace: 'default', labelSelector: `app=${app}` });
  return (list.items ?? []).filter((p) => p.metadata.deletionTimestamp === undefined);
}

function nodeOf(p: Pod): string | undefined {
  return p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
    ?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0];
}

async function rollout(): Promise<string> {
  return kubectlOutput(
    '1.33',
    ['rollout', 'status', 'daemonset/agent', '--timeout=60s'],
    c.server.kubeconfigPath,
    90_000,
  );
}

describe('daemonset controller', () => {
  it('runs one pod per eligible node; kubectl rollout status succeeds', async () => {
    await c.client.resource<DaemonSet>(DAEMON_SETS).create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { hostNetwork: true, containers: [{ name: 'a', image: 'agent:1' }] },
        },
      },
    });
    const out = await rollout();
    expect(out).toContain('daemon set "agent" successfully rolled out');
    const pods = await podsOf('agent');
    expect(pods.map(nodeOf).sort()).toEqual(['node-a', 'node-c']);
    const p = pods[0];
    const tolerations = (p?.spec?.tolerations ?? []).map((t) => `${t.key ?? ''}:${t.effect ?? ''}`);
    expect(tolerations).toEqual([
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
      'node.kubernetes.io/network-unavailable:NoSchedule',
    ]);
    expect(p?.metadata.labels?.['controller-revision-hash']).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(p?.metadata.labels?.['pod-template-generation']).toBe('1');
    expect(p?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'DaemonSet',
      name: 'agent',
      controller: true,
      blockOwnerDeletion: true,
    });
    const ds = await c.client.resource<DaemonSet>(DAEMON_SETS).get('agent', { namespace: 'default' });
    expect(ds.status).toMatchObject({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 2,
      numberReady: 2,
      numberAvailable: 2,
      updatedNumberScheduled: 2,
      numberMisscheduled: 0,
      observedGeneration: 1,
    });
  });

  it('rolls a template change out node by node', async () => {
    await c.client
      .resource<DaemonSet>(DAEMON_SETS)
      .patch(
        'agent',
        { spec: { template: { spec: { containers: [{ name: 'a', image: 'agent:2' }] } } } },
        { namespace: 'default', type: 'strategic' },
      );
    await rollout();
    const pods = await eventually('two updated pods', async () => {
      const list = await podsOf('agent');
      return list.length === 2 && list.every((x) => x.spec?.containers?.[0]?.image === 'agent:2')
        ? list
        : undefined;
    });
    expect(pods.every((x) => x.metadata.labels?.['pod-template-generation'] === '2')).toBe(true);
    const ds = await c.client.resource<DaemonSet>(DAEMON_SETS).get('agent', { namespace: 'default' });
    expect(ds.status).toMatchObject({ updatedNumberScheduled: 2, numberAvailable: 2, observedGeneration: 2 });
  });

  it('puts a pod on a node that joins', async () => {
    await c.kubelet.addNode('node-d');
    const pods = await eventually('a pod on node-d', async () => {
      const list = await podsOf('agent');
      return list.some((x) => nodeOf(x) === 'node-d') ? list : undefined;
    });
    expect(pods.map(nodeOf).sort()).toEqual(['node-a', 'node-c', 'node-d']);
    await rollout();
    expect(c.errors).toEqual([]);
  });
});
