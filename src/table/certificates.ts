/** Printers of `certificates.k8s.io`: certificate signing requests and cluster trust bundles. */
import type { KubeObject } from '../api/object.js';
import { AGE, column, columns, NAME } from './columns.js';
import { humanDuration, since } from './duration.js';
import { list, obj, optInt, str } from './fields.js';
import type { TablePrinter } from './index.js';

/** CONDITION: Denied, Approved or Pending, then `,Failed` and `,Issued` when they apply. */
function csrCondition(csr: KubeObject): string {
  const status = obj(csr['status']);
  const types = new Set(list(status['conditions']).map((c) => str(obj(c)['type'])));
  let text = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) text += ',Failed';
  if (str(status['certificate']) !== '') text += ',Issued';
  return text;
}

const CERTIFICATE_SIGNING_REQUEST: TablePrinter = {
  columns: columns(
    NAME,
    AGE,
    column('SignerName', 'string', 'Signer the request is addressed to.'),
    column('Requestor', 'string', 'User who created the request.'),
    column('RequestedDuration', 'string', 'Validity period the requestor asked for.'),
    column('Condition', 'string', 'Approval and issuance state of the request.'),
  ),
  cells(csr, now) {
    const spec = obj(csr['spec']);
    const seconds = optInt(spec['expirationSeconds']);
    return [
      csr.metadata.name ?? '',
      since(csr.metadata.creationTimestamp, now),
      str(spec['signerName']) || '<none>',
      str(spec['username']),
      seconds === undefined ? '<none>' : humanDuration(seconds * 1000),
      csrCondition(csr),
    ];
  },
};

const CLUSTER_TRUST_BUNDLE: TablePrinter = {
  columns: columns(NAME, column('SignerName', 'string', 'Signer whose trust anchors the bundle holds.')),
  cells: (bundle) => [bundle.metadata.name ?? '', str(obj(bundle['spec'])['signerName']) || '<none>'],
};

/** `certificates.k8s.io` printers by resource. */
export const CERTIFICATES_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  certificatesigningrequests: CERTIFICATE_SIGNING_REQUEST,
  clustertrustbundles: CLUSTER_TRUST_BUNDLE,
});
