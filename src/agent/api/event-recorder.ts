/**
 * kubelet's events as core/v1 Events (`source.component: kubelet`, `reportingComponent:
 * kubelet`, the involved pod with the container's fieldPath). An event repeating within 10 min
 * (same object, fieldPath, type, reason and message) bumps `count` and `lastTimestamp` instead
 * of making a new object, as client-go's legacy recorder aggregates. Writes never throw:
 * failures are logged.
 */
import { randomBytes } from 'node:crypto';
import type { Event, Pod } from '../../api/types/core-v1.js';
import { CORE_EVENTS, type Client } from '../../client/index.js';
import type { EventSink } from '../pod/events.js';

const DEDUP_MS = 10 * 60_000;

/** Records events through the API server. */
export class ApiEventRecorder implements EventSink {
  readonly #client: Client;
  readonly #host: string;
  readonly #recent = new Map<string, { name: string; namespace: string; count: number; at: number }>();
  #chain: Promise<void> = Promise.resolve();

  constructor(client: Client, host: string) {
    this.#client = client;
    this.#host = host;
  }

  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    // Events of one agent go out in order, one at a time.
    this.#chain = this.#chain
      .then(() => this.#write(pod, type, reason, message, fieldPath))
      .catch(() => undefined);
  }

  /** Waits for the events recorded so far to be written. */
  flush(): Promise<void> {
    return this.#chain;
  }

  async #write(pod: Pod, type: string, reason: string, message: string, fieldPath?: string): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    const key = [pod.metadata.uid, fieldPath ?? '', type, reason, message].join('\0');
    const now = new Date();
    const ts = now.toISOString().replace(/\.\d+Z$/, 'Z');
    const events = this.#client.resource<Event>(CORE_EVENTS);
    try {
      const prev = this.#recent.get(key);
      if (prev && now.getTime() - prev.at < DEDUP_MS) {
        prev.count++;
        prev.at = now.getTime();
        await events.patch(
          prev.name,
          { count: prev.count, lastTimestamp: ts },
          { type: 'merge', namespace: prev.namespace },
        );
        return;
      }
      const name = `${pod.metadata.name ?? ''}.${randomBytes(8).toString('hex')}`;
      await events.create({
        metadata: { name, namespace: ns },
        involvedObject: {
          kind: 'Pod',
          namespace: ns,
          name: pod.metadata.name ?? '',
          uid: pod.metadata.uid ?? '',
          apiVersion: 'v1',
          ...(pod.metadata.resourceVersion ? { resourceVersion: pod.metadata.resourceVersion } : {}),
          ...(fieldPath ? { fieldPath } : {}),
        },
        reason,
        message,
        source: { component: 'kubelet', host: this.#host },
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
        type,
        reportingComponent: 'kubelet',
        reportingInstance: this.#host,
      });
      this.#recent.set(key, { name, namespace: ns, count: 1, at: now.getTime() });
      if (this.#recent.size > 4096)
        for (const k of [...this.#recent.keys()].slice(0, 1024)) this.#recent.delete(k);
    } catch (err) {
      console.error(
        `agent: event ${reason} for pod ${ns}/${pod.metadata.name ?? ''}: ${(err as Error).message}`,
      );
    }
  }
}
