/**
 * Sidecars (init containers with `restartPolicy: Always`) on a real node (containerd, server,
 * agent) through kubectl 1.33, with kube v1.33's semantics:
 * - they start in order with the init sequence, and the next init container waits until the
 *   sidecar runs and its startup probe passed;
 * - their statuses are in `initContainerStatuses` (running, started, ready), and their readiness
 *   counts for the pod's Ready condition;
 * - one that exits is restarted, even in a pod with `restartPolicy: Never`; one failing its
 *   liveness probe is killed (kube's Killing event) and restarted, the app untouched;
 * - they do not keep a pod from completing: once the app containers are done they are stopped,
 *   after the app containers and last to first, and the pod Succeeds;
 * - a deleted pod stops its app containers first, then its sidecars in reverse order.
 * Each container appends to a file on a hostPath volume, which the test reads on the host.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { BUSYBOX_IMAGE, requireContainerd } from '../support/containerd.js';

const enabled = requireContainerd();

/** A shell loop that appends `name` to the order file, then runs until SIGTERM (appending `name-term`). */
function appender(name: string, extra = ''): string[] {
  return [
    'sh',
    '-c',
    `trap 'echo ${name}-term >> /out/order; exit 0' TERM; echo ${name} >> /out/order; ${extra} while true; do sleep 0.1; done`,
  ];
}

