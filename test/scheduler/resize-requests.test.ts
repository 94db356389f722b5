/**
 * A pod's requests as the scheduler counts them during an in-place resize (kube's PodRequests
 * with status resources): the larger of the spec's and what the node reports, or what the node
 * reports alone while the resize is Infeasible.
 */
import { describe, expect, it } from 'vitest';
import type { Pod, PodCondition } from '../../src/api/types/core-v1.js';
import { podRequests } from '../../src/scheduler/resources.js';

function pod(
  spec: Record<string, string>,
  reported?: Record<string, string>,
  conditions?: PodCondition[],
): Pod {
  return {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      initContainers: [
        { name: 's', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
      ],
      containers: [{ name: 'c', image: 'x', resources: { requests: spec } }],
    },
    status: {
      ...(conditions ? { conditions } : {}),
      containerStatuses: [
        {
          name: 'c',
          image: 'x',
          imageID: '',
          ready: true,
          restartCount: 0,
          ...(reported ? { resources: { requests: reported } } : {}),
        },
      ],
    },
  };
}

describe('podRequests during a resize', () => {
  it('counts the spec where the node reports no resources', () => {
    const r = podRequests(pod({ cpu: '300m', memory: '64Mi' }));
    expect([r.milliCPU, r.memory]).toEqual([400, 64 * 2 ** 20]);
  });

  it('counts the larger of the spec and the status, per resource', () => {
    // Shrinking cpu not yet done on the node; memory grown in the spec.
    const r = podRequests(pod({ cpu: '300m', memory: '64Mi' }, { cpu: '600m', memory: '32Mi' }));
    expect([r.milliCPU, r.memory]).toEqual([700, 64 * 2 ** 20]);
  });

  it('counts the status alone while the resize is Infeasible', () => {
    const infeasible: PodCondition = { type: 'PodResizePending', status: 'True', reason: 'Infeasible' };
    const r = podRequests(pod({ cpu: '8', memory: '64Mi' }, { cpu: '300m', memory: '64Mi' }, [infeasible]));
    expect([r.milliCPU, r.memory]).toEqual([400, 64 * 2 ** 20]);
  });

  it('keeps the non-zero defaults for scoring where neither names a request', () => {
    const r = podRequests(pod({}, {}), true);
    expect([r.milliCPU, r.memory]).toEqual([200, 200 * 2 ** 20 * 2]);
  });
});
