/**
 * The ServiceAccount admission step for pod creates, as kube-apiserver v1.33's plugin does it:
 * 1. a mirror pod (annotation `kubernetes.io/config.mirror`) may not name a service account and
 *    is otherwise left alone;
 * 2. `spec.serviceAccountName` defaults to `default`, and the deprecated `spec.serviceAccount`
 *    follows it (kube's conversion keeps the two equal);
 * 3. the service account must exist (403: `error looking up service account <ns>/<name>:
 *    serviceaccount "<name>" not found`); a missing `default` account is waited for up to
 *    {@link DEFAULT_ACCOUNT_WAIT_MS} first, since the controller makes it a moment after its
 *    namespace (kube reads it again up to 10 times, 100-200 ms apart, for the same reason);
 * 4. unless `automountServiceAccountToken` is false (the pod's, else the account's), a projected
 *    volume `kube-api-access-<5 random>` (a bound token for 3607 s, the `kube-root-ca.crt`
 *    ConfigMap's `ca.crt`, the namespace through the downward API; defaultMode 0644) is added, and
 *    every container and init container without a mount at
 *    `/var/run/secrets/kubernetes.io/serviceaccount` gets one (read-only);
 * 5. without image pull secrets of its own, the pod gets the account's.
 */
import { MIRROR_POD_ANNOTATION } from '../api/annotations.js';
import { randomInt } from 'node:crypto';
import { forbidden } from '../api/errors.js';
import type { AdmissionPlugin } from '../admission/index.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import type { ObjectGetter } from './lookup.js';

/** Where the token volume is mounted in every container. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Prefix of the projected volume's name. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** How long a pod create waits for a namespace's `default` account to appear. */
export const DEFAULT_ACCOUNT_WAIT_MS = 2000;

async function lookupAccount(
  lookup: ObjectGetter,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  const until = Date.now() + (name === 'default' ? DEFAULT_ACCOUNT_WAIT_MS : 0);
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    const sa = await lookup.get('ServiceAccount', namespace, name);
    if (sa !== undefined || Date.now() >= until) return sa;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
/** The alphabet of kube's random name suffixes (`utilrand.String`). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

/** The projected volume kube adds (`TokenVolumeSource`). */
export function tokenVolume(name: string): JsonObject {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
      defaultMode: 420,
    },
  };
}

function podRefused(pod: KubeObject, message: string): Error {
  const name = pod.metadata.name || pod.metadata.generateName || 'Unknown';
  return forbidden(`pods "${name}" is forbidden: ${message}`, { name, kind: 'pods' });
}

function objects(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

/** The admission step over `lookup` (see the module comment); other kinds pass untouched. */
export function serviceAccountAdmission(lookup: ObjectGetter): AdmissionPlugin {
  return {
    name: 'ServiceAccount',
    handles: (attrs) =>
      attrs.operation === 'CREATE' &&
      attrs.subresource === undefined &&
      attrs.type.group === '' &&
      attrs.type.kind === 'Pod',
    admit: (attrs) => admitPod(lookup, attrs.object),
  };
}

async function admitPod(lookup: ObjectGetter, pod: KubeObject | undefined): Promise<void> {
  if (pod === undefined) return;
  const spec = isJsonObject(pod['spec']) ? pod['spec'] : undefined;
  if (spec === undefined) return;
  const namespace = pod.metadata.namespace ?? '';
  if ((pod.metadata.annotations ?? {})[MIRROR_POD_ANNOTATION] !== undefined) {
    if (typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '') {
      throw podRefused(pod, 'a mirror pod may not reference service accounts');
    }
    return;
  }
  let saName = typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : '';
  if (saName === '') {
    const deprecated = typeof spec['serviceAccount'] === 'string' ? spec['serviceAccount'] : '';
    saName = deprecated !== '' ? deprecated : 'default';
  }
  spec['serviceAccountName'] = saName;
  spec['serviceAccount'] = saName;
  const sa = await lookupAccount(lookup, namespace, saName);
  if (sa === undefined) {
    throw podRefused(
      pod,
      `error looking up service account ${namespace}/${saName}: serviceaccount ${JSON.stringify(saName)} not found`,
    );
  }
  const automount =
    typeof spec['automountServiceAccountToken'] === 'boolean'
      ? spec['automountServiceAccountToken']
      : typeof sa['automountServiceAccountToken'] === 'boolean'
        ? sa['automountServiceAccountToken']
        : true;
  if (automount) mountToken(spec);
  if (objects(spec['imagePullSecrets']).length === 0) {
    const pull = objects(sa['imagePullSecrets']);
    if (pull.length > 0) spec['imagePullSecrets'] = pull.map((r) => ({ ...r }));
  }
}

function mountToken(spec: JsonObject): void {
  const volumes = objects(spec['volumes']);
  const existing = volumes.find(
    (v) => typeof v['name'] === 'string' && v['name'].startsWith(TOKEN_VOLUME_PREFIX),
  );
  const volumeName =
    typeof existing?.['name'] === 'string' ? existing['name'] : `${TOKEN_VOLUME_PREFIX}${randomSuffix(5)}`;
  let needsVolume = false;
  for (const field of ['initContainers', 'containers']) {
    for (const container of objects(spec[field])) {
      const mounts = objects(container['volumeMounts']);
      if (mounts.some((m) => m['mountPath'] === TOKEN_MOUNT_PATH)) continue;
      container['volumeMounts'] = [
        ...mounts,
        { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH },
      ];
      needsVolume = true;
    }
  }
  if (existing === undefined && needsVolume) spec['volumes'] = [...volumes, tokenVolume(volumeName)];
}
