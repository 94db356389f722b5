/**
 * kubelet's status manager in small: pod statuses go to the API server as merge patches of the
 * `status` subresource, one write in flight per pod, the latest status winning, unchanged ones
 * skipped. A pod whose containers are all gone after its deletion is then deleted for good
 * (grace period 0, preconditioned on its uid), as kubelet does.
 */
import type { Pod, PodStatus } from '../../api/types/core-v1.js';
import { PODS, isNotFound, type Client } from '../../client/index.js';

interface Entry {
  namespace: string;
  name: string;
  uid: string;
  want: PodStatus;
  sent: string;
  writing: boolean;
}

/** Writes pod statuses. */
export class StatusManager {
  readonly #client: Client;
  readonly #entries = new Map<string, Entry>();

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
      };
      this.#entries.set(uid, e);
    }
    e.want = status;
    void this.#flush(e);
  }

  async #flush(e: Entry): Promise<void> {
    if (e.writing) return;
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
      if (isNotFound(err)) {
        this.#entries.delete(e.uid);
      } else {
        console.error(`agent: status of pod ${e.namespace}/${e.name}: ${(err as Error).message}`);
        setTimeout(() => void this.#flush(e), 1000).unref();
      }
    } finally {
      e.writing = false;
    }
    if (this.#entries.get(e.uid) === e && JSON.stringify(e.want) !== e.sent) void this.#flush(e);
  }

  /** The pod has nothing left on the node: delete its object for good. */
  async terminated(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? '';
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
