/**
 * A pod from a controller's template, as kube's `GetPodFromTemplate`: the template's labels,
 * annotations, finalizers and spec; `generateName` `<owner>-`; the owner's controller reference.
 */
import type { Pod, PodTemplateSpec } from '../../api/types/core-v1.js';
import type { OwnerReference } from '../../api/types/meta-v1.js';
import { cloneJson } from '../../api/object.js';

const NAME_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*-?$/;

/** The pod to create for `ownerName` in `namespace`. */
export function podFromTemplate(
  template: PodTemplateSpec | undefined,
  namespace: string,
  ownerName: string,
  controllerRef: OwnerReference,
): Pod {
  const meta = template?.metadata ?? {};
  const prefix = `${ownerName}-`;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: NAME_PREFIX.test(prefix) && prefix.length <= 253 ? prefix : ownerName,
      namespace,
      ownerReferences: [controllerRef],
    },
    spec: cloneJson(template?.spec ?? { containers: [] }),
  };
  if (meta.labels !== undefined) pod.metadata.labels = { ...meta.labels };
  if (meta.annotations !== undefined) pod.metadata.annotations = { ...meta.annotations };
  if (meta.finalizers !== undefined) pod.metadata.finalizers = [...meta.finalizers];
  return pod;
}
