/**
 * The pod garbage collector (kube's `pkg/controller/podgc`): a pass every `periodMs` (kube:
 * 20 s) applies the rules of `select.ts`. Pods are force-deleted (grace period 0) after being
 * marked Failed when not yet terminal; pods of a vanished node also get the `DisruptionTarget`
 * condition (`DeletionByPodGC`, "PodGC: node no longer exists").
 */
import type { Node, Pod, PodCondition } from '../../api/types/core-v1.js';
import {
  NODES,
  PODS,
  isNotFound,
  sleep,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext } from '../context.js';
import { rfc3339 } from '../shared/meta.js';
import { isPodTerminal } from '../pods/pod-state.js';
import { isOutOfService, missingNodes, terminatedOverThreshold, unscheduledTerminating } from './select.js';

/** Timing of the collector (kube's fixed values by default). */
export interface PodGcTiming {
  /** Between passes (kube's `gcCheckPeriod`: 20 s). */
  readonly periodMs: number;
  /** How long a node must stay missing before its pods go (kube's quarantine: 40 s). */
  readonly quarantineMs: number;
}

/** kube's timing. */
export const KUBE_TIMING: PodGcTiming = { periodMs: 20_000, quarantineMs: 40_000 };

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running pod garbage collector. */
export class PodGcController {
  readonly #ctx: ControllerContext;
  readonly #timing: PodGcTiming;
  readonly #pods: SharedInformer<Pod>;
  readonly #nodes: SharedInformer<Node>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #nodeClient: ResourceClient<Node>;
  readonly #now: () => number;
  /** Missing nodes and when they were first seen missing. */
  readonly #missingSince = new Map<string, number>();

  constructor(ctx: ControllerContext, timing: PodGcTiming = KUBE_TIMING, now: () => number = Date.now) {
    this.#ctx = ctx;
    this.#timing = timing;
    this.#now = now;
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#nodes = ctx.informers.informer<Node>(NODES);
    this.#podClient = ctx.client.resource<Pod>(PODS);
    this.#nodeClient = ctx.client.resource<Node>(NODES);
  }

  /** Runs a pass every period once the caches are synced, until `ctx.signal` aborts. */
  start(): void {
    const { signal } = this.#ctx;
    this.#ctx.informers
      .waitForSync(signal)
      .then(async () => {
        while (!signal.aborted) {
          try {
            await this.pass();
          } catch (err) {
            this.#ctx.log.error('pod garbage collection pass failed', err);
          }
          // The client's sleep drops its abort listener when it wakes (none piles up per pass).
          await sleep(this.#timing.periodMs, signal).catch(() => undefined);
        }
      })
      .catch((err: unknown) => {
        if (!signal.aborted) this.#ctx.log.error('the pod garbage collector stopped', err);
      });
  }

  /** One pass of every rule. */
  async pass(): Promise<void> {
    const pods = this.#pods.store.list();
    const threshold = this.#ctx.config.terminatedPodGcThreshold;
    for (const pod of terminatedOverThreshold(pods, threshold)) await this.#delete(pod);
    await this.#orphans(pods);
    for (const pod of unscheduledTerminating(pods)) await this.#delete(pod);
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp === undefined) continue;
      const node = this.#nodes.store.get(pod.spec?.nodeName ?? '');
      if (node !== undefined && isOutOfService(node)) await this.#delete(pod);
    }
  }

  async #orphans(pods: readonly Pod[]): Promise<void> {
    const nowMs = this.#now();
    const missing = missingNodes(pods, (n) => this.#nodes.store.get(n) !== undefined);
    for (const name of [...this.#missingSince.keys()])
      if (!missing.has(name)) this.#missingSince.delete(name);
    for (const name of missing) {
      const since = this.#missingSince.get(name);
      if (since === undefined) {
        this.#missingSince.set(name, nowMs);
        continue;
      }
      if (nowMs - since < this.#timing.quarantineMs) continue;
      // The cache may lag: ask the server before deleting anything.
      try {
        await this.#nodeClient.get(name);
        this.#missingSince.delete(name);
        continue;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      for (const pod of pods) {
        if (pod.spec?.nodeName !== name) continue;
        await this.#delete(pod, {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
          lastTransitionTime: rfc3339(nowMs),
        });
      }
      this.#missingSince.delete(name);
    }
  }

  /** Marks the pod Failed (with `condition`) unless terminal, then deletes it at once. */
  async #delete(pod: Pod, condition?: PodCondition): Promise<void> {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    try {
      if (!isPodTerminal(pod) || condition !== undefined) {
        const status: Record<string, unknown> = {};
        if (!isPodTerminal(pod)) status['phase'] = 'Failed';
        if (condition !== undefined) status['conditions'] = [condition];
        await this.#podClient.patch(
          name,
          { status },
          { type: 'strategic', subresource: 'status', namespace },
        );
      }
      await this.#podClient.delete(name, { namespace, gracePeriodSeconds: 0 });
      this.#ctx.log.info(`deleted pod ${namespace}/${name}`);
    } catch (err) {
      if (isNotFound(err)) return;
      this.#ctx.log.warn(`pod ${namespace}/${name}: delete failed: ${describe(err)}`);
    }
  }
}
