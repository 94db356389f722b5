/**
 * The suite against a store built on the reference model: checks the suite and the model agree
 * with each other, independently of any backend (a failure here is a bug in the suite or model).
 */
import { prefixed } from '../../storage/prefixed.js';
import { storeSuite } from './store.case.js';
import { openModelStore } from './support/model-store.js';

storeSuite('model store', {
  open: async () => openModelStore(),
  cleanup: async () => undefined,
});

// Starting at revision 1, as etcd and the embedded engine do, covers both fresh-store forms.
storeSuite('model store at revision 1 through prefixed(/registry)', {
  open: async () => prefixed(openModelStore(1n), '/registry'),
  cleanup: async () => undefined,
});
