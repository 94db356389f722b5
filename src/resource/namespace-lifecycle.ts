/**
 * Kube's NamespaceLifecycle rules for content: nothing is created in a namespace that does not
 * exist (404 `namespaces "x" not found`) or is being terminated (403 with cause
 * `NamespaceTerminating`), and the system namespaces `default`, `kube-system` and `kube-public`
 * can never be deleted (403).
 */
import { ApiError, notFound } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from './context.js';
import { objectKey } from './keys.js';
import { decodeStored, isJsonObject } from '../api/object.js';

/** Namespaces that can never be deleted (kube's `immortalNamespaces`). */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/** The Namespace type of the registry (core/v1). @throws Error when the registry lacks it. */
export function namespaceType(ctx: ResourceContext): ResourceType {
  const t = ctx.registry.byResource('', 'v1', 'namespaces');
  if (t === undefined) throw new Error('the registry serves no core/v1 namespaces');
  return t;
}

/** Kube's `NewForbidden` message shape: `pods "x" is forbidden: why` (no name: `pods is forbidden`). */
export function forbiddenMessage(
  type: Pick<ResourceType, 'plural' | 'group'>,
  name: string,
  why: string,
): string {
  const resource = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
  return name === '' ? `${resource} is forbidden: ${why}` : `${resource} "${name}" is forbidden: ${why}`;
}

/**
 * Admits the creation of an object of namespaced `type` named `name` in `namespace`.
 * @throws ApiError 404 for a missing namespace, 403 for a terminating one.
 */
export async function admitCreateInNamespace(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<void> {
  const nsType = namespaceType(ctx);
  const key = objectKey(nsType, undefined, namespace);
  // An active namespace in the cache admits; anything else is decided by storage.
  if (ctx.namespaceAdmission.activeInCache(nsType, namespace, key)) return;
  const { kv } = await ctx.store.get(key);
  if (kv === undefined) throw notFound({ resource: 'namespaces', group: '', name: namespace });
  const ns = decodeStored(kv.value, kv.modRevision);
  const phase = isJsonObject(ns['status']) ? ns['status']['phase'] : undefined;
  if (phase === 'Terminating' || ns.metadata.deletionTimestamp) {
    throw new ApiError(
      'Forbidden',
      forbiddenMessage(
        type,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      ),
      {
        name,
        ...(type.group === '' ? {} : { group: type.group }),
        kind: type.plural,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      },
    );
  }
}

/** @throws ApiError 403 when `name` is an immortal namespace. */
export function admitNamespaceDelete(name: string): void {
  if (IMMORTAL_NAMESPACES.has(name)) {
    throw new ApiError(
      'Forbidden',
      forbiddenMessage({ plural: 'namespaces', group: '' }, name, 'this namespace may not be deleted'),
      {
        name,
        kind: 'namespaces',
      },
    );
  }
}
