/**
 * Which CertificateSigningRequests the approver considers, as kube's `csrapproving`: kubelet
 * client requests (signer `kubernetes.io/kube-apiserver-client-kubelet`) whose subject is
 * `O=system:nodes, CN=system:node:<name>`, without subject alternative names, with kube's
 * kubelet client usages; "self" when the requester is that node.
 */
import type { CertificateSigningRequest } from '../../api/types/certificates-v1.js';
import type { ParsedCsr } from '../../pki/csr.js';
import { kubeletClientRefusal } from '../csrsigning/validate.js';

/** The signer of kubelet client certificates. */
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

/** One way a request is recognised, the subresource its requester needs, and the approval message. */
export interface Recognizer {
  readonly subresource: 'selfnodeclient' | 'nodeclient';
  readonly message: string;
  recognize(csr: CertificateSigningRequest, parsed: ParsedCsr): boolean;
}

/** A kubelet client request (kube's `isNodeClientCert`: the signer, then `IsKubeletClientCSR`). */
export function isNodeClientCert(csr: CertificateSigningRequest, parsed: ParsedCsr): boolean {
  if (csr.spec?.signerName !== KUBELET_CLIENT_SIGNER) return false;
  return kubeletClientRefusal(parsed, csr.spec.usages ?? []) === undefined;
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
