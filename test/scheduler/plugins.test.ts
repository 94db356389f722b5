/**
 * Each default plugin deciding a placement, through the whole framework (PreFilter, Filter,
 * Score, Reserve, Bind) of a scheduler fed by hand; FailedScheduling messages checked verbatim.
 */
import { describe, expect, it } from 'vitest';
import { Harness, node, pod } from './harness.js';

describe('filters', () => {
  it('NodeResourcesFit: the pod goes where its requests fit, counting pods already there', async () => {
    const h = new Harness();
    h.addNode(node('small', { cpu: '1' }));
    h.addNode(node('big', { cpu: '4' }));
    const busy = pod('busy', { cpu: '3500m' });
    busy.spec = { ...busy.spec, nodeName: 'big' };
    h.addPod(busy);
    h.addPod(pod('p', { cpu: '1' }));
    expect((await h.run()).get('default/p')).toBe('small');
  });

  it('NodeResourcesFit: init containers count by their peak, overhead and extended resources too', async () => {
    const h = new Harness();
    h.addNode(node('a', { cpu: '2', extra: { 'example.com/gpu': '1' } }));
    h.addNode(node('b', { cpu: '8' }));
    const p = pod('p', { cpu: '500m' });
    p.spec = {
      ...p.spec,
      initContainers: [{ name: 'init', image: 'x', resources: { requests: { cpu: '3' } } }],
    };
    h.addPod(p);
    const g = pod('g', { cpu: '100m' });
    g.spec = { ...g.spec, overhead: { cpu: '100m' } };
    g.spec.containers = [{ name: 'c', image: 'x', resources: { requests: { 'example.com/gpu': '1' } } }];
    h.addPod(g);
    const placed = await h.run();
    expect(placed.get('default/p')).toBe('b');
    expect(placed.get('default/g')).toBe('a');
  });

  it("a pod that can never fit gets kube's exact FailedScheduling message and condition", async () => {
    const h = new Harness();
    h.addNode(node('t', { cpu: '8', taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }] }));
    h.addNode(node('n1', { cpu: '1' }));
    h.addNode(node('n2', { cpu: '1' }));
    h.addPod(pod('huge', { cpu: '2' }));
    await h.run();
    expect(h.failure('default/huge')).toBe(
      '0/3 nodes are available: 1 node(s) had untolerated taint {a: b}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
    expect(h.rec.conditions.get('default/huge')).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(h.scheduler.queue.counts().unschedulable).toBe(1);
  });

  it('NodeUnschedulable, NodeName, NodePorts and Too many pods', async () => {
    const h = new Harness();
    h.addNode(node('cordoned', { unschedulable: true }));
    h.addNode(node('full', { pods: '1' }));
    h.addNode(node('ports'));
    const holder = pod('holder');
    holder.spec = { ...holder.spec, nodeName: 'full' };
    h.addPod(holder);
    const web = pod('web-0');
    web.spec = {
      ...web.spec,
      nodeName: 'ports',
      containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }] }],
    };
    h.addPod(web);
    const p = pod('p');
    p.spec = {
      ...p.spec,
      containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }] }],
    };
    h.addPod(p);
    await h.run();
    expect(h.failure('default/p')).toBe(
      "0/3 nodes are available: 1 Too many pods, 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
    );
    const named = pod('named');
    named.spec = {
      ...named.spec,
      nodeName: '',
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['ports'] }] },
            ],
          },
        },
      },
    };
    h.addPod(named);
    expect((await h.run()).get('default/named')).toBe('ports');
  });

  it('TaintToleration: tolerated taints admit the pod; PreferNoSchedule scores lower', async () => {
    const h = new Harness();
    h.addNode(node('tainted', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }));
    h.addNode(node('soft', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }));
    h.addNode(node('clean'));
    h.addPod(pod('p'));
    const t = pod('t');
    t.spec = {
      ...t.spec,
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      nodeSelector: { 'kubernetes.io/hostname': 'tainted' },
    };
    h.addPod(t);
    const placed = await h.run();
    expect(placed.get('default/p')).toBe('clean');
    expect(placed.get('default/t')).toBe('tainted');
  });

  it('NodeAffinity: required terms filter, preferred terms score by weight', async () => {
    const h = new Harness();
    h.addNode(node('a', { labels: { disk: 'hdd', zone: 'z1' } }));
    h.addNode(node('b', { labels: { disk: 'ssd', zone: 'z1' } }));
    h.addNode(node('c', { labels: { disk: 'ssd', zone: 'z2' } }));
    const p = pod('p');
    p.spec = {
      ...p.spec,
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 50,
              preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z2'] }] },
            },
          ],
        },
      },
    };
    h.addPod(p);
    expect((await h.run()).get('default/p')).toBe('c');
    const none = pod('none');
    none.spec = { ...none.spec, nodeSelector: { disk: 'nvme' } };
    h.addPod(none);
    await h.run();
    expect(h.failure('default/none')).toBe(
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
  });

  it('a node with malformed capacity neither crashes the scheduler nor stops other placements', async () => {
    const h = new Harness();
    const bad = node('bad');
    bad.status = { allocatable: { cpu: 'lots', memory: '??', pods: 'x' } };
    h.addNode(bad);
    h.addNode(node('good'));
    for (let i = 0; i < 3; i++) h.addPod(pod(`p${i}`, { cpu: '100m' }));
    const placed = await h.run();
    expect([...placed.values()]).toEqual(['good', 'good', 'good']);
  });
});

