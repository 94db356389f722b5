/**
 * The conformance suite on the embedded engine over memory-level, directly and through a prefix.
 */
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { prefixed } from '../../storage/prefixed.js';
import { storeSuite } from './store.case.js';
import { isolationCases } from './support/cases/isolation.case.js';

storeSuite('memory store', {
  open: () => openMemoryStore(),
  cleanup: async () => undefined,
});

storeSuite('memory store through prefixed(/registry)', {
  open: async () => prefixed(await openMemoryStore(), '/registry'),
  cleanup: async () => undefined,
});

isolationCases('memory store under two prefixes', async () => {
  const store = await openMemoryStore();
  return [store, store];
});
