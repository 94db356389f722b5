/**
 * Node admission (src/agent/pod/admission.ts) against kubelet's answers: the checks' order, the
 * requests of the pods already admitted, the reasons and messages of kubelet v1.33
 * (pkg/kubelet/lifecycle/predicate.go).
 */
import { describe, expect, it } from 'vitest';
import type { Container, Node, Pod } from '../../src/api/types/core-v1.js';
import { admitPod } from '../../src/agent/pod/admission.js';

const node = (allocatable: Record<string, string>, extra: Partial<Node> = {}): Node => ({
  metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', disk: 'ssd' } },
  status: {
    allocatable: { cpu: '2', memory: '4Gi', pods: '110', 'ephemeral-storage': '10Gi', ...allocatable },
  },
  ...extra,
});

let seq = 0;
const pod = (
  requests: Record<string, string> = {},
  spec: Partial<NonNullable<Pod['spec']>> = {},
  c: Partial<Container> = {},
): Pod => ({
  metadata: { name: `p${++seq}`, namespace: 'default', uid: `u${seq}` },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', resources: { requests }, ...c }], ...spec },
});

describe('node admission', () => {
  it('admits a pod that fits what the others leave', () => {
    expect(admitPod(pod({ cpu: '1' }), node({}), [pod({ cpu: '1' })])).toBeUndefined();
  });

  it("refuses cpu with kubelet's reason and message, counting the admitted pods' requests", () => {
    expect(admitPod(pod({ cpu: '1500m' }), node({}), [pod({ cpu: '600m' })])).toEqual({
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1500, used: 600, capacity: 2000",
    });
  });

  it('checks the pod count first, then cpu, then memory (the first failure is the one told)', () => {
    const full = node({ pods: '1' });
    expect(admitPod(pod({ cpu: '3', memory: '8Gi' }), full, [pod()])?.reason).toBe('OutOfpods');
    expect(admitPod(pod({ cpu: '3', memory: '8Gi' }), full, [pod()])?.message).toBe(
      "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
    );
    expect(admitPod(pod({ cpu: '3', memory: '8Gi' }), node({}), [])?.reason).toBe('OutOfcpu');
    expect(admitPod(pod({ memory: '5Gi' }), node({}), [])).toEqual({
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${5 * 2 ** 30}, used: 0, capacity: ${4 * 2 ** 30}`,
    });
  });

  it('counts init containers as the scheduler does (the larger of the largest init and the sum of apps)', () => {
    const p = pod(
      { cpu: '500m' },
      { initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '2500m' } } }] },
    );
    expect(admitPod(p, node({}), [])?.message).toBe(
      "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000",
    );
  });

  it('ignores an extended resource the node does not have, and refuses one it has too little of', () => {
    expect(admitPod(pod({ 'example.com/widget': '3' }), node({}), [])).toBeUndefined();
    expect(admitPod(pod({ 'example.com/widget': '3' }), node({ 'example.com/widget': '2' }), [])).toEqual({
      reason: 'OutOfexample.com/widget',
      message: "Node didn't have enough resource: example.com/widget, requested: 3, used: 0, capacity: 2",
    });
    expect(admitPod(pod({ 'hugepages-2Mi': '4Mi' }), node({}), [])?.reason).toBe('OutOfhugepages-2Mi');
  });

  it('refuses a nodeSelector or required node affinity the node does not match', () => {
    const rejected = {
      reason: 'NodeAffinity',
      message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    };
    expect(admitPod(pod({}, { nodeSelector: { disk: 'hdd' } }), node({}), [])).toEqual(rejected);
    expect(admitPod(pod({}, { nodeSelector: { disk: 'ssd' } }), node({}), [])).toBeUndefined();
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }],
        },
      },
    };
    expect(admitPod(pod({}, { affinity }), node({}), [])).toEqual(rejected);
    // Resources are checked first.
    expect(admitPod(pod({ cpu: '3' }, { nodeSelector: { disk: 'hdd' } }), node({}), [])?.reason).toBe(
      'OutOfcpu',
    );
  });

  it('refuses a host port another admitted pod holds', () => {
    const port = (hostPort: number, hostIP?: string): Partial<Container> => ({
      ports: [{ containerPort: 80, hostPort, ...(hostIP ? { hostIP } : {}) }],
    });
    const holder = pod({}, {}, port(8080));
    expect(admitPod(pod({}, {}, port(8080, '127.0.0.1')), node({}), [holder])).toEqual({
      reason: 'NodePorts',
      message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    });
    expect(admitPod(pod({}, {}, port(8081)), node({}), [holder])).toBeUndefined();
  });

  it('refuses a NoExecute taint the pod does not tolerate, and no other effect', () => {
    const tainted = node({}, { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] } });
    expect(admitPod(pod(), tainted, [])).toEqual({
      reason: 'TaintToleration',
      message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
    });
    const tolerating = pod({}, { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }] });
    expect(admitPod(tolerating, tainted, [])).toBeUndefined();
    const noSchedule = node({}, { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } });
    expect(admitPod(pod(), noSchedule, [])).toBeUndefined();
  });
});
