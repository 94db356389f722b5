/**
 * The namespaces every cluster has, created at start when missing (kube-apiserver's
 * bootstrap-controller and the kube-node-lease namespace): `default`, `kube-system`,
 * `kube-public`, `kube-node-lease`. Idempotent, and safe when several servers start at once.
 */
import { ApiError } from '../api/errors.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { namespaceType } from '../resource/namespace-lifecycle.js';
import { readObject } from '../resource/store-ops.js';

/** The namespaces created at start. */
export const SYSTEM_NAMESPACES: readonly string[] = [
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
];

/**
 * Creates each of {@link SYSTEM_NAMESPACES} that does not exist yet. The creations run together,
 * so the store commits them in one batch: this sits on the path to a fresh server's first answer.
 */
export async function bootstrapNamespaces(ctx: ResourceContext): Promise<void> {
  const type = namespaceType(ctx);
  const ensure = async (name: string): Promise<void> => {
    if ((await readObject(ctx, type, undefined, name)) !== undefined) return;
    try {
      await createObject(ctx, type, { kind: type.kind, apiVersion: type.apiVersion, metadata: { name } });
    } catch (err) {
      // Another server created it first.
      if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
    }
  };
  const outcomes = await Promise.allSettled(SYSTEM_NAMESPACES.map(ensure));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
