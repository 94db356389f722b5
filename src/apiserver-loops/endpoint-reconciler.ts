/**
 * kube-apiserver's endpoint reconcilers (`--endpoint-reconciler-type`), which decide which API
 * server addresses the `default/kubernetes` Endpoints and EndpointSlice list:
 * - `lease` (the default): every server keeps a key `/masterleases/<ip>` (under `--etcd-prefix`)
 *   attached to a storage lease of `ttlSeconds`, rewritten every `intervalMs`; the endpoints list
 *   exactly the addresses that have such a key, so a server that dies drops out when its lease
 *   expires. With no lease at all the endpoints are left alone (kube refuses to erase them).
 * - `master-count`: the endpoints keep this server's address and at most `--apiserver-count`
 *   addresses in all, dropping the ones sorted after this server's first (wrapping around).
 * - `none`: the endpoints are not touched.
 *
 * On graceful shutdown ({@link EndpointReconciler.stop}) a server takes its address out: it
 * deletes its lease key (lease) or removes itself (master-count) and rewrites the endpoints.
 */
import type { Store } from '../../storage/interface.js';
import { NotFoundError } from '../../storage/errors.js';
import type { ResourceContext } from '../resource/context.js';
import { readObject } from '../resource/store-ops.js';
import { writeKubernetesEndpoints } from './kubernetes-service.js';

/** `--endpoint-reconciler-type` values. */
export type EndpointReconcilerType = 'lease' | 'master-count' | 'none';

/**
 * Checks a `--endpoint-reconciler-type` value.
 * @throws Error naming the value when it is none of the three.
 */
export function endpointReconcilerTypeOf(value: string): EndpointReconcilerType {
  if (value === 'lease' || value === 'master-count' || value === 'none') return value;
  throw new Error(
    `--endpoint-reconciler-type: endpoint reconciler type ${value} not recognized (lease, master-count or none)`,
  );
}

/** kube's `DefaultEndpointReconcilerTTL` (seconds). */
export const DEFAULT_ENDPOINT_LEASE_TTL_SECONDS = 15;
/** kube's `DefaultEndpointReconcilerInterval` (ms). */
export const DEFAULT_ENDPOINT_RECONCILE_INTERVAL_MS = 10_000;
/** Where the address leases live, under `--etcd-prefix` (kube: `/registry/masterleases/`). */
export const MASTER_LEASES_PREFIX = '/masterleases/';

/** Options of {@link startEndpointReconciler}. */
export interface EndpointReconcilerOptions {
  readonly type: EndpointReconcilerType;
  /** `--apiserver-count` (master-count only). */
  readonly apiserverCount: number;
  /** This server's advertised address. */
  readonly address: string;
  /** The secure port bound. */
  readonly port: number;
  readonly ttlSeconds?: number;
  readonly intervalMs?: number;
  readonly onError?: (message: string, err: unknown) => void;
}

/** A running reconciler. */
export interface EndpointReconciler {
  /** One reconcile now (the first runs before {@link startEndpointReconciler} resolves). @throws its failure. */
  tick(): Promise<void>;
  /** Stops the loop and takes this server's address out of the endpoints. Idempotent. */
  stop(): Promise<void>;
}

function endpointsAddresses(obj: Record<string, unknown> | undefined): string[] {
  const subsets = (obj?.['subsets'] ?? []) as { addresses?: { ip?: string }[] }[];
  return subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip ?? '')).filter((ip) => ip !== '');
}

/** The addresses that hold a live lease key. */
async function leasedAddresses(store: Store): Promise<string[]> {
  const { items } = await store.range({ prefix: MASTER_LEASES_PREFIX }, { keysOnly: true });
  return items.map((kv) => kv.key.slice(MASTER_LEASES_PREFIX.length)).sort();
}

