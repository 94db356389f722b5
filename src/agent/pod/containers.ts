/** A pod's containers of every kind, for lookups by name or by what they reference. */
import type { Container, Pod } from '../../api/types/core-v1.js';

/**
 * Init, app and ephemeral containers, in that order. Ephemeral containers share
 * EphemeralContainerCommon's fields with containers; `targetContainerName` is theirs alone.
 */
export function allContainers(pod: Pod): Container[] {
  return [
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.containers ?? []),
    ...((pod.spec?.ephemeralContainers ?? []) as Container[]),
  ];
}
