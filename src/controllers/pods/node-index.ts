/**
 * Pods by `spec.nodeName` in a shared pod informer's store: one index, added by whichever
 * controller asks first (an index name may be added only once per store).
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { Indexer } from '../../client/index.js';

/** The index name. */
export const NODE_NAME_INDEX = 'spec.nodeName';

/** Adds the index unless the store has it already. */
export function ensureNodeIndex(store: Indexer<Pod>): void {
  try {
    store.addIndex(NODE_NAME_INDEX, (p) => [p.spec?.nodeName ?? '']);
  } catch {
    // Another controller of this process added it first.
  }
}

/** The pods bound to `node` (the index must exist). */
export function podsOnNode(store: Indexer<Pod>, node: string): Pod[] {
  return store.byIndex(NODE_NAME_INDEX, node);
}
