/**
 * Killing a pod's running containers in kube's order (v1.33, sidecar containers): every kill
 * starts at once, so the Killing events and the preStop hooks run in parallel; the app containers
 * (and a regular init container still running) stop first; each sidecar's stop then waits for
 * them and for every sidecar after it in the spec, within what is left of its grace period, so
 * the sidecars stop last, in reverse order.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { ContainerInstance } from '../runtime/runtime.js';
import { containerSpec, killContainer, type LifecycleDeps } from './lifecycle.js';
import { isSidecar } from './sidecar.js';

/**
 * Kills the running containers among `containers` (see the module comment). `graceOverride`:
 * a grace period fixed by the caller (a pod's deletion), else each container's own.
 */
export async function killContainersInOrder(
  deps: LifecycleDeps,
  pod: Pod,
  containers: readonly ContainerInstance[],
  podIP: string,
  graceOverride?: number,
): Promise<void> {
  const running = containers.filter((c) => c.state === 'CONTAINER_RUNNING');
  const sidecarNames = (pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => c.name ?? '');
  const opts = graceOverride === undefined ? {} : { graceOverride };
  const kill = (c: ContainerInstance, turn?: Promise<unknown>): Promise<void> =>
    killContainer(deps, pod, containerSpec(pod, c.name), c, podIP, { ...opts, ...(turn ? { turn } : {}) });
  const kills = running.filter((c) => !sidecarNames.includes(c.name)).map((c) => kill(c));
  // The last sidecar waits for the others; each earlier one for the kill of the one after it.
  let turn: Promise<unknown> = Promise.allSettled(kills);
  for (const name of [...sidecarNames].reverse()) {
    for (const c of running.filter((x) => x.name === name)) {
      const k = kill(c, turn);
      kills.push(k);
      turn = Promise.allSettled([turn, k]);
    }
  }
  await Promise.all(kills);
}
