/**
 * `certificatesigningrequests/approval` (GET, PUT, PATCH): PUT and PATCH set the request's
 * Approved or Denied condition, as `kubectl certificate approve|deny` sends it. As kube's
 * approval strategy, only `status.conditions` and the object's labels and annotations are taken
 * from the request; the caller needs the `approve` verb on `signers` for the request's signerName
 * (or its `<domain>/*`) to change the conditions, as kube's CertificateApproval admission checks.
 * GET answers the request itself.
 */
import { ConflictError } from '../../storage/errors.js';
import { ApiError, conflict, invalid, notFound } from '../api/errors.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { decodeStored, encodeForStorage, withResourceVersion, type KubeObject } from '../api/object.js';
import { applyPatch, type PatchBody } from '../resource/patch.js';
import { objectKey } from '../resource/keys.js';
import type { Attributes } from '../authz/attributes.js';
import type { AuthorizerChain } from '../authz/authorizer.js';

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}
interface Csr extends KubeObject {
  spec?: { signerName?: string };
  status?: { conditions?: Condition[] | null; certificate?: string };
}

const QUALIFIED = { resource: 'certificatesigningrequests', group: 'certificates.k8s.io' };

/** The approval endpoint; `chain` decides the `approve` verb on signers. */
export function approvalEndpoint(chain: AuthorizerChain): CustomEndpoint {
  return {
    methods: ['GET', 'PUT', 'PATCH'],
    async handle({ ctx, target, request, body, method }) {
      const name = target.name ?? '';
      const key = objectKey(target.type, undefined, name);
      const { kv } = await ctx.store.get(key);
      if (kv === undefined) throw notFound({ ...QUALIFIED, name });
      if (method === 'GET') return { code: 200, body: withResourceVersion(kv.value, kv.modRevision) };
      // Patches apply to a copy; the stored object stays as read.
      const stored = decodeStored(kv.value, kv.modRevision) as Csr;
      const given = (
        method === 'PATCH'
          ? applyPatch(ctx, target.type.messageType, stored, body as PatchBody)
          : (body ?? {})
      ) as Csr;
      const rv = given.metadata?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== String(kv.modRevision)) {
        throw conflict(
          { ...QUALIFIED, name },
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      const conditions = given.status?.conditions ?? [];
      const types = new Set(conditions.map((c) => c.type));
      if (types.has('Approved') && types.has('Denied')) {
        throw invalid('CertificateSigningRequest', 'certificates.k8s.io', name, [
          { field: 'status.conditions', message: 'Approved and Denied conditions are mutually exclusive' },
        ]);
      }
      const signer = stored.spec?.signerName ?? '';
      const slash = signer.indexOf('/');
      const ask = (n: string): Attributes => ({
        user: request.user,
        verb: 'approve',
        isResourceRequest: true,
        path: '',
        apiGroup: 'certificates.k8s.io',
        apiVersion: 'v1',
        resource: 'signers',
        subresource: '',
        namespace: '',
        name: n,
      });
      const changed = JSON.stringify(conditions) !== JSON.stringify(stored.status?.conditions ?? []);
      if (changed) {
        const ok =
          (await chain.authorize(ask(signer))).decision === 'allow' ||
          (slash > 0 && (await chain.authorize(ask(`${signer.slice(0, slash)}/*`))).decision === 'allow');
        if (!ok) {
          throw new ApiError(
            'Forbidden',
            `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: user not permitted to approve requests with signerName "${signer}"`,
            { name, group: 'certificates.k8s.io', kind: 'certificatesigningrequests' },
          );
        }
      }
      const now = ctx
        .now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
      const next: Csr = {
        ...stored,
        metadata: {
          ...stored.metadata,
          ...(given.metadata?.labels === undefined ? {} : { labels: given.metadata.labels }),
          ...(given.metadata?.annotations === undefined ? {} : { annotations: given.metadata.annotations }),
        },
        status: {
          ...(stored.status ?? {}),
          conditions: conditions.map((c) => ({
            ...c,
            lastUpdateTime: c.lastUpdateTime ?? now,
            lastTransitionTime: c.lastTransitionTime ?? now,
          })),
        },
      };
      try {
        const written = await ctx.store.update(key, encodeForStorage(next), {
          ifModRevision: kv.modRevision,
        });
        return { code: 200, body: withResourceVersion(written.kv.value, written.revision) };
      } catch (err) {
        if (err instanceof ConflictError) {
          throw conflict(
            { ...QUALIFIED, name },
            'the object has been modified; please apply your changes to the latest version and try again',
          );
        }
        throw err;
      }
    },
  };
}