/** Writes this server's lease key, attached to a fresh storage lease of `ttlSeconds`. */
async function renewLease(store: Store, address: string, ttlSeconds: number): Promise<void> {
  const lease = await store.grantLease(ttlSeconds);
  const value = Buffer.from(
    JSON.stringify({
      kind: 'Endpoints',
      apiVersion: 'v1',
      metadata: { name: address },
      subsets: [{ addresses: [{ ip: address }] }],
    }),
  );
  await store.txn({
    key: `${MASTER_LEASES_PREFIX}${address}`,
    ifModRevision: undefined,
    then: { op: 'put', value, lease },
  });
}

/** master-count: this server's address kept (or removed), at most `count` addresses in all. */
function masterCountAddresses(
  current: readonly string[],
  self: string,
  count: number,
  keep: boolean,
): string[] {
  const others = [...new Set(current)].filter((ip) => ip !== self).sort();
  if (!keep) return others;
  const all = [...others, self].sort();
  if (all.length <= count) return all;
  // As kube: drop the addresses that follow this server's in sorted order, wrapping around.
  const at = all.indexOf(self);
  const kept = Array.from(
    { length: Math.max(1, count) },
    (_, k) => all[(at - k + all.length) % all.length] ?? self,
  );
  return [...new Set(kept)].sort();
}

/** Starts the reconciler of `options.type` and runs its first reconcile (a failure is reported, not thrown). */
export async function startEndpointReconciler(
  ctx: ResourceContext,
  options: EndpointReconcilerOptions,
): Promise<EndpointReconciler> {
  const { type, address, port } = options;
  const ttl = options.ttlSeconds ?? DEFAULT_ENDPOINT_LEASE_TTL_SECONDS;
  const endpointsType = ctx.registry.byResource('', 'v1', 'endpoints');
  if (endpointsType === undefined) throw new Error('endpoints are not served');

  const reconcile = async (keep: boolean): Promise<void> => {
    if (type === 'none') return;
    if (type === 'lease') {
      if (keep) await renewLease(ctx.store, address, ttl);
      const live = await leasedAddresses(ctx.store);
      const list = keep ? [...new Set([...live, address])] : live.filter((ip) => ip !== address);
      if (list.length === 0) {
        throw new Error(
          'no API server addresses hold a lease: leaving the kubernetes endpoints as they are rather than erasing them',
        );
      }
      await writeKubernetesEndpoints(ctx, list, port);
      return;
    }
    const stored = await readObject(ctx, endpointsType, 'default', 'kubernetes');
    const current = endpointsAddresses(stored?.obj);
    await writeKubernetesEndpoints(
      ctx,
      masterCountAddresses(current, address, options.apiserverCount, keep),
      port,
    );
  };

  let running: Promise<void> | undefined;
  let stopped = false;
  let stopping: Promise<void> | undefined;
  const tick = (): Promise<void> =>
    (running ??= reconcile(true).finally(() => {
      running = undefined;
    }));
  // A failed first reconcile (storage briefly away) is reported; the loop tries again.
  await tick().catch((err: unknown) => options.onError?.('reconciling the kubernetes endpoints failed', err));
  const timer =
    type === 'none'
      ? undefined
      : setInterval(() => {
          if (stopped) return;
          tick().catch((err: unknown) =>
            options.onError?.('reconciling the kubernetes endpoints failed', err),
          );
        }, options.intervalMs ?? DEFAULT_ENDPOINT_RECONCILE_INTERVAL_MS);
  timer?.unref();
  return {
    tick,
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        clearInterval(timer);
        await running?.catch(() => undefined);
        if (type === 'none') return;
        try {
          if (type === 'lease') {
            await ctx.store.delete(`${MASTER_LEASES_PREFIX}${address}`).catch((err: unknown) => {
              if (!(err instanceof NotFoundError)) throw err;
            });
          }
          await reconcile(false);
        } catch (err) {
          options.onError?.('removing this server from the kubernetes endpoints failed', err);
        }
      })()),
  };
}
