/**
 * kube's certificate admission plugins on CertificateSigningRequests:
 * - CertificateApproval: approving or denying (`/approval`) needs the `approve` verb on
 *   `certificates.k8s.io` `signers` named by the request's signerName (or `<domain>/*`);
 * - CertificateSigning: setting `status.certificate` (`/status`) needs the `sign` verb likewise;
 * - CertificateSubjectRestriction: a `kubernetes.io/kube-apiserver-client` request may not ask
 *   for the `system:masters` group.
 * (The `/approval` endpoint of src/certificates checks the approve verb itself as well.)
 */
import { Buffer } from 'node:buffer';
import { isJsonObject, jsonEqual, type JsonObject } from '../api/object.js';
import { parseCsr } from '../pki/csr.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import type { Authorize } from './plugins.js';
import { admissionForbidden } from './forbidden.js';

const isCsr = (a: AdmissionAttributes): boolean =>
  a.type.group === 'certificates.k8s.io' && a.type.kind === 'CertificateSigningRequest';

const signerOf = (o: JsonObject | undefined): string => {
  const spec = o !== undefined && isJsonObject(o['spec']) ? o['spec'] : {};
  return typeof spec['signerName'] === 'string' ? spec['signerName'] : '';
};

/** kube's `IsAuthorizedForSignerName`: the exact signer, or `<domain>/*`. */
async function authorizedFor(
  authorize: Authorize | undefined,
  a: AdmissionAttributes,
  verb: string,
  signer: string,
): Promise<boolean> {
  if (authorize === undefined) return true;
  const request = { verb, group: 'certificates.k8s.io', resource: 'signers' };
  if (await authorize(a.user, { ...request, name: signer })) return true;
  const slash = signer.indexOf('/');
  return slash > 0 && authorize(a.user, { ...request, name: `${signer.slice(0, slash)}/*` });
}

export function certificateApproval(authorize: Authorize | undefined): AdmissionPlugin {
  return {
    name: 'CertificateApproval',
    handles: (a) => isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'approval',
    validate: async (a) => {
      const signer = signerOf(a.oldObject);
      if (!(await authorizedFor(authorize, a, 'approve', signer))) {
        throw admissionForbidden(a, `user not permitted to approve requests with signerName "${signer}"`);
      }
    },
  };
}

export function certificateSigning(authorize: Authorize | undefined): AdmissionPlugin {
  return {
    name: 'CertificateSigning',
    handles: (a) => isCsr(a) && a.operation === 'UPDATE' && a.subresource === 'status',
    validate: async (a) => {
      const cert = (o: JsonObject | undefined): unknown =>
        o !== undefined && isJsonObject(o['status']) ? o['status']['certificate'] : undefined;
      if (jsonEqual(cert(a.object), cert(a.oldObject))) return;
      const signer = signerOf(a.oldObject);
      if (!(await authorizedFor(authorize, a, 'sign', signer))) {
        throw admissionForbidden(a, `user not permitted to sign requests with signerName "${signer}"`);
      }
    },
  };
}

export function certificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    handles: (a) => isCsr(a) && a.operation === 'CREATE' && a.subresource === undefined,
    validate: (a) => {
      if (signerOf(a.object) !== 'kubernetes.io/kube-apiserver-client') return;
      const spec = a.object !== undefined && isJsonObject(a.object['spec']) ? a.object['spec'] : {};
      if (typeof spec['request'] !== 'string') return;
      let organizations: readonly string[];
      try {
        organizations = parseCsr(Buffer.from(spec['request'], 'base64').toString('utf8')).subject
          .organizations;
      } catch (err) {
        throw admissionForbidden(a, `failed to parse CSR: ${(err as Error).message}`);
      }
      if (organizations.includes('system:masters')) {
        throw admissionForbidden(
          a,
          'use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
        );
      }
    },
  };
}
