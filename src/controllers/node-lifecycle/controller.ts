/**
 * The node lifecycle controller (kube's `pkg/controller/nodelifecycle`) with taint-based
 * eviction (`pkg/controller/tainteviction`): the health pass of `monitor.ts` every
 * `--node-monitor-period`, the per-node eviction work of `eviction.ts`, and, on every added or
 * changed node, its NoSchedule taints brought in line with its conditions at once (kube's
 * `nodeUpdateQueue` and `doNoScheduleTaintingPass`), so a node that turns Ready is schedulable
 * without waiting for the next health pass.
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import type { Lease } from '../../api/types/coordination-v1.js';
import { LEASES, NODES, PODS, runWorkers, sleep, WorkQueue } from '../../client/index.js';
import type { ControllerContext } from '../context.js';
import { ensureNodeIndex } from '../pods/node-index.js';
import { TaintEvictor } from './eviction.js';
import { NodeMonitor } from './monitor.js';
import { reconcileTaints } from './taints.js';
import { rfc3339 } from '../shared/meta.js';

/** Starts both loops; they stop when `ctx.signal` aborts. */
export function startNodeLifecycle(ctx: ControllerContext, now: () => number = Date.now): void {
  const nodes = ctx.informers.informer<Node>(NODES);
  const leases = ctx.informers.informer<Lease>(LEASES);
  const pods = ctx.informers.informer<Pod>(PODS);
  ensureNodeIndex(pods.store);
  const podClient = ctx.client.resource<Pod>(PODS);
  const recorder = ctx.eventRecorder('node-controller');
  const nodeClient = ctx.client.resource<Node>(NODES);
  const monitor = new NodeMonitor({
    ctx,
    nodes,
    leases,
    pods,
    nodeClient,
    podClient,
    recorder,
    now,
  });
  const evictor = new TaintEvictor({ nodes, pods, podClient, recorder, now });
  const noScheduleQueue = new WorkQueue<string>({ name: 'node-no-schedule-taints' });
  const nodeChanged = (n: Node): void => noScheduleQueue.add(n.metadata.name ?? '');
  nodes.addHandler({ add: nodeChanged, update: (_old, cur) => nodeChanged(cur) });
  const noScheduleTaints = async (name: string): Promise<void> => {
    const node = nodes.store.get(name);
    if (node === undefined) return;
    const taints = reconcileTaints(node, rfc3339(now()), 'noSchedule');
    if (taints !== undefined) await nodeClient.update({ ...node, spec: { ...(node.spec ?? {}), taints } });
  };
  const { signal } = ctx;
  signal.addEventListener(
    'abort',
    () => {
      evictor.queue.shutDown();
      noScheduleQueue.shutDown();
    },
    { once: true },
  );
  ctx.informers
    .waitForSync(signal)
    .then(async () => {
      const workers = runWorkers(evictor.queue, 1, (node) => evictor.sync(node));
      const tainters = runWorkers(noScheduleQueue, 1, noScheduleTaints);
      const period = Math.max(10, ctx.config.nodeMonitorPeriodMs);
      while (!signal.aborted) {
        await monitor.pass();
        // The client's sleep drops its abort listener when it wakes: one left per pass would
        // pile up on the signal for as long as the controller runs.
        await sleep(period, signal).catch(() => undefined);
      }
      await Promise.all([workers, tainters]);
    })
    .catch((err: unknown) => {
      if (!signal.aborted) ctx.log.error('the node lifecycle loops stopped', err);
    });
}
