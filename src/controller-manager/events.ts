/**
 * The event recorders of one term of the controllers: one client `EventRecorder` (events.k8s.io/v1
 * with series aggregation) per controller client and component, closed (flushed) together when
 * the controllers stop.
 */
import { EventRecorder, type Client } from '../client/index.js';
import type { EventSink } from '../controllers/context.js';

/** Makes and closes recorders. */
export class EventRecorders {
  readonly #made = new Map<Client, Map<string, EventRecorder>>();

  constructor(private readonly onError: (message: string, err: unknown) => void) {}

  /** The recorder of `component` writing through `client` (one per pair). */
  for(client: Client, component: string): EventSink {
    let byComponent = this.#made.get(client);
    if (byComponent === undefined) {
      byComponent = new Map();
      this.#made.set(client, byComponent);
    }
    let recorder = byComponent.get(component);
    if (recorder === undefined) {
      recorder = new EventRecorder(client, { component, log: this.onError });
      byComponent.set(component, recorder);
    }
    return recorder;
  }

  /** Flushes and stops every recorder. */
  async close(): Promise<void> {
    const all = [...this.#made.values()].flatMap((m) => [...m.values()]);
    this.#made.clear();
    await Promise.all(all.map((r) => r.close()));
  }
}
