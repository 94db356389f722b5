/**
 * In-place pod resize on a real node (containerd, cgroup v1), driven by kubectl 1.33's
 * `patch --subresource=resize`, as kubelet v1.33 does it:
 * - a running container's status reports its `resources`, so the server accepts resizes;
 * - cpu and memory change in place (CRI UpdateContainerResources): the container's cgroup
 *   shows the new limits, its status the new resources, and it keeps running (restartCount 0);
 * - a container whose `resizePolicy` says RestartContainer for memory restarts with the new limit;
 * - a resize larger than the node is Infeasible, and stays so across an agent restart (the
 *   allocation is checkpointed); one that does not fit beside the other pods is Deferred
 *   (PodResizePending) and taken once the room is there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { requireContainerd } from '../support/containerd.js';

const enabled = requireContainerd();
const NODE = 'agent-resize';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

describe.runIf(enabled)('in-place pod resize on capstan agent', () => {
  let node: AgentNode;
  const k = (...args: string[]): Promise<string> => node.kubectl(...args);
  const jsonpath = (pod: string, path: string): Promise<string> =>
    k('get', 'pod', pod, '-o', `jsonpath={${path}}`);
  const resize = (pod: string, container: string, resources: unknown): Promise<string> =>
    k(
      'patch',
      'pod',
      pod,
      '--subresource=resize',
      '-p',
      JSON.stringify({ spec: { containers: [{ name: container, resources }] } }),
    );
  /** A file of the container's cgroup, read from inside it. */
  const cgroup = async (pod: string, file: string): Promise<string> =>
    (await k('exec', pod, '--', 'cat', `/sys/fs/cgroup/${file}`)).trim();
  /** The first container's status `resources`, parsed. */
  const statusResources = async (pod: string): Promise<unknown> =>
    JSON.parse((await jsonpath(pod, '.status.containerStatuses[0].resources')) || '{}') as unknown;
  const resizeConditions = async (pod: string): Promise<Condition[]> =>
    ((JSON.parse(await jsonpath(pod, '.status.conditions')) as Condition[]) ?? []).filter((c) =>
      c.type.startsWith('PodResize'),
    );

  beforeAll(async () => {
    node = await startAgentNode({ node: NODE, podCIDR: '10.244.175.0/24' });
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it('reports running containers with their resources', async () => {
    await node.applyPod('r1', {
      command: ['sleep', '3600'],
      resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
      resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
    });
    await node.running('r1');
    await expect
      .poll(() => statusResources('r1'), {
        timeout: 20_000,
      })
      .toEqual({ requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } });
    expect(await cgroup('r1', 'cpu/cpu.cfs_quota_us')).toBe('20000');
  }, 90_000);

  it('changes cpu in place: the cgroup, the status, no restart', async () => {
    await resize('r1', 'c', { requests: { cpu: '150m' }, limits: { cpu: '300m' } });
    await expect.poll(() => cgroup('r1', 'cpu/cpu.cfs_quota_us'), { timeout: 20_000 }).toBe('30000');
    expect(await cgroup('r1', 'cpu/cpu.shares')).toBe('153');
    await expect
      .poll(() => statusResources('r1'), {
        timeout: 20_000,
      })
      .toEqual({ requests: { cpu: '150m', memory: '32Mi' }, limits: { cpu: '300m', memory: '64Mi' } });
    expect(await jsonpath('r1', '.status.containerStatuses[0].restartCount')).toBe('0');
    expect(await resizeConditions('r1')).toEqual([]);
  }, 60_000);

  it('restarts a container whose resizePolicy says so for memory, with the new limit', async () => {
    await resize('r1', 'c', { limits: { memory: '96Mi' } });
    await expect
      .poll(() => jsonpath('r1', '.status.containerStatuses[0].restartCount'), { timeout: 30_000 })
      .toBe('1');
    await node.running('r1');
    await expect
      .poll(() => cgroup('r1', 'memory/memory.limit_in_bytes'), { timeout: 20_000 })
      .toBe(String(96 * 1024 * 1024));
    // The cpu resize before stays.
    expect(await cgroup('r1', 'cpu/cpu.cfs_quota_us')).toBe('30000');
    const events = await k(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=r1,reason=Killing',
      '-o',
      'jsonpath={.items[*].message}',
    );
    expect(events).toContain('Container c resize requires restart');
  }, 90_000);

  it('holds a resize larger than the node as Infeasible, and one without room as Deferred until there is', async () => {
    const allocatable = await k('get', 'node', NODE, '-o', 'jsonpath={.status.allocatable.cpu}');
    const cores = Number(allocatable);
    expect(Number.isInteger(cores) && cores > 0, `node cpu ${allocatable}`).toBe(true);
    await node.applyPod('small', { command: ['sleep', '3600'], resources: { requests: { cpu: '100m' } } });
    await node.running('small');
    await resize('small', 'c', { requests: { cpu: String(cores * 10) } });
    await expect
      .poll(() => resizeConditions('small'), { timeout: 20_000 })
      .toMatchObject([
        {
          type: 'PodResizePending',
          status: 'True',
          reason: 'Infeasible',
          message: `Node didn't have enough capacity: cpu, requested: ${cores * 10_000}, capacity: ${cores * 1000}`,
        },
      ]);
    expect(await statusResources('small')).toEqual({
      requests: { cpu: '100m' },
    });
    // A restarted agent takes up its allocation where it was (kubelet's checkpoint): the resize
    // stays pending, and neither the cgroup nor the reported resources change.
    await node.restartAgent();
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect(await cgroup('small', 'cpu/cpu.shares')).toBe(String(Math.floor((100 * 1024) / 1000)));
    }
    expect(await statusResources('small')).toEqual({ requests: { cpu: '100m' } });
    expect((await resizeConditions('small')).map((c) => c.reason)).toEqual(['Infeasible']);

    // r1 holds 150m; a pod taking all but 400m of the rest leaves no room for 500m more.
    const bigMilli = cores * 1000 - 150 - 100 - 400;
    await node.applyPod('big', {
      command: ['sleep', '3600'],
      resources: { requests: { cpu: `${bigMilli}m` } },
    });
    await node.running('big');
    await resize('small', 'c', { requests: { cpu: '600m' } });
    await expect
      .poll(() => resizeConditions('small'), { timeout: 20_000 })
      .toMatchObject([
        {
          type: 'PodResizePending',
          reason: 'Deferred',
          message: `Node didn't have enough resource: cpu, requested: 600, used: ${bigMilli + 150}, capacity: ${cores * 1000}`,
        },
      ]);
    await k('delete', 'pod', 'big', '--wait=false');
    await expect.poll(() => resizeConditions('small'), { timeout: 30_000 }).toEqual([]);
    await expect
      .poll(() => statusResources('small'), {
        timeout: 20_000,
      })
      .toEqual({ requests: { cpu: '600m' } });
    expect(await cgroup('small', 'cpu/cpu.shares')).toBe(String(Math.floor((600 * 1024) / 1000)));
    expect(await jsonpath('small', '.status.containerStatuses[0].restartCount')).toBe('0');
  }, 150_000);
});
