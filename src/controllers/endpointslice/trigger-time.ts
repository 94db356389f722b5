/**
 * The `endpoints.kubernetes.io/last-change-trigger-time` value, as kube's TriggerTimeTracker
 * computes it: the earliest time of the changes (pod readiness transitions, a new service) that
 * this sync is the first to see. Each controller keeps one tracker.
 */
import type { Pod, Service } from '../../api/types/core-v1.js';
import { podCondition } from '../pods/pod-state.js';

/** The annotation on Endpoints and EndpointSlices. */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

interface Seen {
  readonly service: string;
  readonly pods: Map<string, string>;
}

/** Remembers, per service, the trigger times of the state last synced. */
export class TriggerTimeTracker {
  readonly #seen = new Map<string, Seen>();

  /**
   * The trigger time of this sync of `service` over `pods`, or `undefined` when nothing changed
   * that carries a time. Records the state as seen.
   */
  compute(key: string, service: Service, pods: readonly Pod[]): string | undefined {
    const before = this.#seen.get(key);
    const now: Seen = { service: serviceTime(service), pods: new Map() };
    let min: string | undefined;
    const consider = (t: string): void => {
      if (t !== '' && (min === undefined || Date.parse(t) < Date.parse(min))) min = t;
    };
    for (const pod of pods) {
      const t = podTime(pod);
      now.pods.set(pod.metadata.uid ?? pod.metadata.name ?? '', t);
      if (before?.pods.get(pod.metadata.uid ?? pod.metadata.name ?? '') !== t) consider(t);
    }
    if (before === undefined || before.service !== now.service) consider(now.service);
    this.#seen.set(key, now);
    return min;
  }

  /** Forgets a deleted service. */
  forget(key: string): void {
    this.#seen.delete(key);
  }
}

function podTime(pod: Pod): string {
  return podCondition(pod, 'Ready')?.lastTransitionTime ?? pod.metadata.creationTimestamp ?? '';
}

function serviceTime(service: Service): string {
  return service.metadata.creationTimestamp ?? '';
}
