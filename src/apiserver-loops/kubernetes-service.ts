/**
 * kube-apiserver's own Service (its bootstrap and endpoint reconciler): the `kubernetes`
 * ServiceCIDR made from `--service-cluster-ip-range`, the `default/kubernetes` Service (port 443
 * named https, targetPort the secure port, the first IP of the primary range), created when
 * missing and corrected when they differ, at every start; and {@link writeKubernetesEndpoints},
 * which the endpoint reconcilers use to list the API servers in its Endpoints and EndpointSlice.
 */
import { networkInterfaces } from 'node:os';
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { createObject } from '../resource/create.js';
import { jsonEqual, type KubeObject } from '../api/object.js';
import { readObject } from '../resource/store-ops.js';
import { applyUpdate } from '../resource/update.js';
import { ipAt, type Cidr } from '../api/cidr.js';

/** What the reconciler needs. */
export interface KubernetesServiceOptions {
  readonly ranges: readonly Cidr[];
  /** The port the server listens on. */
  readonly port: number;
}

/**
 * kube's advertise address when `--advertise-address` is unset: the bind address when it is a
 * specific one, else the host's first non-loopback IPv4 address, else 127.0.0.1.
 */
export function advertiseAddressOf(advertise: string, bind: string): string {
  if (advertise !== '') return advertise;
  if (bind !== '' && bind !== '0.0.0.0' && bind !== '::') return bind;
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address;
  }
  return '127.0.0.1';
}

function typeOf(ctx: ResourceContext, group: string, resource: string): ResourceType {
  const t = ctx.registry.byResource(group, 'v1', resource);
  if (t === undefined) throw new Error(`${resource} are not served`);
  return t;
}

/** Creates `desired` or brings the stored object's `fields` to it. */
async function upsert(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  desired: KubeObject,
  fields: readonly string[],
): Promise<void> {
  const name = desired.metadata.name ?? '';
  const stored = await readObject(ctx, type, namespace, name);
  if (stored === undefined) {
    try {
      await createObject(ctx, type, desired);
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
    }
  }
  const current = stored?.obj ?? (await readObject(ctx, type, namespace, name))?.obj;
  if (current !== undefined && fields.every((f) => jsonEqual(current[f], desired[f]))) return;
  await applyUpdate(ctx, {
    type,
    namespace,
    name,
    part: 'main',
    allowCreate: false,
    build: (cur) => {
      const next = { ...(cur ?? desired) };
      for (const f of fields) next[f] = desired[f];
      return next;
    },
  });
}

/**
 * Reconciles the kubernetes ServiceCIDR and Service (its Endpoints and EndpointSlice are the
 * endpoint reconciler's, see `endpoint-reconciler.ts`).
 */
export async function reconcileKubernetesService(
  ctx: ResourceContext,
  options: KubernetesServiceOptions,
): Promise<void> {
  const { ranges, port } = options;
  const primary = ranges[0];
  if (primary === undefined) return;
  await upsert(
    ctx,
    typeOf(ctx, 'networking.k8s.io', 'servicecidrs'),
    undefined,
    {
      kind: 'ServiceCIDR',
      apiVersion: 'networking.k8s.io/v1',
      metadata: { name: 'kubernetes' },
      spec: { cidrs: ranges.map((r) => r.text) },
    },
    ['spec'],
  );
  const svcType = typeOf(ctx, '', 'services');
  const clusterIP = ipAt(primary, 1n);
  const existing = await readObject(ctx, svcType, 'default', 'kubernetes');
  const ports = [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }];
  if (existing === undefined) {
    await upsert(
      ctx,
      svcType,
      'default',
      {
        kind: 'Service',
        apiVersion: 'v1',
        metadata: {
          name: 'kubernetes',
          namespace: 'default',
          labels: { component: 'apiserver', provider: 'kubernetes' },
        },
        spec: {
          type: 'ClusterIP',
          clusterIP,
          clusterIPs: [clusterIP],
          ipFamilyPolicy: 'SingleStack',
          sessionAffinity: 'None',
          ports,
        },
      },
      [],
    );
  } else {
    const spec = (existing.obj['spec'] ?? {}) as Record<string, unknown>;
    if (!jsonEqual(spec['ports'], ports)) {
      await applyUpdate(ctx, {
        type: svcType,
        namespace: 'default',
        name: 'kubernetes',
        part: 'main',
        allowCreate: false,
        build: (cur) => {
          const next = { ...(cur as KubeObject) };
          next['spec'] = { ...((cur?.['spec'] ?? {}) as Record<string, unknown>), ports };
          return next;
        },
      });
    }
  }
}

/**
 * Writes the `default/kubernetes` Endpoints and EndpointSlice so they list `addresses` (sorted
 * here) on `port`; objects already so are left alone. The endpoint reconcilers decide the list.
 */
export async function writeKubernetesEndpoints(
  ctx: ResourceContext,
  addresses: readonly string[],
  port: number,
): Promise<void> {
  const ips = [...new Set(addresses)].sort();
  const first = ips[0] ?? '';
  await upsert(
    ctx,
    typeOf(ctx, '', 'endpoints'),
    'default',
    {
      kind: 'Endpoints',
      apiVersion: 'v1',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      subsets:
        ips.length === 0
          ? []
          : [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    },
    ['subsets'],
  );
  await upsert(
    ctx,
    typeOf(ctx, 'discovery.k8s.io', 'endpointslices'),
    'default',
    {
      kind: 'EndpointSlice',
      apiVersion: 'discovery.k8s.io/v1',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      },
      addressType: first.includes(':') ? 'IPv6' : 'IPv4',
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
    ['endpoints', 'ports', 'addressType'],
  );
}
