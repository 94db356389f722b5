/**
 * NodeResourcesFit's fast path: `fitsPlainly` may say "fits" only where the full check finds no
 * shortfall, and for pods without extended resources it must say so exactly there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { NodeInfo } from '../../src/scheduler/node-info.js';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { fitsPlainly, insufficientResources } from '../../src/scheduler/plugins/node-resources-fit.js';

const pod = (name: string, cpu: number, memory: number, gpu: number): Pod => ({
  metadata: { name, namespace: 'default', uid: name },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'x',
        resources: {
          requests: {
            ...(cpu > 0 ? { cpu: `${cpu}m` } : {}),
            ...(memory > 0 ? { memory: `${memory}Mi` } : {}),
            ...(gpu > 0 ? { 'example.com/gpu': String(gpu) } : {}),
          },
        },
      },
    ],
  },
});

const node = (cpu: number, memory: number, pods: number, gpu: number): NodeInfo => {
  const n: Node = {
    metadata: { name: 'n' },
    status: {
      allocatable: {
        cpu: `${cpu}m`,
        memory: `${memory}Mi`,
        pods: String(pods),
        'ephemeral-storage': '10Gi',
        'example.com/gpu': String(gpu),
      },
    },
  };
  const info = new NodeInfo('n');
  info.setNode(n);
  return info;
};

describe('fitsPlainly', () => {
  it('agrees with insufficientResources', () => {
    const size = fc.integer({ min: 0, max: 4000 });
    fc.assert(
      fc.property(
        fc.record({
          node: fc.tuple(size, size, fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 2 })),
          placed: fc.array(fc.tuple(size, size), { maxLength: 4 }),
          incoming: fc.tuple(size, size, fc.integer({ min: 0, max: 3 })),
        }),
        ({ node: [cpu, memory, pods, gpu], placed, incoming }) => {
          const info = node(cpu, memory, pods, gpu);
          placed.forEach(([c, m], i) => info.addPod(new PodInfo(pod(`placed-${i}`, c, m, 0))));
          const p = new PodInfo(pod('incoming', ...incoming));
          const short = insufficientResources(p, info);
          if (fitsPlainly(p, info)) expect(short).toEqual([]);
          else if (incoming[2] === 0) expect(short).not.toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });
});