describe('scores', () => {
  it('LeastAllocated and BalancedAllocation spread pods over equal nodes', async () => {
    const h = new Harness();
    for (const n of ['a', 'b', 'c']) h.addNode(node(n));
    for (let i = 0; i < 6; i++) h.addPod(pod(`p${i}`, { cpu: '500m', memory: '1Gi' }));
    const placed = await h.run();
    const per = new Map<string, number>();
    for (const n of placed.values()) per.set(n, (per.get(n) ?? 0) + 1);
    expect([...per.values()]).toEqual([2, 2, 2]);
  });

  it('ImageLocality prefers the node holding the image', async () => {
    const h = new Harness();
    h.addNode(node('a'));
    h.addNode(node('b', { images: [{ names: ['registry.example/big:1'], sizeBytes: 800 * 1024 * 1024 }] }));
    h.addNode(node('c'));
    const p = pod('p');
    p.spec = { ...p.spec, containers: [{ name: 'c', image: 'registry.example/big:1' }] };
    h.addPod(p);
    expect((await h.run()).get('default/p')).toBe('b');
  });
});

describe('inter-pod affinity and topology spread', () => {
  const zones = (h: Harness): void => {
    h.addNode(node('a1', { labels: { 'topology.kubernetes.io/zone': 'a' } }));
    h.addNode(node('a2', { labels: { 'topology.kubernetes.io/zone': 'a' } }));
    h.addNode(node('b1', { labels: { 'topology.kubernetes.io/zone': 'b' } }));
  };

  it('required anti-affinity by hostname puts one replica per node, the fourth fails', async () => {
    const h = new Harness();
    zones(h);
    for (let i = 0; i < 4; i++) {
      const p = pod(`web-${i}`, { labels: { app: 'web' } });
      p.spec = {
        ...p.spec,
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' },
            ],
          },
        },
      };
      h.addPod(p);
    }
    const placed = await h.run();
    expect(new Set(placed.values()).size).toBe(3);
    expect(h.failure('default/web-3')).toBe(
      "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    );
  });

  it("required affinity by zone follows the first pod; an existing pod's anti-affinity repels (symmetry)", async () => {
    const h = new Harness();
    zones(h);
    const db = pod('db', { labels: { app: 'db' } });
    db.spec = { ...db.spec, nodeName: 'b1' };
    h.addPod(db);
    const guard = pod('guard', { labels: { app: 'guard' } });
    guard.spec = {
      ...guard.spec,
      nodeName: 'a1',
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'kubernetes.io/hostname' },
          ],
        },
      },
    };
    h.addPod(guard);
    const app = pod('app', { labels: { app: 'app' } });
    app.spec = {
      ...app.spec,
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'topology.kubernetes.io/zone' },
          ],
        },
      },
    };
    h.addPod(app);
    const cache = pod('cache', { labels: { app: 'cache' } });
    cache.spec = {
      ...cache.spec,
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] },
            ],
          },
        },
      },
    };
    h.addPod(cache);
    const placed = await h.run();
    expect(placed.get('default/app')).toBe('b1');
    expect(placed.get('default/cache')).toBe('a2');
  });

  it('PodTopologySpread DoNotSchedule keeps zones within maxSkew', async () => {
    const h = new Harness();
    zones(h);
    for (let i = 0; i < 4; i++) {
      const p = pod(`s-${i}`, { labels: { app: 's' } });
      p.spec = {
        ...p.spec,
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 's' } },
          },
        ],
      };
      h.addPod(p);
    }
    const placed = await h.run();
    const perZone = { a: 0, b: 0 };
    for (const n of placed.values()) perZone[n.startsWith('a') ? 'a' : 'b']++;
    expect(perZone).toEqual({ a: 2, b: 2 });
  });

  it("the cluster default constraints spread a ReplicaSet's pods over nodes", async () => {
    const h = new Harness();
    for (const n of ['n1', 'n2', 'n3']) h.addNode(node(n, { cpu: '100', memory: '100Gi' }));
    h.replicaSets.push({
      metadata: { name: 'rs', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'r' } } },
    });
    for (let i = 0; i < 6; i++) h.addPod(pod(`r-${i}`, { labels: { app: 'r' } }));
    const placed = await h.run();
    const per = new Map<string, number>();
    for (const n of placed.values()) per.set(n, (per.get(n) ?? 0) + 1);
    expect([...per.values()].sort()).toEqual([2, 2, 2]);
  });
});
