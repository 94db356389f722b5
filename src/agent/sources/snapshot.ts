/**
 * What one pod source (the static pod path, the manifest URL) last handed on. Each read of the
 * source, all its pods in its order, is applied as a whole, as kubelet's config merge takes a
 * source's snapshot: a duplicate name is refused (reported once while it stays), a new pod is
 * handed on, a pod no longer there is removed.
 */
import type { Pod } from '../../api/types/core-v1.js';
import { dropDuplicateNames, type StaticSource } from './manifest.js';
import type { StaticPodHandlers } from './static-files.js';

export class SourceSnapshot {
  readonly #type: StaticSource;
  readonly #handlers: StaticPodHandlers;
  /** uids of the pods handed on. */
  #known = new Set<string>();
  /** uids of the duplicates reported (again only once they went and came back). */
  #duplicates = new Set<string>();

  constructor(type: StaticSource, handlers: StaticPodHandlers) {
    this.#type = type;
    this.#handlers = handlers;
  }

  /** Applies the source's current pods. */
  apply(pods: readonly Pod[]): void {
    const duplicates = new Set<string>();
    const kept = dropDuplicateNames(pods, this.#type, (pod, message) => {
      const uid = pod.metadata.uid ?? '';
      duplicates.add(uid);
      if (!this.#duplicates.has(uid)) this.#handlers.invalid(pod, message);
    });
    this.#duplicates = duplicates;
    const seen = new Set<string>();
    for (const pod of kept) {
      const uid = pod.metadata.uid ?? '';
      seen.add(uid);
      if (!this.#known.has(uid)) this.#handlers.update(pod);
    }
    for (const uid of this.#known) if (!seen.has(uid)) this.#handlers.removed(uid);
    this.#known = seen;
  }
}
