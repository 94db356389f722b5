/**
 * What every namespace holds for its workloads, kept there as kube-controller-manager's
 * serviceaccount controller and root-CA publisher do:
 * - the `default` ServiceAccount (recreated when deleted);
 * - the `kube-root-ca.crt` ConfigMap, key `ca.crt` = the cluster CA (recreated when deleted,
 *   restored when changed).
 *
 * Servers over one store that hold different CAs (separate `--cert-dir`s) must not fight over
 * the ConfigMap: writes are made as kube's field manager `root-ca-cert-publisher`, and a
 * `ca.crt` owned by that manager alone (another server's publisher) is left as it is; only
 * a value someone else wrote, or a deleted ConfigMap, is put back.
 *
 * Driven by three watch loops (namespaces, serviceaccounts, configmaps); work is per namespace,
 * queued and coalesced, one namespace at a time. Terminating namespaces are left alone (their
 * creates are refused anyway). Every write is conditional or a create, so several servers over one
 * store may each run it.
 */
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { collectionSpan } from '../resource/keys.js';
import { isJsonObject, jsonEqual, type KubeObject } from '../api/object.js';
import { readObject } from '../resource/store-ops.js';
import { serverWrite } from '../resource/write-options.js';
import { applyUpdate } from '../resource/update.js';
import { watchLoop, type WatchLoop } from './watch-loop.js';

/** The ConfigMap holding the cluster CA in every namespace. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** The annotation kube's root-CA publisher sets on it. */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** The field manager of the root-CA publisher's writes (kube's controller name). */
export const ROOT_CA_PUBLISHER = 'root-ca-cert-publisher';

const PUBLISHER_WRITE = { ...serverWrite(), manager: ROOT_CA_PUBLISHER };

/** True when `ca.crt` was last set by a root-CA publisher (this server's or another's). */
function ownedByPublisher(cm: KubeObject): boolean {
  const owners = (cm.metadata.managedFields ?? []).filter((e) => {
    if (!isJsonObject(e) || !isJsonObject(e['fieldsV1'])) return false;
    const data = e['fieldsV1']['f:data'];
    return isJsonObject(data) && 'f:ca.crt' in data;
  });
  return owners.length > 0 && owners.every((e) => isJsonObject(e) && e['manager'] === ROOT_CA_PUBLISHER);
}

/** True when `cm` needs putting back to `data`. */
function needsRestore(cm: KubeObject, data: Record<string, string>): boolean {
  if (jsonEqual(cm['data'], data) && cm['binaryData'] === undefined) return false;
  return !ownedByPublisher(cm);
}

function coreType(ctx: ResourceContext, kind: string): ResourceType {
  const t = ctx.registry.byKind('', 'v1', kind);
  if (t === undefined) throw new Error(`the registry serves no core/v1 ${kind}`);
  return t;
}

function terminating(ns: KubeObject): boolean {
  if (ns.metadata.deletionTimestamp) return true;
  return isJsonObject(ns['status']) && ns['status']['phase'] === 'Terminating';
}

function ignorable(err: unknown): boolean {
  // Someone else created it first, or the namespace is going away.
  return (
    err instanceof ApiError &&
    (err.reason === 'AlreadyExists' || err.reason === 'Forbidden' || err.reason === 'NotFound')
  );
}

/** What {@link startServiceAccountsController} keeps in each namespace (default both). */
export interface NamespacePublications {
  /** The `default` ServiceAccount (kube's serviceaccount-controller). */
  readonly defaultAccounts?: boolean;
  /** The `kube-root-ca.crt` ConfigMap (kube's root-ca-certificate-publisher-controller). */
  readonly rootCa?: boolean;
}

/** Starts the controller; `caPem` is the cluster CA bundle. */
export function startServiceAccountsController(
  ctx: ResourceContext,
  caPem: string,
  publish: NamespacePublications = {},
  retryMs = 1000,
): { stop(): Promise<void> } {
  const accountsOn = publish.defaultAccounts !== false;
  const rootCaOn = publish.rootCa !== false;
  const namespaces = coreType(ctx, 'Namespace');
  const accounts = coreType(ctx, 'ServiceAccount');
  const configMaps = coreType(ctx, 'ConfigMap');
  const queued = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let running: Promise<void> | undefined;
  let stopped = false;

  const ensure = async (ns: string): Promise<void> => {
    const namespace = await readObject(ctx, namespaces, undefined, ns);
    if (namespace === undefined || terminating(namespace.obj)) return;
    if (accountsOn && (await readObject(ctx, accounts, ns, 'default')) === undefined) {
      try {
        await createObject(ctx, accounts, {
          kind: 'ServiceAccount',
          apiVersion: 'v1',
          metadata: { name: 'default', namespace: ns },
        });
      } catch (err) {
        if (!ignorable(err)) throw err;
      }
    }
    if (!rootCaOn) return;
    const data = { 'ca.crt': caPem };
    const cm = await readObject(ctx, configMaps, ns, ROOT_CA_CONFIGMAP);
    if (cm === undefined) {
      try {
        await createObject(
          ctx,
          configMaps,
          {
            kind: 'ConfigMap',
            apiVersion: 'v1',
            metadata: {
              name: ROOT_CA_CONFIGMAP,
              namespace: ns,
              annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION },
            },
            data,
          },
          { write: PUBLISHER_WRITE },
        );
      } catch (err) {
        if (!ignorable(err)) throw err;
      }
    } else if (needsRestore(cm.obj, data)) {
      await applyUpdate(ctx, {
        write: PUBLISHER_WRITE,
        type: configMaps,
        namespace: ns,
        name: ROOT_CA_CONFIGMAP,
        part: 'main',
        allowCreate: false,
        build: (current) => {
          if (current === undefined) throw new Error('update without an object');
          current['data'] = data;
          delete current['binaryData'];
          return current;
        },
      });
    }
  };

  const drain = async (): Promise<void> => {
    while (!stopped && queued.size > 0) {
      const ns = queued.values().next().value as string;
      queued.delete(ns);
      try {
        await ensure(ns);
      } catch {
        if (stopped) return;
        const t = setTimeout(() => {
          timers.delete(t);
          enqueue(ns);
        }, retryMs);
        timers.add(t);
      }
    }
  };
  const enqueue = (ns: string): void => {
    if (stopped || ns === '') return;
    queued.add(ns);
    running ??= drain().finally(() => {
      running = undefined;
      if (queued.size > 0) enqueue(queued.values().next().value as string);
    });
  };

  const loops: WatchLoop[] = [
    watchLoop(ctx, collectionSpan(namespaces, undefined), async (c) => {
      if (c.obj !== undefined && !terminating(c.obj)) enqueue(c.obj.metadata.name ?? '');
    }),
  ];
  if (accountsOn) {
    loops.push(
      watchLoop(ctx, collectionSpan(accounts, undefined), async (c) => {
        if (c.obj === undefined && c.previous?.metadata.name === 'default') {
          enqueue(c.previous.metadata.namespace ?? '');
        }
      }),
    );
  }
  if (rootCaOn) {
    loops.push(
      watchLoop(ctx, collectionSpan(configMaps, undefined), async (c) => {
        const o = c.obj ?? c.previous;
        if (o?.metadata.name !== ROOT_CA_CONFIGMAP) return;
        if (c.obj === undefined || needsRestore(c.obj, { 'ca.crt': caPem })) {
          enqueue(o.metadata.namespace ?? '');
        }
      }),
    );
  }
  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all(loops.map((l) => l.stop()));
      await running;
    },
  };
}
