import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object.js';
import { printerFor } from '../../src/table/index.js';

const now = new Date('2024-05-01T12:00:00Z');
const pods = printerFor('', 'pods');

function pod(spec: object, status: object, metadata: object = {}): KubeObject {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: 'web', creationTimestamp: '2024-05-01T11:00:00Z', ...metadata },
    spec,
    status,
  };
}

const twoContainers = { containers: [{ name: 'a' }, { name: 'b' }] };
const running = { running: { startedAt: '2024-05-01T11:00:00Z' } };

/** READY, STATUS, RESTARTS of a pod. */
function summary(p: KubeObject): unknown[] {
  return pods.cells(p, now).slice(1, 4);
}

describe('pod columns', () => {
  it('has kube-apiserver names, types and priorities', () => {
    expect(pods.columns.map((c) => [c.name, c.type, c.priority, c.format])).toEqual([
      ['Name', 'string', 0, 'name'],
      ['Ready', 'string', 0, ''],
      ['Status', 'string', 0, ''],
      ['Restarts', 'string', 0, ''],
      ['Age', 'string', 0, ''],
      ['IP', 'string', 1, ''],
      ['Node', 'string', 1, ''],
      ['Nominated Node', 'string', 1, ''],
      ['Readiness Gates', 'string', 1, ''],
    ]);
  });
});

