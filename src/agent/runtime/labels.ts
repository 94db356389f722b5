/**
 * The labels and annotations kubelet puts on every sandbox and container it makes. The agent
 * finds its own objects by them: a sandbox or container without `io.kubernetes.pod.uid` is not
 * ours and is never listed, stopped or removed.
 */
import type { Pod } from '../../api/types/core-v1.js';

export const POD_UID = 'io.kubernetes.pod.uid';
export const POD_NAME = 'io.kubernetes.pod.name';
export const POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const CONTAINER_NAME = 'io.kubernetes.container.name';
/** Annotation: the container's restart count when it was created. */
export const RESTART_COUNT = 'io.kubernetes.container.restartCount';
/** Annotation: the pod's termination grace period, for stopping a container of a gone pod. */
export const POD_GRACE = 'io.kubernetes.pod.terminationGracePeriod';
/** Annotation: "init" or "regular": which list of the spec the container came from. */
export const CONTAINER_TYPE = 'io.kubernetes.container.type';
/** Annotation: the container's termination message path. */
export const TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
/** Annotation: the container's termination message policy. */
export const TERMINATION_MESSAGE_POLICY = 'io.kubernetes.container.terminationMessagePolicy';

/** The labels of a pod's sandbox: the pod's own labels plus kube's identity labels. */
export function sandboxLabels(pod: Pod): Record<string, string> {
  return {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME]: pod.metadata.name ?? '',
    [POD_NAMESPACE]: pod.metadata.namespace ?? '',
    [POD_UID]: pod.metadata.uid ?? '',
  };
}

/** The labels of one container of a pod. */
export function containerLabels(pod: Pod, containerName: string): Record<string, string> {
  return {
    [POD_NAME]: pod.metadata.name ?? '',
    [POD_NAMESPACE]: pod.metadata.namespace ?? '',
    [POD_UID]: pod.metadata.uid ?? '',
    [CONTAINER_NAME]: containerName,
  };
}

/** True when a sandbox or container carries the identity labels the agent puts on its own. */
export function isOurs(labels: Readonly<Record<string, string>> | undefined): boolean {
  return !!labels && !!labels[POD_UID] && !!labels[POD_NAME] && !!labels[POD_NAMESPACE];
}
