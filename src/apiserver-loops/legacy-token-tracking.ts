/**
 * kube-apiserver's legacy service-account token tracking: the ConfigMap
 * `kube-system/kube-apiserver-legacy-service-account-token-tracking`, whose `since` (a UTC date,
 * `2006-01-02`) tells the legacy token cleaner from when uses of legacy tokens are recorded. It
 * is made at start when missing, and its date is reset when it does not parse, as kube does.
 */
import { ApiError } from '../api/errors.js';
import type { KubeObject } from '../api/object.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { readObject } from '../resource/store-ops.js';
import { applyUpdate } from '../resource/update.js';

/** The ConfigMap's namespace and name, and its key. */
export const TRACKING_NAMESPACE = 'kube-system';
export const TRACKING_CONFIGMAP = 'kube-apiserver-legacy-service-account-token-tracking';
export const TRACKING_KEY = 'since';

/** `date` as Go's `2006-01-02`, in UTC. */
function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function parses(value: unknown): boolean {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));
}

/** Creates the ConfigMap, or repairs its date; a concurrent server's write is left as it is. */
export async function ensureLegacyTokenTracking(ctx: ResourceContext): Promise<void> {
  const type = ctx.registry.byKind('', 'v1', 'ConfigMap');
  if (type === undefined) return;
  const current = await readObject(ctx, type, TRACKING_NAMESPACE, TRACKING_CONFIGMAP);
  const since = day(ctx.now());
  try {
    if (current === undefined) {
      await createObject(ctx, type, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: TRACKING_CONFIGMAP, namespace: TRACKING_NAMESPACE },
        data: { [TRACKING_KEY]: since },
      });
      return;
    }
    const data = current.obj['data'] as Record<string, unknown> | undefined;
    if (parses(data?.[TRACKING_KEY])) return;
    await applyUpdate(ctx, {
      type,
      namespace: TRACKING_NAMESPACE,
      name: TRACKING_CONFIGMAP,
      part: 'main',
      allowCreate: false,
      build: (obj) => {
        const next = obj as KubeObject;
        next['data'] = {
          ...(next['data'] ?? {}),
          [TRACKING_KEY]: since,
        };
        return next;
      },
    });
  } catch (err) {
    if (err instanceof ApiError && (err.reason === 'AlreadyExists' || err.reason === 'Conflict')) return;
    throw err;
  }
}
