/**
 * The pod garbage collector against a real server (short period and quarantine): terminated
 * pods over `--terminated-pod-gc-threshold` go oldest first, pods of a node that does not exist
 * go after the quarantine, terminating pods on an out-of-service node are force-deleted, and
 * running pods on live nodes stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { NAMESPACES, NODES, PODS, isNotFound, type ResourceClient } from '../../src/client/index.js';
import { podGcDescriptor } from '../../src/controllers/podgc/index.js';
import { terminatedOverThreshold } from '../../src/controllers/podgc/select.js';
import {
  abortListenerGrowth,
  rfc3339,
  startInfraEnv,
  until,
  watchingSignal,
  type InfraEnv,
} from './infra-env.js';

const NS = 'gc';
let env: InfraEnv;
let pods: ResourceClient<Pod>;
let nodes: ResourceClient<Node>;
const controller = watchingSignal(podGcDescriptor({ periodMs: 200, quarantineMs: 600 }));

async function pod(name: string, node: string, phase: string): Promise<void> {
  const p = await pods.create({
    metadata: { name, namespace: NS },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
  });
  await pods.updateStatus({ ...p, status: { phase } });
}

async function gone(name: string): Promise<boolean | undefined> {
  try {
    await pods.get(name, { namespace: NS });
    return undefined;
  } catch (err) {
    return isNotFound(err) ? true : undefined;
  }
}

beforeAll(async () => {
  env = await startInfraEnv([controller.descriptor], ['--terminated-pod-gc-threshold=2']);
  pods = env.client.resource<Pod>(PODS);
  nodes = env.client.resource<Node>(NODES);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
  await nodes.create({ metadata: { name: 'real' } });
}, 60_000);
afterAll(async () => env?.close());

describe('podgc', () => {
  it('deletes terminated pods over the threshold, oldest first', async () => {
    for (let i = 0; i < 4; i++) await pod(`done-${i}`, 'real', i % 2 === 0 ? 'Succeeded' : 'Failed');
    await until('two terminated pods left', async () => {
      const list = await pods.list({ namespace: NS });
      const done = list.items.filter((p) => p.metadata.name?.startsWith('done-'));
      return done.length === 2 ? done : undefined;
    });
    const left = (await pods.list({ namespace: NS })).items
      .map((p) => p.metadata.name)
      .filter((n) => n?.startsWith('done-'));
    expect(left.sort()).toEqual(['done-2', 'done-3']);
  });

  it('deletes the pods of a node that does not exist, after the quarantine, and keeps the others', async () => {
    await pod('orphan', 'ghost', 'Running');
    await pod('alive', 'real', 'Running');
    await until('orphan gone', () => gone('orphan'));
    expect((await pods.get('alive', { namespace: NS })).metadata.deletionTimestamp).toBeUndefined();
  });

  it('force-deletes terminating pods on a not-ready out-of-service node', async () => {
    const n = await nodes.create({
      metadata: { name: 'oos' },
      spec: {
        taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }],
      },
    });
    await nodes.updateStatus({
      ...n,
      status: {
        conditions: [
          { type: 'Ready', status: 'False', lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339() },
        ],
      },
    });
    await pod('stuck', 'oos', 'Running');
    await pods.delete('stuck', { namespace: NS, gracePeriodSeconds: 300 });
    await until('stuck gone', () => gone('stuck'));
    expect(env.errors).toEqual([]);
  });

  it('orders evicted pods first, then by age', () => {
    const mk = (name: string, created: string, reason?: string): Pod => ({
      metadata: { name, creationTimestamp: created },
      status: { phase: 'Failed', ...(reason === undefined ? {} : { reason }) },
    });
    const picked = terminatedOverThreshold(
      [
        mk('new', '2026-01-02T00:00:00Z'),
        mk('old', '2026-01-01T00:00:00Z'),
        mk('evicted', '2026-01-03T00:00:00Z', 'Evicted'),
      ],
      1,
    );
    expect(picked.map((p) => p.metadata.name)).toEqual(['evicted', 'old']);
    expect(terminatedOverThreshold(picked, 0)).toEqual([]);
  });

  it('leaves no abort listener behind from one pass to the next', async () => {
    // 2 s is ten passes at a 200 ms period.
    expect(await abortListenerGrowth(controller.signal(), 2_000)).toBeLessThanOrEqual(2);
  });
});
