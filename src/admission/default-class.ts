/** The default class among StorageClasses or IngressClasses (kube's `GetDefaultClass`). */
import type { KubeObject } from '../api/object.js';

/**
 * The class `isDefault` marks; with several, the newest (kube ≥ 1.28), ties broken by name.
 */
export function pickDefault(
  classes: readonly KubeObject[],
  isDefault: (c: KubeObject) => boolean,
): KubeObject | undefined {
  const defaults = classes.filter(isDefault);
  defaults.sort((x, y) => {
    const tx = x.metadata.creationTimestamp ?? '';
    const ty = y.metadata.creationTimestamp ?? '';
    if (tx !== ty) return tx < ty ? 1 : -1;
    return (x.metadata.name ?? '').localeCompare(y.metadata.name ?? '');
  });
  return defaults[0];
}
