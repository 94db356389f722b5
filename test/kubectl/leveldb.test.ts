/**
 * The kubectl acceptance suite on the embedded default store: LevelDB in a temporary data dir,
 * against every kubectl version the machine has (see suite.case.ts).
 */
import { kubectlSuite } from './suite.case.js';
import { levelDbBackend } from './support/backends.js';

kubectlSuite(levelDbBackend());
