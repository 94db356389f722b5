/**
 * The node lifecycle controller (kube's `pkg/controller/nodelifecycle`) with taint-based
 * eviction (`pkg/controller/tainteviction`): the health pass of `monitor.ts` every
 * `--node-monitor-period`, and the per-node eviction work of `eviction.ts`.
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import type { Lease } from '../../api/types/coordination-v1.js';
import { LEASES, NODES, PODS, runWorkers } from '../../client/index.js';
import type { ControllerContext } from '../context.js';
import { ensureNodeIndex } from '../pods/node-index.js';
import { TaintEvictor } from './eviction.js';
import { NodeMonitor } from './monitor.js';

/** Starts both loops; they stop when `ctx.signal` aborts. */
export function startNodeLifecycle(ctx: ControllerContext, now: () => number = Date.now): void {
  const nodes = ctx.informers.informer<Node>(NODES);
  const leases = ctx.informers.informer<Lease>(LEASES);
  const pods = ctx.informers.informer<Pod>(PODS);
  ensureNodeIndex(pods.store);
  const podClient = ctx.client.resource<Pod>(PODS);
  const recorder = ctx.eventRecorder('node-controller');
  const monitor = new NodeMonitor({
    ctx,
    nodes,
    leases,
    pods,
    nodeClient: ctx.client.resource<Node>(NODES),
    podClient,
    recorder,
    now,
  });
  const evictor = new TaintEvictor({ nodes, pods, podClient, recorder, now });
  const { signal } = ctx;
  signal.addEventListener('abort', () => evictor.queue.shutDown(), { once: true });
  ctx.informers
    .waitForSync(signal)
    .then(async () => {
      const workers = runWorkers(evictor.queue, 1, (node) => evictor.sync(node));
      const period = Math.max(10, ctx.config.nodeMonitorPeriodMs);
      while (!signal.aborted) {
        await monitor.pass();
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, period);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(t);
              resolve();
            },
            { once: true },
          );
        });
      }
      await workers;
    })
    .catch((err: unknown) => {
      if (!signal.aborted) ctx.log.error('the node lifecycle loops stopped', err);
    });
}
