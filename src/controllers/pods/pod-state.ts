/**
 * What controllers read from a pod's status, as kube's `podutil` answers it: readiness, the
 * terminal phases, and a service port's target resolved against the pod's containers.
 */
import type { Pod, PodCondition, ServicePort } from '../../api/types/core-v1.js';

/** The pod's condition of `type`, if it has one. */
export function podCondition(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** True when the pod's Ready condition is True (kube's `IsPodReady`). */
export function isPodReady(pod: Pod): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/** True for the phases a pod never leaves: Succeeded and Failed. */
export function isPodTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** True once deletion has started (`metadata.deletionTimestamp` set). */
export function isPodTerminating(pod: Pod): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

/** The pod's IPs, `status.podIPs` first, else `status.podIP`. */
export function podIPs(pod: Pod): string[] {
  const listed = (pod.status?.podIPs ?? []).map((p) => p.ip ?? '').filter((ip) => ip !== '');
  if (listed.length > 0) return listed;
  const one = pod.status?.podIP ?? '';
  return one === '' ? [] : [one];
}

/**
 * Whether a pod belongs in a service's endpoints (kube's `ShouldPodBeInEndpoints`): not terminal,
 * has an IP, and, unless `includeTerminating`, is not being deleted.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (podIPs(pod).length === 0) return false;
  if (!includeTerminating && isPodTerminating(pod)) return false;
  return true;
}

/**
 * The container port a service port targets on this pod (kube's `FindPort`): a number is taken
 * as is; a name is looked up among the containers' ports of the same protocol. `undefined` when
 * a named port is not found or the number is out of range.
 */
export function findPort(pod: Pod, port: ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  const protocol = port.protocol ?? 'TCP';
  if (typeof target === 'number') return target >= 1 && target <= 65535 ? target : undefined;
  if (target === undefined) return undefined;
  if (/^[0-9]+$/.test(target)) {
    const n = Number(target);
    return n >= 1 && n <= 65535 ? n : undefined;
  }
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
  }
  return undefined;
}
