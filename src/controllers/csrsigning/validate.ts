/**
 * What each kube signer accepts (kube's per-signer checks before signing): a request that fails
 * them gets a `Failed` condition (reason `SignerValidationFailure`) with the message here.
 *
 * - `kubernetes.io/kube-apiserver-client`: `client auth`, optionally `digital signature` and
 *   `key encipherment`, nothing else;
 * - `kubernetes.io/kube-apiserver-client-kubelet`: `O=system:nodes`, `CN=system:node:…`, no
 *   subject alternative names, kubelet client usages;
 * - `kubernetes.io/kubelet-serving`: `O=system:nodes`, a DNS or IP name and no email or URI,
 *   kubelet serving usages, `CN=system:node:…`;
 * - `kubernetes.io/legacy-unknown`: anything.
 */
import type { ParsedCsr } from '../../pki/csr.js';

/** The signers kube-controller-manager signs for. */
export const SIGNERS = {
  kubeAPIServerClient: 'kubernetes.io/kube-apiserver-client',
  kubeletClient: 'kubernetes.io/kube-apiserver-client-kubelet',
  kubeletServing: 'kubernetes.io/kubelet-serving',
  legacyUnknown: 'kubernetes.io/legacy-unknown',
} as const;

const KUBELET_CLIENT = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_CLIENT_NO_RSA = ['client auth', 'digital signature'];
const KUBELET_SERVING = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_NO_RSA = ['digital signature', 'server auth'];

function sameSet(usages: readonly string[], expected: readonly string[]): boolean {
  const s = new Set(usages);
  return s.size === expected.length && expected.every((u) => s.has(u));
}

/** Go's `%v` of a string list: `[a b c]`. */
function list(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

function nodesOrganization(csr: ParsedCsr): string | undefined {
  const o = csr.subject.organizations;
  return o.length === 1 && o[0] === 'system:nodes' ? undefined : 'subject organization is not system:nodes';
}

const NOT_NODE = 'subject common name does not begin with system:node:';

/** Why a request is not a kubelet client request (kube's `ValidateKubeletClientCSR`), or undefined. */
export function kubeletClientRefusal(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  const org = nodesOrganization(csr);
  if (org !== undefined) return org;
  if (csr.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!csr.subject.commonName.startsWith('system:node:')) return NOT_NODE;
  if (!sameSet(usages, KUBELET_CLIENT) && !sameSet(usages, KUBELET_CLIENT_NO_RSA)) {
    return `usages did not match ${list(KUBELET_CLIENT)}`;
  }
  return undefined;
}

function kubeletServing(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  const org = nodesOrganization(csr);
  if (org !== undefined) return org;
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0)
    return 'DNS or IP subjectAltName is required';
  if (csr.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (csr.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING) && !sameSet(usages, KUBELET_SERVING_NO_RSA)) {
    return `usages did not match ${list(KUBELET_SERVING)}`;
  }
  if (!csr.subject.commonName.startsWith('system:node:')) return NOT_NODE;
  return undefined;
}

function apiServerClient(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') {
      return `invalid usage for client certificate: ${u}`;
    }
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/**
 * Why `signerName` refuses the request, or undefined when it may sign it.
 * @throws Error for a signer this module does not know (a wiring mistake).
 */
export function refusal(signerName: string, csr: ParsedCsr, usages: readonly string[]): string | undefined {
  switch (signerName) {
    case SIGNERS.kubeAPIServerClient:
      return apiServerClient(usages);
    case SIGNERS.kubeletClient:
      return kubeletClientRefusal(csr, usages);
    case SIGNERS.kubeletServing:
      return kubeletServing(csr, usages);
    case SIGNERS.legacyUnknown:
      return undefined;
    default:
      throw new Error(`unrecognized signerName: ${JSON.stringify(signerName)}`);
  }
}
