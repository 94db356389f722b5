/**
 * Static pod manifests, decoded as kubelet's file and HTTP sources do (pkg/kubelet/config): a
 * YAML or JSON document holding one Pod or a PodList. Each pod becomes the static pod kubelet
 * would run:
 * - its name gets `-<node name>` (lower case); the namespace defaults to `default`;
 * - its uid is a hash of the manifest, the node and the source (file path or URL), so a changed
 *   manifest is a new pod; `kubernetes.io/config.hash` holds it, `kubernetes.io/config.source`
 *   says `file` or `http`, `kubernetes.io/config.seen` when the agent first saw it;
 * - `spec.nodeName` is the node; it tolerates every NoExecute taint; kube's defaults for the
 *   restart policy, DNS policy and grace period apply.
 *
 * Within one source, a pod whose namespace and name an earlier pod of the source already has is
 * refused too, as kubelet's config merge does (filterInvalidPods): {@link dropDuplicateNames}.
 *
 * Refused, with an error naming the reason (the caller logs it and skips the manifest): a
 * document that is not a Pod or PodList, a pod without a name or containers, and, as kube v1.33
 * does (PreventStaticPodAPIReferences), a pod that references API objects: service accounts,
 * secrets, config maps, persistent volume claims, resource claims, cluster trust bundles.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Pod } from '../../api/types/core-v1.js';
import { allContainers } from '../pod/containers.js';

/** Where a static pod came from (the `kubernetes.io/config.source` annotation). */
export type StaticSource = 'file' | 'http';

/** A manifest kube would refuse; the message is kube's. */
export class ManifestError extends Error {}

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(obj).filter((x): x is Json => x !== undefined) : [];
}

function envRefers(pod: Pod, what: 'secret' | 'configMap'): boolean {
  return allContainers(pod).some(
    (c) =>
      list(c.envFrom).some((e) => obj(e[`${what}Ref`])) ||
      list(c.env).some((e) => obj(obj(e['valueFrom'])?.[`${what}KeyRef`])),
  );
}

/** The API object kind a pod references, in kube's words (HasAPIObjectReference), or undefined. */
export function apiObjectReference(pod: Pod): string | undefined {
  const spec = pod.spec ?? {};
  if (spec.serviceAccountName || spec.serviceAccount) return 'serviceaccounts';
  const volumes = list(spec.volumes);
  if ((spec.imagePullSecrets ?? []).length > 0 || envRefers(pod, 'secret')) return 'secrets';
  if (volumes.some((v) => v['secret'] || obj(obj(v['cephfs'])?.['secretRef']) || v['azureFile']))
    return 'secrets';
  if (envRefers(pod, 'configMap') || volumes.some((v) => v['configMap'])) return 'configmaps';
  if ((spec.resourceClaims ?? []).length > 0) return 'resourceclaims';
  for (const v of volumes) {
    if (v['persistentVolumeClaim'] || v['ephemeral']) return 'persistentvolumeclaims';
    for (const s of list(obj(v['projected'])?.['sources'])) {
      if (s['configMap']) return 'configmaps (via projected volumes)';
      if (s['secret']) return 'secrets (via projected volumes)';
      if (s['serviceAccountToken']) return 'serviceaccounts (via projected volumes)';
      if (s['clusterTrustBundle']) return 'clustertrustbundles';
    }
  }
  return undefined;
}

/** Turns one manifest pod into the static pod kubelet would run. */
export function staticPod(manifest: Pod, nodeName: string, source: string, type: StaticSource): Pod {
  const name = manifest.metadata?.name;
  if (!name) throw new ManifestError('invalid pod: name is needed for the pod');
  if ((manifest.spec?.containers ?? []).length === 0)
    throw new ManifestError('invalid pod: spec.containers: Required value');
  const ref = apiObjectReference(manifest);
  if (ref) throw new ManifestError(`static pods may not reference ${ref}`);
  const hash = createHash('md5')
    .update(JSON.stringify(manifest))
    .update(nodeName)
    .update(source)
    .digest('hex');
  const spec = manifest.spec ?? {};
  return {
    ...manifest,
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...manifest.metadata,
      name: `${name}-${nodeName.toLowerCase()}`,
      namespace: manifest.metadata.namespace || 'default',
      uid: hash,
      annotations: {
        ...(manifest.metadata.annotations ?? {}),
        'kubernetes.io/config.hash': hash,
        'kubernetes.io/config.seen': new Date().toISOString(),
        'kubernetes.io/config.source': type,
      },
    },
    spec: {
      ...spec,
      nodeName,
      restartPolicy: spec.restartPolicy ?? 'Always',
      dnsPolicy: spec.dnsPolicy ?? 'ClusterFirst',
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
      tolerations: [...(spec.tolerations ?? []), { operator: 'Exists', effect: 'NoExecute' }],
    },
  };
}

/**
 * Decodes a manifest (one Pod or a PodList, YAML or JSON) into static pods.
 * @throws ManifestError or a YAML syntax error, with kube's words where kube has them.
 */
export function decodeManifest(text: string, nodeName: string, source: string, type: StaticSource): Pod[] {
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const doc = obj(parse(text));
  if (!doc) throw new ManifestError('invalid manifest: not an object');
  const kind = doc['kind'];
  if (kind === 'PodList') {
    return list(doc['items']).map((p) => staticPod(p as unknown as Pod, nodeName, source, type));
  }
  if (kind !== 'Pod' && kind !== undefined)
    throw new ManifestError(`invalid manifest: kind ${JSON.stringify(kind)}, expected Pod or PodList`);
  if (doc['apiVersion'] !== undefined && doc['apiVersion'] !== 'v1')
    throw new ManifestError(`invalid manifest: apiVersion ${JSON.stringify(doc['apiVersion'])}, expected v1`);
  if (!obj(doc['metadata'])) throw new ManifestError('invalid pod: name is needed for the pod');
  return [staticPod(doc as unknown as Pod, nodeName, source, type)];
}

/**
 * Keeps the first pod of each namespace and name among one source's pods, as kubelet's config
 * merge does (filterInvalidPods; a file source's pods come in file name order). Each pod left out
 * is handed to `refused` with kubelet's FailedValidation message.
 */
export function dropDuplicateNames(
  pods: readonly Pod[],
  type: StaticSource,
  refused: (pod: Pod, message: string) => void,
): Pod[] {
  const names = new Set<string>();
  const kept: Pod[] = [];
  for (const pod of pods) {
    const { name = '', namespace = '', uid = '' } = pod.metadata;
    const full = `${name}_${namespace}`;
    if (names.has(full)) {
      refused(
        pod,
        `Error validating pod ${full}(${uid}) from ${type} due to duplicate pod name ${JSON.stringify(name)}, ignoring`,
      );
      continue;
    }
    names.add(full);
    kept.push(pod);
  }
  return kept;
}
