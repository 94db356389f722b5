/** Printers of `coordination.k8s.io`: leases and lease candidates. */
import { AGE, column, columns, NAME } from './columns.js';
import { since } from './duration.js';
import { obj, str } from './fields.js';
import type { TablePrinter } from './index.js';

const LEASE: TablePrinter = {
  columns: columns(NAME, column('Holder', 'string', 'Identity of the current holder of the lease.'), AGE),
  cells: (lease, now) => [
    lease.metadata.name ?? '',
    str(obj(lease['spec'])['holderIdentity']),
    since(lease.metadata.creationTimestamp, now),
  ],
};

const LEASE_CANDIDATE: TablePrinter = {
  columns: columns(
    NAME,
    column('LeaseName', 'string', 'Lease the candidate competes for.'),
    column('BinaryVersion', 'string', 'Binary version of the candidate.'),
    column('EmulationVersion', 'string', 'Emulation version of the candidate.'),
    AGE,
  ),
  cells(candidate, now) {
    const spec = obj(candidate['spec']);
    return [
      candidate.metadata.name ?? '',
      str(spec['leaseName']),
      str(spec['binaryVersion']),
      str(spec['emulationVersion']),
      since(candidate.metadata.creationTimestamp, now),
    ];
  },
};

/** `coordination.k8s.io` printers by resource. */
export const COORDINATION_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  leases: LEASE,
  leasecandidates: LEASE_CANDIDATE,
});