describe.runIf(enabled)('sidecars (restartable init containers)', () => {
  let node: AgentNode;
  const k = (...args: string[]): Promise<string> => node.kubectl(...args);
  const get = async (pod: string): Promise<Pod> =>
    JSON.parse(await k('get', 'pod', pod, '-o', 'json')) as Pod;
  const order = async (pod: string): Promise<string[]> =>
    (await readFile(join(node.dir, 'out', pod, 'order'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const outVolume = (pod: string) => ({
    volumes: [{ name: 'out', hostPath: { path: join(node.dir, 'out', pod), type: 'DirectoryOrCreate' } }],
  });
  const mount = { volumeMounts: [{ name: 'out', mountPath: '/out' }] };
  const sidecar = (name: string, command: string[], extra: Record<string, unknown> = {}) => ({
    name,
    image: BUSYBOX_IMAGE,
    restartPolicy: 'Always',
    command,
    ...mount,
    ...extra,
  });

  beforeAll(async () => {
    node = await startAgentNode({ node: 'sidecar-node-1', podCIDR: '10.244.170.0/24' });
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it('starts sidecars in order with the init sequence, gated by their startup probes, and reports them', async () => {
    await node.applyPod(
      'ordered',
      { command: appender('app'), ...mount },
      {
        ...outVolume('ordered'),
        initContainers: [
          sidecar('s1', appender('s1')),
          // s2 is started only after 2 s: the regular init container must wait for its probe.
          sidecar('s2', appender('s2', 'sleep 2; echo s2-started >> /out/order; touch /tmp/started;'), {
            startupProbe: { exec: { command: ['test', '-f', '/tmp/started'] }, periodSeconds: 1 },
            readinessProbe: { exec: { command: ['test', '-f', '/out/s2-ready'] }, periodSeconds: 1 },
          }),
          { name: 'init', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo init >> /out/order'], ...mount },
        ],
      },
    );
    await node.running('ordered');
    expect(await order('ordered')).toEqual(['s1', 's2', 's2-started', 'init', 'app']);
    let pod = await get('ordered');
    const init = pod.status?.initContainerStatuses ?? [];
    expect(init.map((s) => [s.name, Object.keys(s.state ?? {})[0], s.started, s.ready])).toEqual([
      ['s1', 'running', true, true],
      ['s2', 'running', true, false],
      ['init', 'terminated', false, true],
    ]);
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', message: 'containers with unready status: [s2]' });
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
    // The sidecar's readiness makes the pod Ready.
    await writeFile(join(node.dir, 'out', 'ordered', 's2-ready'), '');
    await expect
      .poll(async () => (await get('ordered')).status?.conditions?.find((c) => c.type === 'Ready')?.status, {
        timeout: 20_000,
        interval: 500,
      })
      .toBe('True');
    pod = await get('ordered');
    expect(pod.status?.initContainerStatuses?.find((s) => s.name === 's2')?.ready).toBe(true);
  }, 120_000);

  it('restarts a sidecar that exits, even with restartPolicy Never', async () => {
    await node.applyPod(
      'restarts',
      { command: ['sleep', '3600'] },
      {
        restartPolicy: 'Never',
        ...outVolume('restarts'),
        initContainers: [
          sidecar('s1', [
            'sh',
            '-c',
            'echo s1 >> /out/order; while [ ! -f /out/stop ]; do sleep 0.1; done; rm /out/stop; exit 1',
          ]),
        ],
      },
    );
    await node.running('restarts');
    await writeFile(join(node.dir, 'out', 'restarts', 'stop'), '');
    await expect
      .poll(
        async () => {
          const s = (await get('restarts')).status?.initContainerStatuses?.[0];
          return [s?.restartCount, Object.keys(s?.state ?? {})[0], s?.lastState?.terminated?.exitCode];
        },
        { timeout: 30_000, interval: 500 },
      )
      .toEqual([1, 'running', 1]);
    expect(await order('restarts')).toEqual(['s1', 's1']);
    expect((await get('restarts')).status?.phase).toBe('Running');
  }, 60_000);

  it('kills and restarts a sidecar failing its liveness probe, with kube’s event', async () => {
    await node.applyPod(
      'unhealthy',
      { command: ['sleep', '3600'] },
      {
        ...outVolume('unhealthy'),
        initContainers: [
          sidecar('s1', ['sh', '-c', 'touch /tmp/alive; exec sleep 3600'], {
            livenessProbe: {
              exec: { command: ['test', '-f', '/tmp/alive'] },
              periodSeconds: 1,
              failureThreshold: 1,
            },
          }),
        ],
      },
    );
    await node.running('unhealthy');
    await k('exec', 'unhealthy', '-c', 's1', '--', 'rm', '-f', '/tmp/alive');
    await expect
      .poll(
        async () => {
          const s = (await get('unhealthy')).status?.initContainerStatuses?.[0];
          return [s?.restartCount, Object.keys(s?.state ?? {})[0]];
        },
        { timeout: 30_000, interval: 500 },
      )
      .toEqual([1, 'running']);
    const events = await k(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=unhealthy,reason=Killing',
      '-o',
      'jsonpath={.items[*].message}',
    );
    expect(events).toContain('Init container s1 failed liveness probe');
    expect((await get('unhealthy')).status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 60_000);

  it('lets the pod complete: sidecars stop after the app containers, last to first', async () => {
    await node.applyPod(
      'completes',
      { command: ['sh', '-c', 'sleep 1; echo app-done >> /out/order'], ...mount },
      {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 10,
        ...outVolume('completes'),
        initContainers: [sidecar('s1', appender('s1')), sidecar('s2', appender('s2'))],
      },
    );
    await expect
      .poll(async () => (await get('completes')).status?.phase, { timeout: 60_000, interval: 500 })
      .toBe('Succeeded');
    expect(await order('completes')).toEqual(['s1', 's2', 'app-done', 's2-term', 's1-term']);
    const pod = await get('completes');
    expect(
      pod.status?.initContainerStatuses?.map((s) => [
        s.name,
        s.state?.terminated?.reason,
        s.state?.terminated?.exitCode,
      ]),
    ).toEqual([
      ['s1', 'Completed', 0],
      ['s2', 'Completed', 0],
    ]);
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PodCompleted',
    });
  }, 90_000);

  it('stops a deleted pod’s app containers first, then its sidecars in reverse order', async () => {
    await node.applyPod(
      'deleted',
      { command: appender('app'), ...mount },
      {
        terminationGracePeriodSeconds: 10,
        ...outVolume('deleted'),
        initContainers: [sidecar('s1', appender('s1')), sidecar('s2', appender('s2'))],
      },
    );
    await node.running('deleted');
    await k('delete', 'pod', 'deleted', '--wait=true', '--timeout=60s');
    expect(await order('deleted')).toEqual(['s1', 's2', 'app', 'app-term', 's2-term', 's1-term']);
  }, 90_000);
});
