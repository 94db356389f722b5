/**
 * Taint-based eviction, as kube's taint eviction controller: a pod on a node with NoExecute
 * taints it does not tolerate is deleted at once; one tolerating them all for a while is
 * deleted that long after the controller first saw it under the taints (the smallest
 * `tolerationSeconds`); one tolerating them forever stays. Before deleting, the pod gets the
 * `DisruptionTarget` condition (`DeletionByTaintManager`) and a `TaintManagerEviction` event.
 * Work is per node: node and pod changes enqueue the node.
 */
import type { EventSink } from '../context.js';
import type { Node, Pod } from '../../api/types/core-v1.js';
import {
  WorkQueue,
  defaultControllerRateLimiter,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { keyOf, rfc3339, typed } from '../shared/meta.js';
import { podsOnNode } from '../pods/node-index.js';
import { isPodTerminal } from '../pods/pod-state.js';
import { evictionDelay } from './tolerations.js';

/** What the evictor reads and writes. */
export interface EvictorDeps {
  readonly nodes: SharedInformer<Node>;
  readonly pods: SharedInformer<Pod>;
  readonly podClient: ResourceClient<Pod>;
  readonly recorder: EventSink;
  readonly now: () => number;
}

/** The per-node eviction work. */
export class TaintEvictor {
  readonly #d: EvictorDeps;
  readonly queue = new WorkQueue<string>({
    rateLimiter: defaultControllerRateLimiter(),
    name: 'taint-eviction',
  });
  /** When each pod (by key) was first seen under NoExecute taints it tolerates for a while. */
  readonly #since = new Map<string, number>();

  constructor(deps: EvictorDeps) {
    this.#d = deps;
    const nodeChanged = (n: Node): void => this.queue.add(n.metadata.name ?? '');
    deps.nodes.addHandler({
      add: nodeChanged,
      update: (old, cur) => {
        if (JSON.stringify(old.spec?.taints ?? []) !== JSON.stringify(cur.spec?.taints ?? []))
          nodeChanged(cur);
      },
    });
    const podChanged = (p: Pod): void => {
      const node = p.spec?.nodeName ?? '';
      if (node !== '') this.queue.add(node);
    };
    deps.pods.addHandler({ add: podChanged, update: (_o, p) => podChanged(p) });
  }

  /** Evicts what is due on one node; schedules the node again for the next due pod. */
  async sync(nodeName: string): Promise<void> {
    const node = this.#d.nodes.store.get(nodeName);
    const taints = (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
    const pods = podsOnNode(this.#d.pods.store, nodeName);
    const nowMs = this.#d.now();
    let next: number | undefined;
    let failure: Error | undefined;
    for (const pod of pods) {
      const key = keyOf(pod.metadata);
      if (taints.length === 0 || isPodTerminal(pod) || pod.metadata.deletionTimestamp !== undefined) {
        if (this.#since.delete(key) && taints.length === 0) {
          this.#d.recorder.event(
            typed(pod, 'v1', 'Pod'),
            'Normal',
            'TaintManagerEviction',
            'TaintManagerEviction',
            `Cancelling deletion of Pod ${key}`,
          );
        }
        continue;
      }
      const delay = evictionDelay(taints, pod.spec?.tolerations ?? []);
      if (delay === 'never') {
        this.#since.delete(key);
        continue;
      }
      let due = nowMs;
      if (delay !== 'now') {
        const since = this.#since.get(key) ?? nowMs;
        this.#since.set(key, since);
        due = since + delay;
      }
      if (due > nowMs) {
        next = Math.min(next ?? Infinity, due - nowMs);
        continue;
      }
      try {
        await this.#evict(pod, nowMs);
        this.#since.delete(key);
      } catch (err) {
        failure = err instanceof Error ? err : new Error(JSON.stringify(err));
      }
    }
    if (next !== undefined) this.queue.addAfter(nodeName, next);
    if (failure !== undefined) throw failure;
  }

  async #evict(pod: Pod, nowMs: number): Promise<void> {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    this.#d.recorder.event(
      typed(pod, 'v1', 'Pod'),
      'Normal',
      'TaintManagerEviction',
      'TaintManagerEviction',
      `Marking for deletion Pod ${namespace}/${name}`,
    );
    try {
      const has =
        pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True') === true;
      if (!has) {
        await this.#d.podClient.patch(
          name,
          {
            status: {
              conditions: [
                {
                  type: 'DisruptionTarget',
                  status: 'True',
                  reason: 'DeletionByTaintManager',
                  message: 'Taint manager: deleting due to NoExecute taint',
                  lastTransitionTime: rfc3339(nowMs),
                },
              ],
            },
          },
          { type: 'strategic', subresource: 'status', namespace },
        );
      }
      await this.#d.podClient.delete(name, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
