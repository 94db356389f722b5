/**
 * Which CertificateSigningRequests the approver considers, as kube's `csrapproving`: kubelet
 * client requests (signer `kubernetes.io/kube-apiserver-client-kubelet`) whose subject is
 * `O=system:nodes, CN=system:node:<name>` with kube's kubelet client usages; "self" when the
 * requester is that node.
 */
import type { CertificateSigningRequest } from '../../api/types/certificates-v1.js';
import type { ParsedCsr } from '../../pki/csr.js';

/** The signer of kubelet client certificates. */
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

/** One way a request is recognised, the subresource its requester needs, and the approval message. */
export interface Recognizer {
  readonly subresource: 'selfnodeclient' | 'nodeclient';
  readonly message: string;
  recognize(csr: CertificateSigningRequest, parsed: ParsedCsr): boolean;
}

const USAGES_RSA = ['client auth', 'digital signature', 'key encipherment'];
const USAGES = ['client auth', 'digital signature'];

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const s = new Set(a);
  return s.size === b.length && b.every((x) => s.has(x));
}

/** A kubelet client request (kube's `isNodeClientCert`). */
export function isNodeClientCert(csr: CertificateSigningRequest, parsed: ParsedCsr): boolean {
  if (csr.spec?.signerName !== KUBELET_CLIENT_SIGNER) return false;
  const { organizations, commonName } = parsed.subject;
  if (organizations.length !== 1 || organizations[0] !== 'system:nodes') return false;
  if (!commonName.startsWith('system:node:') || commonName.length === 'system:node:'.length) return false;
  const usages = csr.spec.usages ?? [];
  return sameSet(usages, USAGES) || sameSet(usages, USAGES_RSA);
}

/** The recognisers in kube's order: the node's own request first. */
export const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    recognize: (csr, parsed) =>
      isNodeClientCert(csr, parsed) && csr.spec?.username === parsed.subject.commonName,
  },
  {
    subresource: 'nodeclient',
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
    recognize: isNodeClientCert,
  },
];
