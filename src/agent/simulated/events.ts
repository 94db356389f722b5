/**
 * The events simulated nodes write (bad annotations, a full pod CIDR), as each node's kubelet
 * would: through the client's {@link EventRecorder} with component `kubelet` and the node as
 * host (reportingInstance). Recorders are made on a node's first event only, so 1,000 quiet
 * nodes hold none.
 */
import type { Pod } from '../../api/types/core-v1.js';
import { EventRecorder, type Client } from '../../client/index.js';

/** One event recorder per simulated node that has something to say. */
export class NodeEventRecorders {
  readonly #client: Client;
  readonly #log: (line: string) => void;
  readonly #recorders = new Map<string, EventRecorder>();

  constructor(client: Client, log: (line: string) => void) {
    this.#client = client;
    this.#log = log;
  }

  /** Records an event about `pod` from the kubelet of `node`; never throws. */
  emit(node: string, pod: Pod, type: 'Normal' | 'Warning', reason: string, note: string): void {
    let recorder = this.#recorders.get(node);
    if (recorder === undefined) {
      recorder = new EventRecorder(this.#client, {
        component: 'kubelet',
        host: node,
        log: (message, err) => this.#log(`simulated node ${node}: ${message}: ${String(err)}`),
      });
      this.#recorders.set(node, recorder);
    }
    // Informer objects from a list carry no kind; the event's reference needs it.
    recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, type, reason, 'Sync', note);
  }

  /** Flushes and stops every recorder. */
  async close(): Promise<void> {
    await Promise.all([...this.#recorders.values()].map((r) => r.close()));
    this.#recorders.clear();
  }
}
