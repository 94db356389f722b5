/**
 * The storage conformance suite: one set of tests every backend runs unchanged, directly and
 * through `prefixed()`. Not run directly; each backend's `*.test.ts` calls {@link storeSuite}.
 *
 * Tests branch only on `store.capabilities` (and on what the factory can do: reopen, a fresh
 * store), never on the backend's class. Example tests pin every edge case the interface TSDoc
 * states; the model-based property then checks random interleavings against `model.ts`.
 */
import { afterAll, describe } from 'vitest';
import { compactionCases } from './support/cases/compaction.case.js';
import { kvCases } from './support/cases/kv.case.js';
import { leaseCases } from './support/cases/lease.case.js';
import { lifecycleCases } from './support/cases/lifecycle.case.js';
import { propertyCases } from './support/cases/property.case.js';
import { rangeCases } from './support/cases/range.case.js';
import { txnCases } from './support/cases/txn.case.js';
import { watchCases } from './support/cases/watch.case.js';
import type { StoreFactory } from './support/factory.js';

export type { StoreFactory } from './support/factory.js';

/** Declares the whole suite for `factory` under `name`; the factory is cleaned up afterwards. */
export function storeSuite(name: string, factory: StoreFactory): void {
  describe(name, () => {
    afterAll(() => factory.cleanup());
    lifecycleCases(factory);
    kvCases(factory);
    txnCases(factory);
    rangeCases(factory);
    watchCases(factory);
    compactionCases(factory);
    leaseCases(factory);
    propertyCases(factory);
  });
}
