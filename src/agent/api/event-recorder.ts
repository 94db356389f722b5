/**
 * kubelet's events as core/v1 Events (`source.component: kubelet`, `reportingComponent:
 * kubelet`, the involved pod with the container's fieldPath). An event repeating within 10 min
 * (same object, fieldPath, type, reason and message) bumps `count` and `lastTimestamp` instead
 * of making a new object, as client-go's legacy recorder aggregates. Writes never throw:
 * failures are logged. Writes (creates and count updates) are held to `--event-qps` per second
 * with bursts of `--event-burst`, as kubelet's event client is (0 QPS: no limit); at most
 * {@link MAX_PENDING} wait, later ones are dropped with a log line, as kubelet's broadcaster
 * drops past its queue.
 */
import { randomBytes } from 'node:crypto';
import type { Event, Pod } from '../../api/types/core-v1.js';
import { CORE_EVENTS, TokenBucket, type Client } from '../../client/index.js';
import type { EventSink } from '../pod/events.js';

const DEDUP_MS = 10 * 60_000;
const MAX_PENDING = 1000;

/** `--event-qps` and `--event-burst`. */
export interface EventLimits {
  readonly qps: number;
  readonly burst: number;
}

/** Records events through the API server. */
export class ApiEventRecorder implements EventSink {
  readonly #client: Client;
  readonly #host: string;
  readonly #recent = new Map<string, { name: string; namespace: string; count: number; at: number }>();
  readonly #bucket: TokenBucket;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;

  constructor(client: Client, host: string, limits: EventLimits) {
    this.#client = client;
    this.#host = host;
    this.#bucket = new TokenBucket(limits.qps > 0 ? limits.qps : Infinity, limits.burst);
  }

  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    if (this.#pending >= MAX_PENDING) {
      console.error(
        `agent: dropping event ${reason} for pod ${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}: ${MAX_PENDING} events wait already`,
      );
      return;
    }
    this.#pending++;
    // Events of one agent go out in order, one at a time, each when the rate limit allows.
    this.#chain = this.#chain
      .then(() => this.#bucket.wait())
      .then(() => this.#write(pod, type, reason, message, fieldPath))
      .catch(() => undefined)
      .finally(() => this.#pending--);
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
