/**
 * The files of configMap, secret, downwardAPI and projected volumes, as kube's plugins build
 * their payloads (pkg/volume/{configmap,secret,downwardapi,projected}):
 * - no `items`: every key (a ConfigMap's `data` and `binaryData`, a Secret's `data`);
 *   with `items`: those keys at their paths; a missing key fails unless the source is optional;
 * - a missing object fails (`configmap "x" not found`) unless optional, which gives no files;
 * - each file's mode is its item's `mode`, else the volume's `defaultMode`, else 0644;
 * - downwardAPI: `metadata.labels` / `metadata.annotations` as sorted `key="value"` lines,
 *   one label or annotation, name, namespace, uid; `resourceFieldRef` of a named container;
 * - projected: the union of its sources, a `serviceAccountToken` as the token text.
 */
import type {
  ConfigMap,
  Container,
  DownwardAPIVolumeFile,
  KeyToPath,
  Pod,
  Secret,
  ServiceAccountTokenProjection,
  VolumeProjection,
} from '../../api/types/core-v1.js';
import { EnvError, resourceValue } from '../runtime/env.js';
import type { Payload } from './atomic-writer.js';

/** The default mode of volume files (0644). */
export const DEFAULT_MODE = 0o644;

/** A payload cannot be built; `message` is kube's wording. */
export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadError';
  }
}

/** What payloads need: the objects, tokens and the node's allocatable resources. */
export interface SourceContext {
  /** The ConfigMap, or undefined when it does not exist. */
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /** A token of the pod's service account for a projection (throws with kube's message). */
  token(pod: Pod, source: ServiceAccountTokenProjection): Promise<string>;
  readonly nodeAllocatable: { readonly cpu: number; readonly memory: number };
}

function modeOf(item: { mode?: number } | undefined, defaultMode: number | undefined): number {
  return item?.mode ?? defaultMode ?? DEFAULT_MODE;
}

function keyed(
  all: Map<string, Buffer>,
  items: readonly KeyToPath[] | undefined,
  defaultMode: number | undefined,
  optional: boolean,
  missing: (key: string) => string,
): Payload {
  const out: Payload = new Map();
  if (!items || items.length === 0) {
    for (const [key, data] of all) out.set(key, { data, mode: modeOf(undefined, defaultMode) });
    return out;
  }
  for (const item of items) {
    const data = all.get(item.key ?? '');
    if (!data) {
      if (optional) continue;
      throw new PayloadError(missing(item.key ?? ''));
    }
    out.set(item.path ?? '', { data, mode: modeOf(item, defaultMode) });
  }
  return out;
}

/** A ConfigMap's payload; `cm` undefined means it does not exist. */
export function configMapPayload(
  name: string,
  cm: ConfigMap | undefined,
  src: { items?: KeyToPath[]; optional?: boolean },
  defaultMode: number | undefined,
): Payload {
  const optional = src.optional ?? false;
  if (!cm) {
    if (optional) return new Map();
    throw new PayloadError(`configmap "${name}" not found`);
  }
  const all = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) all.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) all.set(k, Buffer.from(v, 'base64'));
  return keyed(
    all,
    src.items,
    defaultMode,
    optional,
    (k) => `configmap references non-existent config key: ${k}`,
  );
}

/** A Secret's payload; `secret` undefined means it does not exist. */
export function secretPayload(
  name: string,
  secret: Secret | undefined,
  src: { items?: KeyToPath[]; optional?: boolean },
  defaultMode: number | undefined,
): Payload {
  const optional = src.optional ?? false;
  if (!secret) {
    if (optional) return new Map();
    throw new PayloadError(`secret "${name}" not found`);
  }
  const all = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(secret.data ?? {})) all.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(secret.stringData ?? {})) all.set(k, Buffer.from(v, 'utf8'));
  return keyed(all, src.items, defaultMode, optional, (k) => `references non-existent secret key: ${k}`);
}

/** kube's `fieldpath.FormatMap`: sorted `key="value"` lines (Go %q quoting). */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
    .join('\n');
}

function fieldText(pod: Pod, path: string): string {
  const one = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (one) {
    const map = one[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[one[2] ?? ''] ?? '';
  }
  switch (path) {
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    default:
      throw new PayloadError(`unsupported fieldPath: ${path}`);
  }
}

function containerNamed(pod: Pod, name: string): Container | undefined {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((c) => c.name === name);
}

/** A downwardAPI payload. */
export function downwardPayload(
  pod: Pod,
  items: readonly DownwardAPIVolumeFile[] | undefined,
  defaultMode: number | undefined,
  ctx: Pick<SourceContext, 'nodeAllocatable'>,
): Payload {
  const out: Payload = new Map();
  for (const item of items ?? []) {
    let text: string;
    if (item.fieldRef) text = fieldText(pod, item.fieldRef.fieldPath ?? '');
    else if (item.resourceFieldRef) {
      const ref = item.resourceFieldRef;
      const c = containerNamed(pod, ref.containerName ?? '');
      if (!c) throw new PayloadError(`failed to find container "${ref.containerName ?? ''}" in pod`);
      try {
        text = resourceValue(pod, c, ref.resource ?? '', ref.divisor, {
          nodeAllocatable: ctx.nodeAllocatable,
        });
      } catch (err) {
        if (err instanceof EnvError) throw new PayloadError(err.message);
        throw err;
      }
    } else continue;
    out.set(item.path ?? '', { data: Buffer.from(text, 'utf8'), mode: modeOf(item, defaultMode) });
  }
  return out;
}

/** A projected volume's payload: its sources in order (later paths win). */
export async function projectedPayload(
  pod: Pod,
  sources: readonly VolumeProjection[] | undefined,
  defaultMode: number | undefined,
  ctx: SourceContext,
): Promise<Payload> {
  const ns = pod.metadata.namespace ?? '';
  const out: Payload = new Map();
  const add = (p: Payload): void => {
    for (const [k, v] of p) out.set(k, v);
  };
  for (const s of sources ?? []) {
    if (s.configMap) {
      const name = s.configMap.name ?? '';
      add(configMapPayload(name, await ctx.configMap(ns, name), s.configMap, defaultMode));
    } else if (s.secret) {
      const name = s.secret.name ?? '';
      add(secretPayload(name, await ctx.secret(ns, name), s.secret, defaultMode));
    } else if (s.downwardAPI) {
      add(downwardPayload(pod, s.downwardAPI.items, defaultMode, ctx));
    } else if (s.serviceAccountToken) {
      const token = await ctx.token(pod, s.serviceAccountToken);
      out.set(s.serviceAccountToken.path ?? '', {
        data: Buffer.from(token, 'utf8'),
        mode: defaultMode ?? DEFAULT_MODE,
      });
    } else if (s.clusterTrustBundle) {
      throw new PayloadError('clusterTrustBundle projections are not supported by this node');
    }
  }
  return out;
}
