/**
 * kubelet's status manager in small: pod statuses go to the API server as merge patches of the
 * `status` subresource, one write in flight per pod, the latest status winning, unchanged ones
 * skipped; each write names the pod's uid, so it never lands on another pod that took the name.
 * A pod whose containers are all gone after its deletion is then deleted for good
 * (grace period 0, preconditioned on its uid) once its final status is written, as kubelet does.
 */
import type { Pod, PodStatus } from '../../api/types/core-v1.js';
import { PODS, isInvalid, isNotFound, type ApiStatusError, type Client } from '../../client/index.js';

interface Entry {
  namespace: string;
  name: string;
  uid: string;
  want: PodStatus;
  sent: string;
  writing: boolean;
  /** A retry after a failed write is pending: no write before it. */
  retry: ReturnType<typeof setTimeout> | undefined;
  /** Callers of {@link StatusManager.terminated} waiting for the write in flight or the retry. */
  waiters: (() => void)[];
}

/** Wakes whoever waits on `e` (they look at it again). */
function wake(e: Entry): void {
  const waiters = e.waiters;
  e.waiters = [];
  for (const w of waiters) w();
}

/**
 * True for the server's refusal of a status naming another uid than the stored pod's: the pod
 * was deleted and another one created under its name (kubelet then gives up its write too).
 */
function otherPodNow(err: unknown): boolean {
  return (
    isInvalid(err) &&
    (err as ApiStatusError).status.details?.causes?.some((c) => c.field === 'metadata.uid') === true
  );
}

/** The pause after a failed write before the next try. */
const RETRY_MS = 1000;

/** Writes pod statuses. */
export class StatusManager {
  readonly #client: Client;
  readonly #entries = new Map<string, Entry>();
  #stopped = false;

  constructor(client: Client) {
    this.#client = client;
  }

  /** Records a pod's new status; writes it unless it is what was last written. */
  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid ?? '';
    let e = this.#entries.get(uid);
    if (!e) {
      e = {
        namespace: pod.metadata.namespace ?? '',
        name: pod.metadata.name ?? '',
        uid,
        want: status,
        sent: '',
        writing: false,
        retry: undefined,
        waiters: [],
      };
      this.#entries.set(uid, e);
    }
    e.want = status;
    void this.#flush(e);
  }

  /** Stops writing: pending retries are dropped (the agent is shutting down). */
  stop(): void {
    this.#stopped = true;
    for (const e of this.#entries.values()) {
      clearTimeout(e.retry);
      wake(e);
    }
  }

  /** Resolves once `e`'s latest status is written (or the pod is gone, or writing stopped). */
  async #written(e: Entry): Promise<void> {
    while (!this.#stopped && this.#entries.get(e.uid) === e && JSON.stringify(e.want) !== e.sent) {
      if (e.writing || e.retry !== undefined) await new Promise<void>((r) => e.waiters.push(r));
      else await this.#flush(e);
    }
  }

  async #flush(e: Entry): Promise<void> {
    if (e.writing || e.retry !== undefined || this.#stopped) return;
    const text = JSON.stringify(e.want);
    if (text === e.sent) return;
    e.writing = true;
    try {
      await this.#client
        .resource<Pod>(PODS)
        .patch(
          e.name,
          { metadata: { uid: e.uid }, status: e.want },
          { type: 'merge', subresource: 'status', namespace: e.namespace },
        );
      e.sent = text;
    } catch (err) {
      if (isNotFound(err) || otherPodNow(err)) {
        // The pod is gone, or another pod took its name: its status has nowhere to go.
        this.#entries.delete(e.uid);
      } else {
        console.error(`agent: status of pod ${e.namespace}/${e.name}: ${(err as Error).message}`);
        e.retry = setTimeout(() => {
          e.retry = undefined;
          wake(e);
          void this.#flush(e);
        }, RETRY_MS);
        e.retry.unref();
      }
    } finally {
      e.writing = false;
      wake(e);
    }
    // A newer status arrived while this one was written: write it (a failure waits for its retry).
    if (this.#entries.get(e.uid) === e && JSON.stringify(e.want) !== e.sent) void this.#flush(e);
  }

  /**
   * The pod has nothing left on the node: its final status (terminal phase, containers
   * terminated) is written, then its object deleted for good, as kubelet deletes a pod only once
   * the API has its final status (a controller holding a finalizer reads the outcome there).
   */
  async terminated(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const e = this.#entries.get(uid);
    if (e !== undefined) await this.#written(e);
    this.#entries.delete(uid);
    if (!pod.metadata.deletionTimestamp) return;
    try {
      await this.#client.resource<Pod>(PODS).delete(pod.metadata.name ?? '', {
        namespace: pod.metadata.namespace ?? '',
        gracePeriodSeconds: 0,
        preconditions: { uid },
      });
    } catch (err) {
      if (!isNotFound(err))
        console.error(
          `agent: deleting pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}: ${(err as Error).message}`,
        );
    }
  }
}
