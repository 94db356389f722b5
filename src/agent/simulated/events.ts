/**
 * The few events simulated nodes write (bad annotations, a full pod CIDR), as kubelet's recorder
 * would: `events.k8s.io/v1`, reporting controller `kubelet`, instance the node. A small writer of
 * its own because the client library's EventRecorder (series aggregation) is not there yet; these
 * events are rare, one per pod at most, so aggregation does not matter here. Never throws.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { Event } from '../../api/types/events-v1.js';
import { EVENTS, type Client, type ResourceClient } from '../../client/index.js';

/** Writes pod events for simulated nodes. */
export class PodEvents {
  readonly #api: ResourceClient<Event>;
  readonly #log: (line: string) => void;

  constructor(client: Client, log: (line: string) => void) {
    this.#api = client.resource<Event>(EVENTS);
    this.#log = log;
  }

  /** Records an event about `pod` from the kubelet of `node`; failures are logged. */
  emit(node: string, pod: Pod, type: 'Normal' | 'Warning', reason: string, note: string): void {
    const now = new Date();
    const m = pod.metadata;
    const event: Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `${m.name ?? 'pod'}.${now.getTime().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`,
        namespace: m.namespace ?? 'default',
      },
      eventTime: now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
      reportingController: 'kubelet',
      reportingInstance: node,
      action: 'Sync',
      reason,
      note,
      type,
      regarding: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: m.name ?? '',
        namespace: m.namespace ?? '',
        uid: m.uid ?? '',
        ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
      },
    };
    this.#api.create(event).catch((err: unknown) => {
      this.#log(
        `simulated node ${node}: event ${reason} for pod ${m.namespace ?? ''}/${m.name ?? ''} not written: ${String(err)}`,
      );
    });
  }
}
