/** Sidecars: init containers with `restartPolicy: Always` (kube's restartable init containers). */
import type { Container, Pod } from '../../api/types/core-v1.js';

/** True for a sidecar: an init container whose own restart policy is Always. */
export function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The pod's sidecars, in spec order. */
export function sidecarsOf(pod: Pod): Container[] {
  return (pod.spec?.initContainers ?? []).filter(isSidecar);
}
