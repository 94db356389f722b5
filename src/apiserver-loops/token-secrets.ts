/**
 * The legacy token controller (kube-controller-manager's `tokens` controller): a Secret of type
 * `kubernetes.io/service-account-token` naming a service account in its
 * `kubernetes.io/service-account.name` annotation gets that account's uid in
 * `kubernetes.io/service-account.uid` and data `token` (a legacy JWT, see
 * src/serviceaccount/claims.ts), `ca.crt` (the cluster CA) and `namespace`. A Secret whose account
 * does not exist (or has another uid than the annotation says) is deleted, as kube does, and so
 * are an account's token Secrets when the account is deleted.
 */
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { deleteObject } from '../resource/delete.js';
import { collectionSpan } from '../resource/keys.js';
import { decodeStored, isJsonObject, type KubeObject } from '../api/object.js';
import { readObject } from '../resource/store-ops.js';
import { applyUpdate } from '../resource/update.js';
import { legacyClaims } from '../serviceaccount/claims.js';
import type { TokenIssuer } from '../serviceaccount/issuer.js';
import { watchLoop } from './watch-loop.js';

/** The Secret type of legacy tokens. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

function coreType(ctx: ResourceContext, kind: string): ResourceType {
  const t = ctx.registry.byKind('', 'v1', kind);
  if (t === undefined) throw new Error(`the registry serves no core/v1 ${kind}`);
  return t;
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

/** True when `secret` is a token Secret still to be filled. */
function needsToken(secret: KubeObject, caPem: string): boolean {
  if (secret['type'] !== SERVICE_ACCOUNT_TOKEN_TYPE) return false;
  const data = isJsonObject(secret['data']) ? secret['data'] : {};
  const ann = secret.metadata.annotations ?? {};
  return (
    typeof data['token'] !== 'string' ||
    data['token'] === '' ||
    data['ca.crt'] !== b64(caPem) ||
    data['namespace'] !== b64(secret.metadata.namespace ?? '') ||
    (ann[SA_UID_ANNOTATION] ?? '') === ''
  );
}

/** Starts the controller; tokens are signed by `issuer`. */
export function startTokenSecretsController(
  ctx: ResourceContext,
  issuer: TokenIssuer,
  caPem: string,
): { stop(): Promise<void> } {
  const secrets = coreType(ctx, 'Secret');
  const accounts = coreType(ctx, 'ServiceAccount');

  const sync = async (secret: KubeObject): Promise<void> => {
    if (!needsToken(secret, caPem) || secret.metadata.deletionTimestamp) return;
    const ns = secret.metadata.namespace ?? '';
    const name = secret.metadata.name ?? '';
    const ann = secret.metadata.annotations ?? {};
    const saName = ann[SA_NAME_ANNOTATION] ?? '';
    const sa = saName === '' ? undefined : await readObject(ctx, accounts, ns, saName);
    const saUid = sa?.obj.metadata.uid ?? '';
    const wantedUid = ann[SA_UID_ANNOTATION] ?? '';
    if (sa === undefined || (wantedUid !== '' && wantedUid !== saUid)) {
      try {
        await deleteObject(ctx, secrets, ns, name, {});
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      }
      return;
    }
    const data = isJsonObject(secret['data']) ? secret['data'] : {};
    const token =
      typeof data['token'] === 'string' && data['token'] !== ''
        ? undefined
        : b64(await issuer.sign(legacyClaims(ns, saName, saUid, name)));
    await applyUpdate(ctx, {
      type: secrets,
      namespace: ns,
      name,
      part: 'main',
      allowCreate: false,
      build: (current) => {
        if (current === undefined) throw new Error('update without an object');
        const d = isJsonObject(current['data']) ? { ...current['data'] } : {};
        if (token !== undefined && (typeof d['token'] !== 'string' || d['token'] === '')) d['token'] = token;
        d['ca.crt'] = b64(caPem);
        d['namespace'] = b64(ns);
        current['data'] = d;
        current.metadata.annotations = {
          ...(current.metadata.annotations ?? {}),
          [SA_UID_ANNOTATION]: saUid,
        };
        return current;
      },
    });
  };

  /** Deletes the token Secrets of a deleted account. */
  const sweep = async (sa: KubeObject): Promise<void> => {
    const ns = sa.metadata.namespace ?? '';
    const { items } = await ctx.store.range(collectionSpan(secrets, ns));
    for (const kv of items) {
      const secret = decodeStored(kv.value, kv.modRevision);
      const ann = secret.metadata.annotations ?? {};
      if (secret['type'] !== SERVICE_ACCOUNT_TOKEN_TYPE || ann[SA_NAME_ANNOTATION] !== sa.metadata.name)
        continue;
      const uid = ann[SA_UID_ANNOTATION] ?? '';
      if (uid !== '' && uid !== sa.metadata.uid) continue;
      try {
        await deleteObject(ctx, secrets, ns, secret.metadata.name ?? '', {});
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      }
    }
  };

  const loops = [
    watchLoop(ctx, collectionSpan(secrets, undefined), async (c) => {
      if (c.obj !== undefined) await sync(c.obj);
    }),
    watchLoop(ctx, collectionSpan(accounts, undefined), async (c) => {
      if (c.obj === undefined && c.previous !== undefined) await sweep(c.previous);
    }),
  ];
  return {
    stop: async () => {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}
