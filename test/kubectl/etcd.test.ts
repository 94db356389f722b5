/**
 * The kubectl acceptance suite on an external etcd (Debian's `/usr/bin/etcd`, started for the
 * suite), against every kubectl version the machine has (see suite.case.ts).
 *
 * Skipped when etcd is not installed, unless `CAPSTAN_REQUIRE_ETCD=1` (then it fails).
 */
import { describe, expect, it } from 'vitest';
import { ETCD_BINARY } from '../../tools/etcd-local.js';
import { kubectlSuite } from './suite.case.js';
import { etcdBackend, HAVE_ETCD, REQUIRE_ETCD } from './support/backends.js';

if (HAVE_ETCD) {
  kubectlSuite(etcdBackend());
} else {
  describe.runIf(REQUIRE_ETCD)('kubectl on external etcd', () => {
    it('needs etcd (CAPSTAN_REQUIRE_ETCD=1)', () => {
      expect(HAVE_ETCD, `${ETCD_BINARY} is missing`).toBe(true);
    });
  });
}
