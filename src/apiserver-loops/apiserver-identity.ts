/**
 * kube-apiserver's identity Lease and its garbage collector:
 * - every server keeps a Lease `apiserver-<hash>` in `kube-system` (the hash is of the host name
 *   and "kube-apiserver", so servers on one host share it, as in kube), labelled
 *   `apiserver.kubernetes.io/identity: kube-apiserver` and `kubernetes.io/hostname`, held by
 *   `<name>_<uuid>` for `leaseDurationSeconds` (3600) and renewed every `renewIntervalMs` (10 s);
 * - at start and every `gcPeriodMs` (3600 s) after, the leases with that label whose `renewTime`
 *   plus duration has passed are deleted, each guarded by the resourceVersion read.
 */
import { createHash, randomUUID } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { ApiError } from '../api/errors.js';
import type { KubeObject } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { deleteObject } from '../resource/delete.js';
import { readObject } from '../resource/store-ops.js';
import { applyUpdate } from '../resource/update.js';
import { objectKey } from '../resource/keys.js';

/** The identity label and its value. */
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const IDENTITY_VALUE = 'kube-apiserver';
/** kube's `IdentityLeaseDurationSeconds`. */
export const IDENTITY_LEASE_DURATION_SECONDS = 3600;
/** kube's `IdentityLeaseRenewIntervalPeriod` (ms). */
export const IDENTITY_LEASE_RENEW_INTERVAL_MS = 10_000;
/** kube's `IdentityLeaseGCPeriod` (ms). */
export const IDENTITY_LEASE_GC_PERIOD_MS = 3_600_000;
const NAMESPACE = 'kube-system';

/** Options of {@link startApiserverIdentity}. */
export interface ApiserverIdentityOptions {
  readonly hostname?: string;
  readonly leaseDurationSeconds?: number;
  readonly renewIntervalMs?: number;
  readonly gcPeriodMs?: number;
  readonly now?: () => number;
  readonly onError?: (message: string, err: unknown) => void;
}

/** A running identity lease and collector. */
export interface ApiserverIdentity {
  /** The Lease's name. */
  readonly name: string;
  /** Renews the Lease now. */
  renew(): Promise<void>;
  /** Deletes the expired identity Leases now; resolves with their names. */
  collect(): Promise<string[]>;
  stop(): Promise<void>;
}

/** kube's identity name: `apiserver-` and base32 (lower case, unpadded) of a hash's first 16 bytes. */
export function identityLeaseName(host: string): string {
  const part = (s: string): Buffer => {
    const bytes = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(bytes.length);
    return Buffer.concat([len, bytes]);
  };
  const hash = createHash('sha256')
    .update(Buffer.concat([part(host), part(IDENTITY_VALUE)]))
    .digest()
    .subarray(0, 16);
  return `apiserver-${base32(hash).toLowerCase()}`;
}

function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** kube's MicroTime form. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function leaseType(ctx: ResourceContext): ResourceType {
  const t = ctx.registry.byResource('coordination.k8s.io', 'v1', 'leases');
  if (t === undefined) throw new Error('leases are not served');
  return t;
}

/**
 * Starts renewing this server's identity Lease and collecting expired ones (the first renewal and
 * collection before it resolves; a failure is reported, not thrown).
 */
export async function startApiserverIdentity(
  ctx: ResourceContext,
  options: ApiserverIdentityOptions = {},
): Promise<ApiserverIdentity> {
  const now = options.now ?? Date.now;
  const host = options.hostname ?? osHostname();
  const name = identityLeaseName(host);
  const holder = `${name}_${randomUUID()}`;
  const duration = options.leaseDurationSeconds ?? IDENTITY_LEASE_DURATION_SECONDS;
  const type = leaseType(ctx);

  const renew = async (): Promise<void> => {
    const at = microTime(now());
    const spec = { holderIdentity: holder, leaseDurationSeconds: duration, renewTime: at };
    const labels = { [IDENTITY_LABEL]: IDENTITY_VALUE, 'kubernetes.io/hostname': host };
    if ((await readObject(ctx, type, NAMESPACE, name)) === undefined) {
      try {
        await createObject(ctx, type, {
          kind: 'Lease',
          apiVersion: 'coordination.k8s.io/v1',
          metadata: { name, namespace: NAMESPACE, labels },
          spec,
        });
        return;
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      }
    }
    await applyUpdate(ctx, {
      type,
      namespace: NAMESPACE,
      name,
      part: 'main',
      allowCreate: false,
      build: (cur) => {
        const obj = cur as KubeObject;
        return {
          ...obj,
          metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, ...labels } },
          spec: { ...((obj['spec'] ?? {}) as Record<string, unknown>), ...spec },
        };
      },
    });
  };

  const collect = async (): Promise<string[]> => {
    const sample = objectKey(type, NAMESPACE, 'x');
    const prefix = sample.slice(0, -1);
    const { items } = await ctx.store.range({ prefix }, { keysOnly: true });
    const deleted: string[] = [];
    for (const kv of items) {
      const leaseName = kv.key.slice(prefix.length);
      const stored = await readObject(ctx, type, NAMESPACE, leaseName);
      if (stored === undefined || stored.obj.metadata.labels?.[IDENTITY_LABEL] !== IDENTITY_VALUE) continue;
      const spec = (stored.obj['spec'] ?? {}) as { renewTime?: string; leaseDurationSeconds?: number };
      const renewed = spec.renewTime === undefined ? NaN : Date.parse(spec.renewTime);
      const expired = Number.isNaN(renewed) || renewed + (spec.leaseDurationSeconds ?? 0) * 1000 < now();
      if (!expired) continue;
      try {
        await deleteObject(ctx, type, NAMESPACE, leaseName, {
          preconditions: { resourceVersion: stored.obj.metadata.resourceVersion ?? '' },
        });
        deleted.push(leaseName);
      } catch (err) {
        if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
      }
    }
    return deleted;
  };

  const report = (message: string) => (err: unknown) => options.onError?.(message, err);
  await renew().catch(report('renewing the apiserver identity lease failed'));
  // As kube's collector, a first pass at start, then one every period.
  await collect().catch(report('collecting expired apiserver identity leases failed'));
  const renewTimer = setInterval(
    () => void renew().catch(report('renewing the apiserver identity lease failed')),
    options.renewIntervalMs ?? IDENTITY_LEASE_RENEW_INTERVAL_MS,
  );
  const gcTimer = setInterval(
    () => void collect().catch(report('collecting expired apiserver identity leases failed')),
    options.gcPeriodMs ?? IDENTITY_LEASE_GC_PERIOD_MS,
  );
  renewTimer.unref();
  gcTimer.unref();
  return {
    name,
    renew,
    collect,
    stop: () => {
      clearInterval(renewTimer);
      clearInterval(gcTimer);
      return Promise.resolve();
    },
  };
}
