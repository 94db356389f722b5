/**
 * Queueing: priority order, gates, backoff and event-driven requeueing, several profiles,
 * preemption's eligibility, and the volume plugins' refusals.
 */
import { describe, expect, it } from 'vitest';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { SchedulingQueue } from '../../src/scheduler/queue.js';
import { Harness, node, pod } from './harness.js';

describe('the queue', () => {
  it('keeps its pods while closed (a scheduler that stepped down) and pops them once reopened', async () => {
    const q = new SchedulingQueue({
      less: (a, b) => a.timestamp < b.timestamp,
      preEnqueue: () => undefined,
      plugins: new Map(),
      initialBackoffMs: 1000,
      maxBackoffMs: 10_000,
    });
    q.add(pod('a'));
    q.add(pod('b'));
    const first = await q.pop();
    expect(first?.info.pod.metadata.name).toBe('a');
    q.close();
    expect(await q.pop()).toBeUndefined();
    q.putBack(first!);
    expect(q.counts().active).toBe(2);
    q.reopen();
    const names = [(await q.pop())?.info.pod.metadata.name, (await q.pop())?.info.pod.metadata.name];
    expect(names.sort()).toEqual(['a', 'b']);
  });

  it('pops by priority, then arrival; backs off 1 s, 2 s, ... up to the max', async () => {
    let now = 1_000_000;
    const q = new SchedulingQueue({
      less: (a, b) =>
        a.info.priority > b.info.priority ||
        (a.info.priority === b.info.priority && a.timestamp < b.timestamp),
      preEnqueue: () => undefined,
      plugins: new Map(),
      initialBackoffMs: 1000,
      maxBackoffMs: 10_000,
      now: () => now,
    });
    q.add(pod('low', { priority: 1 }));
    q.add(pod('high', { priority: 100 }));
    q.add(pod('low2', { priority: 1 }));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await q.pop())?.info.pod.metadata.name);
    expect(order).toEqual(['high', 'low', 'low2']);
    const p = pod('b');
    q.add(p);
    for (const expected of [1000, 2000, 4000, 8000, 10_000, 10_000]) {
      const item = await q.pop();
      if (item === undefined) throw new Error('empty');
      q.addUnschedulable(item, q.cycle, true);
      expect(q.counts().backoff).toBe(1);
      now += expected - 1;
      q.flush();
      expect(q.counts().active).toBe(0);
      now += 1;
      q.flush();
      expect(q.counts().active).toBe(1);
    }
    expect(new PodInfo(p).key).toBe('default/b');
  });
});

describe('scheduling', () => {
  it('gated pods wait (SchedulingGates) and are scheduled once the gates are removed', async () => {
    const h = new Harness();
    h.addNode(node('n'));
    const g = pod('gated');
    g.spec = { ...g.spec, schedulingGates: [{ name: 'example.com/wait' }] };
    h.addPod(g);
    await h.run();
    expect(h.scheduler.queue.counts().gated).toBe(1);
    expect(h.rec.binds.size).toBe(0);
    const ungated = { ...g, spec: { ...g.spec, schedulingGates: [] } };
    h.pods.set('default/gated', ungated);
    h.scheduler.onPodUpdate(g, ungated);
    expect((await h.run()).get('default/gated')).toBe('n');
  });

  it('an unschedulable pod is requeued when a node that fits it is added', async () => {
    const h = new Harness();
    h.addNode(node('small', { cpu: '1' }));
    h.addPod(pod('p', { cpu: '2' }));
    await h.run();
    expect(h.scheduler.queue.counts().unschedulable).toBe(1);
    h.addNode(node('big', { cpu: '4' }));
    // Moved by the event, but its 1 s backoff has not passed yet.
    expect(h.scheduler.queue.counts()).toMatchObject({ unschedulable: 0, backoff: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    h.scheduler.queue.flush();
    expect((await h.run()).get('default/p')).toBe('big');
  });

  it("several profiles: each pod goes through its schedulerName's profile; others are left alone", async () => {
    const h = new Harness({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      profiles: [
        { schedulerName: 'default-scheduler' },
        {
          schedulerName: 'packer',
          pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }],
          plugins: {
            score: { disabled: [{ name: 'NodeResourcesBalancedAllocation' }, { name: 'PodTopologySpread' }] },
          },
        },
      ],
    });
    h.addNode(node('empty', { cpu: '4' }));
    h.addNode(node('used', { cpu: '4' }));
    const used = pod('used-0', { cpu: '2' });
    used.spec = { ...used.spec, nodeName: 'used' };
    h.addPod(used);
    const packed = pod('packed', { cpu: '1' });
    packed.spec = { ...packed.spec, schedulerName: 'packer' };
    h.addPod(packed);
    const spread = pod('spread', { cpu: '1' });
    h.addPod(spread);
    const foreign = pod('foreign');
    foreign.spec = { ...foreign.spec, schedulerName: 'not-ours' };
    h.addPod(foreign);
    const placed = await h.run();
    expect(placed.get('default/packed')).toBe('used');
    expect(placed.get('default/spread')).toBe('empty');
    expect(placed.has('default/foreign')).toBe(false);
  });

  it('preemptionPolicy Never does not preempt; PDB-protected pods are spared where possible', async () => {
    const h = new Harness();
    h.addNode(node('a', { cpu: '2' }));
    h.addNode(node('b', { cpu: '2' }));
    const onA = pod('protected', { cpu: '1500m', priority: 1, labels: { app: 'db' } });
    onA.spec = { ...onA.spec, nodeName: 'a' };
    const onB = pod('plain', { cpu: '1500m', priority: 1 });
    onB.spec = { ...onB.spec, nodeName: 'b' };
    h.addPod(onA);
    h.addPod(onB);
    h.pdbs.push({
      metadata: { name: 'db', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'db' } } },
      status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
    });
    const never = pod('never', { cpu: '1500m', priority: 100 });
    never.spec = { ...never.spec, preemptionPolicy: 'Never' };
    h.addPod(never);
    await h.run();
    expect(h.failure('default/never')).toBe(
      '0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.',
    );
    expect(h.rec.evicted).toEqual([]);
    h.addPod(pod('urgent', { cpu: '1500m', priority: 100 }));
    await h.run();
    expect(h.rec.evicted).toEqual(['default/plain']);
    expect(h.pods.get('default/urgent')?.status?.nominatedNodeName).toBe('b');
  });

  it("VolumeBinding: a missing claim and an unbound immediate claim are refused with kube's messages", async () => {
    const h = new Harness();
    h.addNode(node('n'));
    const missing = pod('missing');
    missing.spec = {
      ...missing.spec,
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'nope' } }],
    };
    h.addPod(missing);
    h.pvcs.set('default/imm', {
      metadata: { name: 'imm', namespace: 'default' },
      spec: { storageClassName: 'fast' },
    });
    const immediate = pod('immediate');
    immediate.spec = {
      ...immediate.spec,
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'imm' } }],
    };
    h.addPod(immediate);
    await h.run();
    expect(h.failure('default/missing')).toBe(
      '0/1 nodes are available: persistentvolumeclaim "nope" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
    expect(h.failure('default/immediate')).toBe(
      '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
  });
});
