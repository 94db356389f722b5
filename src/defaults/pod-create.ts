/**
 * What kube v1.33's pod strategy does to a new pod besides its status (`PrepareForCreate`):
 *
 * - `mutatePodAffinity` (MatchLabelKeysInPodAffinity, on by default): each pod (anti-)affinity
 *   term's `matchLabelKeys` and `mismatchLabelKeys` become `In` and `NotIn` requirements of its
 *   label selector, with the values of the pod's own labels, so the scheduler reads only the
 *   selector. A term without a selector, or a key the pod has no label for, adds nothing.
 * - `applyAppArmorVersionSkew`: a container's AppArmor profile field and its deprecated
 *   `container.apparmor.security.beta.kubernetes.io/<name>` annotation are synced, whichever the
 *   client set: the annotation from the container's (or the pod's) field, or the container's
 *   field from the annotation, unless it names the pod's profile. An annotation that sets the
 *   field, or that names no valid profile, is warned about, as kube warns.
 */
import { obj, objects, str, strings } from '../validation/json.js';
import { key } from '../validation/path.js';
import { ensureObject, type JsonObject } from './mutate.js';

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const RUNTIME_DEFAULT = 'runtime/default';
const UNCONFINED = 'unconfined';
const LOCALHOST_PREFIX = 'localhost/';
/** kube's `maxLocalhostProfileLength`. */
const MAX_LOCALHOST_PROFILE = 4095;

/** `term`'s label keys merged into its selector (kube's `applyMatchLabelKeysAndMismatchLabelKeys`). */
function mergeLabelKeys(term: JsonObject, labels: JsonObject): void {
  const selector = obj(term, 'labelSelector');
  const match = strings(term, 'matchLabelKeys');
  const mismatch = strings(term, 'mismatchLabelKeys');
  if (selector === undefined || (match.length === 0 && mismatch.length === 0)) return;
  const added = [
    ...match.map((k) => [k, 'In'] as const),
    ...mismatch.map((k) => [k, 'NotIn'] as const),
  ].flatMap(([k, operator]) =>
    typeof labels[k] === 'string' ? [{ key: k, operator, values: [labels[k]] }] : [],
  );
  if (added.length === 0) return;
  const existing = Array.isArray(selector['matchExpressions'])
    ? (selector['matchExpressions'] as unknown[])
    : [];
  selector['matchExpressions'] = [...existing, ...added];
}

/** kube's `mutatePodAffinity`. */
export function mutatePodAffinity(pod: JsonObject): void {
  const affinity = obj(obj(pod, 'spec'), 'affinity');
  const labels = obj(obj(pod, 'metadata'), 'labels') ?? {};
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const terms = obj(affinity, kind);
    for (const t of objects(terms, 'preferredDuringSchedulingIgnoredDuringExecution')) {
      const term = obj(t, 'podAffinityTerm');
      if (term !== undefined) mergeLabelKeys(term, labels);
    }
    for (const term of objects(terms, 'requiredDuringSchedulingIgnoredDuringExecution'))
      mergeLabelKeys(term, labels);
  }
}

/** The annotation value of a profile field (kube's `appArmorAnnotationForField`), or ''. */
function annotationFor(profile: JsonObject): string {
  switch (profile['type']) {
    case 'Unconfined':
      return UNCONFINED;
    case 'RuntimeDefault':
      return RUNTIME_DEFAULT;
    case 'Localhost':
      return typeof profile['localhostProfile'] === 'string'
        ? LOCALHOST_PREFIX + profile['localhostProfile']
        : '';
    default:
      return '';
  }
}

/** The profile field an annotation names, when it is a valid one (kube's `apparmorFieldForAnnotation`). */
function fieldFor(annotation: string): JsonObject | undefined {
  if (annotation === UNCONFINED) return { type: 'Unconfined' };
  if (annotation === RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
  if (!annotation.startsWith(LOCALHOST_PREFIX)) return undefined;
  const localhostProfile = annotation.slice(LOCALHOST_PREFIX.length);
  if (localhostProfile === '' || localhostProfile.length > MAX_LOCALHOST_PROFILE) return undefined;
  return { type: 'Localhost', localhostProfile };
}

const sameProfile = (a: JsonObject, b: JsonObject | undefined): boolean =>
  b !== undefined &&
  a['type'] === b['type'] &&
  (a['localhostProfile'] ?? '') === (b['localhostProfile'] ?? '');

/** kube's `applyAppArmorVersionSkew`; each warning is given to `warn`. */
export function applyAppArmorVersionSkew(pod: JsonObject, warn: (message: string) => void): void {
  const spec = obj(pod, 'spec');
  if (spec === undefined || str(obj(spec, 'os'), 'name') === 'windows') return;
  const podProfile = obj(obj(spec, 'securityContext'), 'appArmorProfile');
  const meta = obj(pod, 'metadata');
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of objects(spec, list)) {
      const annotationKey = APPARMOR_ANNOTATION_PREFIX + str(c, 'name');
      const annotations = obj(meta, 'annotations');
      const annotation = annotations?.[annotationKey];
      const containerProfile = obj(obj(c, 'securityContext'), 'appArmorProfile');
      if (annotations === undefined || !Object.hasOwn(annotations, annotationKey)) {
        const profile = containerProfile ?? podProfile;
        const value = profile === undefined ? '' : annotationFor(profile);
        const target = value === '' || meta === undefined ? undefined : ensureObject(meta, 'annotations');
        if (target !== undefined) target[annotationKey] = value;
        continue;
      }
      if (containerProfile !== undefined) continue;
      const field = typeof annotation === 'string' ? fieldFor(annotation) : undefined;
      let deprecated = field === undefined;
      if (field !== undefined && !sameProfile(field, podProfile)) {
        const security = ensureObject(c, 'securityContext');
        if (security !== undefined) security['appArmorProfile'] = field;
        deprecated = true;
      }
      if (deprecated)
        warn(
          `${key('metadata.annotations', annotationKey)}: deprecated since v1.30; use the "appArmorProfile" field instead`,
        );
    }
  }
}
