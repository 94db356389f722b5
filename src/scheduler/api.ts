/**
 * The scheduler's writes through the client library: bindings (`pods/binding`), PV and PVC
 * updates of the volume binder, preemption's victim deletions, status patches and events (one
 * recorder per profile, reporting as the profile's scheduler name, as kube's).
 *
 * Events go through a client of their own at the configured client QPS and burst, as
 * kube-scheduler's event clientset has a rate limiter of its own built from the same
 * `clientConnection` settings: events neither wait for the bindings' tokens nor take them.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../api/types/core-v1.js';
import {
  EventRecorder,
  PERSISTENT_VOLUME_CLAIMS,
  PERSISTENT_VOLUMES,
  PODS,
  type Client,
} from '../client/index.js';
import { DEFAULT_SCHEDULER_NAME } from './config.js';
import type { PodSchedulingCondition, SchedulerApi } from './framework/types.js';

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Where the scheduler's events are written, and how fast. */
export interface EventWrites {
  /** The events' client (its own rate limit is not used: the recorders limit the events). */
  readonly client: Client;
  /** Event writes per second and burst: the client connection's QPS and burst. */
  readonly qps: number;
  readonly burst: number;
}

/** {@link SchedulerApi} over a client. */
export class ClientSchedulerApi implements SchedulerApi {
  readonly #recorders = new Map<string, EventRecorder>();

  constructor(
    private readonly client: Client,
    private readonly events: EventWrites,
    private readonly log: (message: string, err: unknown) => void,
  ) {}

  #recorder(pod: Pod): EventRecorder {
    const name = pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME;
    let r = this.#recorders.get(name);
    if (r === undefined) {
      const { client, qps, burst } = this.events;
      r = new EventRecorder(client, { component: name, qps, burst, log: this.log });
      this.#recorders.set(name, r);
    }
    return r;
  }

  async bind(pod: Pod, nodeName: string): Promise<void> {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    await this.client.resource<Pod>(PODS).createSubresource(
      name,
      'binding',
      {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace: ns, uid: pod.metadata.uid },
        target: { kind: 'Node', name: nodeName },
      },
      { namespace: ns },
    );
  }

  updatePv(pv: PersistentVolume): Promise<PersistentVolume> {
    return this.client.resource<PersistentVolume>(PERSISTENT_VOLUMES).update(pv);
  }

  updatePvc(pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim> {
    return this.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS).update(pvc, {
      namespace: pvc.metadata.namespace ?? '',
    });
  }

  async evictVictim(victim: Pod, _preemptor: Pod, message: string): Promise<void> {
    const pods = this.client.resource<Pod>(PODS);
    const ns = victim.metadata.namespace ?? '';
    const name = victim.metadata.name ?? '';
    const condition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'PreemptionByScheduler',
      message,
      lastTransitionTime: now(),
    };
    await pods.patch(
      name,
      { status: { conditions: [condition] } },
      { type: 'strategic', subresource: 'status', namespace: ns },
    );
    await pods.delete(name, { namespace: ns, preconditions: { uid: victim.metadata.uid ?? '' } });
  }

  async setNominatedNode(pod: Pod, nodeName: string): Promise<void> {
    await this.client
      .resource<Pod>(PODS)
      .patch(
        pod.metadata.name ?? '',
        { status: { nominatedNodeName: nodeName === '' ? null : nodeName } },
        { type: 'merge', subresource: 'status', namespace: pod.metadata.namespace ?? '' },
      );
  }

  async patchPodScheduled(
    pod: Pod,
    c: PodSchedulingCondition,
    nominatedNodeName: string | undefined,
  ): Promise<void> {
    const status: Record<string, unknown> = {
      conditions: [
        {
          type: 'PodScheduled',
          status: c.status,
          reason: c.reason,
          message: c.message,
          lastProbeTime: null,
          lastTransitionTime: now(),
        },
      ],
    };
    if (nominatedNodeName !== undefined)
      status['nominatedNodeName'] = nominatedNodeName === '' ? null : nominatedNodeName;
    await this.client
      .resource<Pod>(PODS)
      .patch(
        pod.metadata.name ?? '',
        { status },
        { type: 'strategic', subresource: 'status', namespace: pod.metadata.namespace ?? '' },
      );
  }

  event(regarding: Pod, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.#recorder(regarding).event(
      { apiVersion: 'v1', kind: 'Pod', ...regarding },
      type,
      reason,
      action,
      note,
    );
  }

  /** Flushes and stops the event recorders. */
  async close(): Promise<void> {
    await Promise.all([...this.#recorders.values()].map((r) => r.close()));
  }
}
