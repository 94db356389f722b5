/**
 * Storage keys, in kube-apiserver's layout below the `--etcd-prefix` (which the store already
 * carries): `/<storageResource>/<namespace>/<name>` for namespaced kinds and
 * `/<storageResource>/<name>` for cluster-scoped ones.
 */
import type { KeySpan } from '../../storage/interface.js';
import type { ResourceType } from '../registry/types.js';

/** The key of one object. `namespace` is ignored for cluster-scoped kinds. */
export function objectKey(type: ResourceType, namespace: string | undefined, name: string): string {
  return type.namespaced
    ? `/${type.storageResource}/${namespace ?? ''}/${name}`
    : `/${type.storageResource}/${name}`;
}

/**
 * The span of a collection: one namespace of a namespaced kind, or every object of the kind
 * (`namespace` undefined). The trailing `/` keeps `pods` from matching `podtemplates`, and a
 * namespace from matching another that extends its name.
 */
export function collectionSpan(type: ResourceType, namespace: string | undefined): KeySpan {
  return type.namespaced && namespace !== undefined
    ? { prefix: `/${type.storageResource}/${namespace}/` }
    : { prefix: `/${type.storageResource}/` };
}