describe('pod cells', () => {
  it('prints a running pod with every wide cell', () => {
    const p = pod(
      {
        ...twoContainers,
        nodeName: 'node-1',
        readinessGates: [{ conditionType: 'x/ok' }, { conditionType: 'x/no' }],
      },
      {
        phase: 'Running',
        podIP: '10.0.0.9',
        podIPs: [{ ip: '10.0.0.9' }, { ip: 'fd00::9' }],
        conditions: [
          { type: 'x/ok', status: 'True' },
          { type: 'x/no', status: 'False' },
        ],
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 0, state: running },
          { name: 'b', ready: true, restartCount: 0, state: running },
        ],
      },
    );
    expect(pods.cells(p, now)).toEqual([
      'web',
      '2/2',
      'Running',
      '0',
      '60m',
      '10.0.0.9',
      'node-1',
      '<none>',
      '1/2',
    ]);
  });

  it('prints <none> for unset IP, node, nominated node and readiness gates; <unknown> age', () => {
    const p = pod(twoContainers, { phase: 'Pending' }, { creationTimestamp: undefined });
    expect(pods.cells(p, now)).toEqual([
      'web',
      '0/2',
      'Pending',
      '0',
      '<unknown>',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });

  it('falls back to status.podIP and shows the nominated node', () => {
    const p = pod(twoContainers, { phase: 'Pending', podIP: '10.0.0.1', nominatedNodeName: 'node-2' });
    expect(pods.cells(p, now).slice(5)).toEqual(['10.0.0.1', '<none>', 'node-2', '<none>']);
  });

  it('uses the waiting reason of the first container and counts restarts with the last time', () => {
    const p = pod(twoContainers, {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'a',
          ready: false,
          restartCount: 3,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:57:00Z' } },
        },
        {
          name: 'b',
          ready: true,
          restartCount: 2,
          state: running,
          lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:30:00Z' } },
        },
      ],
    });
    expect(summary(p)).toEqual(['1/2', 'CrashLoopBackOff', '5 (3m ago)']);
  });

  it('prints the restart count without a suffix when no termination time is known', () => {
    const p = pod(twoContainers, {
      phase: 'Running',
      containerStatuses: [{ name: 'a', ready: true, restartCount: 4, state: running }],
    });
    expect(summary(p)).toEqual(['1/2', 'Running', '4']);
  });

  it('prints terminated reasons, signals and exit codes', () => {
    const one = { containers: [{ name: 'a' }] };
    const withState = (state: object): KubeObject =>
      pod(one, { phase: 'Failed', containerStatuses: [{ name: 'a', state }] });
    expect(summary(withState({ terminated: { exitCode: 137, reason: 'OOMKilled' } }))[1]).toBe('OOMKilled');
    expect(summary(withState({ terminated: { exitCode: 137, signal: 9 } }))[1]).toBe('Signal:9');
    expect(summary(withState({ terminated: { exitCode: 2 } }))[1]).toBe('ExitCode:2');
  });

  it('uses status.reason over the phase', () => {
    expect(summary(pod(twoContainers, { phase: 'Failed', reason: 'Evicted' }))[1]).toBe('Evicted');
  });

  it('prints Completed, or Running/NotReady when a container still runs', () => {
    const statuses = [
      { name: 'a', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
      { name: 'b', ready: true, state: running },
    ];
    const done = pod(twoContainers, {
      phase: 'Succeeded',
      containerStatuses: statuses.map((s) => ({
        ...s,
        ready: false,
        state: { terminated: { exitCode: 0, reason: 'Completed' } },
      })),
    });
    expect(summary(done)[1]).toBe('Completed');
    const ready = pod(twoContainers, {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: statuses,
    });
    expect(summary(ready)).toEqual(['1/2', 'Running', '0']);
    const notReady = pod(twoContainers, { phase: 'Running', containerStatuses: statuses });
    expect(summary(notReady)[1]).toBe('NotReady');
  });

  it('prints init progress, init waiting reasons and init failures', () => {
    const spec = { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] };
    const init = (statuses: object[]): KubeObject =>
      pod(spec, {
        phase: 'Pending',
        initContainerStatuses: statuses,
        containerStatuses: [{ name: 'a', state: { waiting: { reason: 'PodInitializing' } } }],
      });
    const ok = { name: 'i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    expect(summary(init([ok, { name: 'i2', state: running }]))).toEqual(['0/1', 'Init:1/2', '0']);
    expect(summary(init([ok, { name: 'i2', state: { waiting: { reason: 'PodInitializing' } } }]))[1]).toBe(
      'Init:1/2',
    );
    expect(summary(init([{ name: 'i1', state: { waiting: { reason: 'ImagePullBackOff' } } }]))[1]).toBe(
      'Init:ImagePullBackOff',
    );
    expect(
      summary(
        init([{ name: 'i1', restartCount: 2, state: { terminated: { exitCode: 1, reason: 'Error' } } }]),
      ),
    ).toEqual(['0/1', 'Init:Error', '2']);
    expect(summary(init([{ name: 'i1', state: { terminated: { exitCode: 3 } } }]))[1]).toBe(
      'Init:ExitCode:3',
    );
    expect(summary(init([{ name: 'i1', state: { terminated: { exitCode: 3, signal: 15 } } }]))[1]).toBe(
      'Init:Signal:15',
    );
  });

  it('counts started sidecars as containers and their restarts once initialised', () => {
    const spec = {
      initContainers: [{ name: 'proxy', restartPolicy: 'Always' }, { name: 'setup' }],
      containers: [{ name: 'a' }],
    };
    const sidecar = {
      name: 'proxy',
      started: true,
      ready: true,
      restartCount: 2,
      state: running,
      lastState: { terminated: { exitCode: 1, finishedAt: '2024-05-01T11:50:00Z' } },
    };
    const setup = {
      name: 'setup',
      restartCount: 1,
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    };
    const p = pod(spec, {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      initContainerStatuses: [sidecar, setup],
      containerStatuses: [{ name: 'a', ready: true, restartCount: 1, state: running }],
    });
    // Restarts of ordinary init containers are dropped once the pod is initialised.
    expect(summary(p)).toEqual(['2/2', 'Running', '3 (10m ago)']);
    // While the sidecar has not started, the pod is still initialising; statuses after it are not read.
    const starting = pod(spec, {
      phase: 'Pending',
      initContainerStatuses: [{ ...sidecar, started: false, ready: false }, setup],
    });
    expect(summary(starting)).toEqual(['0/2', 'Init:0/2', '2 (10m ago)']);
  });

  it('prints SchedulingGated from the PodScheduled condition', () => {
    const p = pod(twoContainers, {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
    });
    expect(summary(p)[1]).toBe('SchedulingGated');
  });

  it('prints Terminating while deleting, Unknown for NodeLost, and keeps terminal phases', () => {
    const deleting = { deletionTimestamp: '2024-05-01T11:59:00Z' };
    expect(summary(pod(twoContainers, { phase: 'Running' }, deleting))[1]).toBe('Terminating');
    expect(summary(pod(twoContainers, { phase: 'Running', reason: 'NodeLost' }, deleting))[1]).toBe(
      'Unknown',
    );
    expect(summary(pod(twoContainers, { phase: 'Succeeded' }, deleting))[1]).toBe('Succeeded');
    expect(summary(pod(twoContainers, { phase: 'Failed' }, deleting))[1]).toBe('Failed');
  });

  it('survives a pod without spec or status', () => {
    expect(pods.cells({ metadata: { name: 'bare' } }, now)).toEqual([
      'bare',
      '0/0',
      '',
      '0',
      '<unknown>',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });
});
