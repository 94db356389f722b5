/**
 * Where the pod workers send kubelet's events. The API-backed recorder writes core/v1 Events;
 * standalone, they go to the log.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** kubelet's event reasons the agent uses. */
export const Reasons = {
  Pulling: 'Pulling',
  Pulled: 'Pulled',
  Failed: 'Failed',
  BackOff: 'BackOff',
  Created: 'Created',
  Started: 'Started',
  Killing: 'Killing',
  FailedCreatePodSandBox: 'FailedCreatePodSandBox',
  SandboxChanged: 'SandboxChanged',
  InspectFailed: 'InspectFailed',
  Unhealthy: 'Unhealthy',
  ProbeWarning: 'ProbeWarning',
  FailedPostStartHook: 'FailedPostStartHook',
  FailedPreStopHook: 'FailedPreStopHook',
  LifecycleHTTPFallback: 'LifecycleHTTPFallback',
  DeadlineExceeded: 'DeadlineExceeded',
} as const;

/** Receives events about pods; `fieldPath` is `spec.containers{name}` for a container's events. */
export interface EventSink {
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void;
}

/** An event sink writing one log line per event. */
export class LogEventSink implements EventSink {
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    console.log(
      `agent: event ${type} ${reason} pod=${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}${fieldPath ? ` ${fieldPath}` : ''}: ${message}`,
    );
  }
}

/** The fieldPath of a container's events, as kubelet writes it. */
export function containerFieldPath(pod: Pod, name: string): string {
  const init = (pod.spec?.initContainers ?? []).some((c) => c.name === name);
  return init ? `spec.initContainers{${name}}` : `spec.containers{${name}}`;
}
