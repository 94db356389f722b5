/**
 * The conformance suite on the embedded engine over memory-level, directly, through a prefix,
 * and through the encrypting store (a value-mapping wrapper: every value sealed on the way in
 * and opened on every way out, errors' current values and watch events included).
 */
import { randomBytes } from 'node:crypto';
import { encryptingStore } from '../../src/encryption/encrypting-store.js';
import { ProviderChain } from '../../src/encryption/providers.js';
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

storeSuite('memory store through encryptingStore (aescbc on every key)', {
  open: async () => {
    const chain = new ProviderChain([{ kind: 'aescbc', keys: [{ name: 'k1', secret: randomBytes(32) }] }]);
    return encryptingStore(await openMemoryStore(), new Map([['', chain]]), '/registry');
  },
  cleanup: async () => undefined,
});

isolationCases('memory store under two prefixes', false, async () => {
  const store = await openMemoryStore();
  return [store, store];
});
