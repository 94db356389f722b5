/**
 * `ValidatePodSpec` and `ValidatePodTemplateSpec`: the pod spec as a whole, shared by Pods and
 * every pod template (Deployment, Job, ...). Run it on defaulted objects: like kube, it
 * requires the fields defaulting fills (restartPolicy, dnsPolicy, terminationGracePeriodSeconds,
 * imagePullPolicy, ...).
 */
import {
  duplicate,
  forbidden,
  invalid,
  notFound,
  notSupported,
  required,
  type FieldError,
} from '../field-error.js';
import {
  inclusiveRangeError,
  ipErrors,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
} from '../formats.js';
import { arr, bool, has, isObject, num, obj, objects, str, strings, type JsonObject } from '../json.js';
import { duplicates, validateAnnotations, validateLabels } from '../meta.js';
import { child, index } from '../path.js';
import {
  validateContainerCommon,
  validateContainers,
  validateInitContainers,
  validateSeccompProfile,
  type ContainerContext,
} from './containers.js';
import { validateResourceList } from './resources.js';
import {
  validateAffinity,
  validateDNSConfig,
  validateTolerations,
  validateTopologySpread,
} from './scheduling.js';
import { validateVolumes } from './volumes.js';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const MAX_INT32 = 2147483647;
const MAX_ID = 4294967295;
/** kube's sysctl names: dot- or slash-separated segments of lower-case letters, digits, `-` and `_`. */
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const SYSCTL_MAX_LENGTH = 253;

/** Options that differ between a Pod and a template. */
export interface PodSpecOptions {
  /** The spec is a Pod's, not a template's (stricter host-port and image rules). */
  readonly isPod: boolean;
}

function validateEnum(value: string, allowed: readonly string[], path: string, errs: FieldError[]): void {
  if (value === '') errs.push(required(path));
  else if (!allowed.includes(value)) errs.push(notSupported(path, value, allowed));
}

function validatePodSecurityContext(spec: JsonObject, path: string, errs: FieldError[]): void {
  const sc = obj(spec, 'securityContext');
  if (sc === undefined) return;
  for (const f of ['fsGroup', 'runAsUser', 'runAsGroup']) {
    const v = num(sc, f);
    if (v !== undefined && (v < 0 || v > MAX_ID))
      errs.push(invalid(child(path, f), v, inclusiveRangeError(0, MAX_ID)));
  }
  (arr(sc, 'supplementalGroups') ?? []).forEach((g, i) => {
    if (typeof g === 'number' && (g < 0 || g > MAX_ID)) {
      errs.push(invalid(index(child(path, 'supplementalGroups'), i), g, inclusiveRangeError(0, MAX_ID)));
    }
  });
  if (bool(spec, 'shareProcessNamespace') === true && bool(spec, 'hostPID') === true) {
    errs.push(
      invalid(
        child(path, 'shareProcessNamespace'),
        true,
        'ShareProcessNamespace and HostPID cannot both be enabled',
      ),
    );
  }
  const sysctlNames = new Set<string>();
  objects(sc, 'sysctls').forEach((s, i) => {
    const name = str(s, 'name');
    const p = child(index(child(path, 'sysctls'), i), 'name');
    if (name === '') errs.push(required(p));
    else if (name.length > SYSCTL_MAX_LENGTH || !SYSCTL_NAME.test(name))
      errs.push(
        invalid(
          p,
          name,
          `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME.source}`,
        ),
      );
    else if (sysctlNames.has(name)) errs.push(duplicate(p, name));
    sysctlNames.add(name);
  });
  const fsPolicy = sc['fsGroupChangePolicy'];
  if (fsPolicy !== undefined && fsPolicy !== null && fsPolicy !== 'OnRootMismatch' && fsPolicy !== 'Always') {
    errs.push(notSupported(child(path, 'fsGroupChangePolicy'), fsPolicy, ['Always', 'OnRootMismatch']));
  }
  validateSeccompProfile(sc, child(path, 'seccompProfile'), errs);
}

function validateHostNetworkPorts(
  spec: JsonObject,
  path: string,
  opts: PodSpecOptions,
  errs: FieldError[],
): void {
  if (bool(spec, 'hostNetwork') !== true) return;
  objects(spec, 'containers').forEach((c, i) => {
    objects(c, 'ports').forEach((port, j) => {
      const hp = num(port, 'hostPort') ?? 0;
      const cp = num(port, 'containerPort') ?? 0;
      if ((opts.isPod || hp !== 0) && hp !== cp) {
        errs.push(
          invalid(
            child(index(child(index(child(path, 'containers'), i), 'ports'), j), 'hostPort'),
            hp,
            'must match `containerPort` when `hostNetwork` is true',
          ),
        );
      }
    });
  });
}

function validateEphemeralContainers(
  spec: JsonObject,
  ctx: ContainerContext,
  path: string,
  errs: FieldError[],
): void {
  const others = new Set(
    [...objects(spec, 'containers'), ...objects(spec, 'initContainers')].map((c) => str(c, 'name')),
  );
  const all = new Set(others);
  objects(spec, 'ephemeralContainers').forEach((c, i) => {
    const p = index(path, i);
    validateContainerCommon(c, ctx, p, errs);
    const name = str(c, 'name');
    if (all.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else all.add(name);
    const target = str(c, 'targetContainerName');
    if (target !== '' && !others.has(target)) {
      errs.push(notFound(child(p, 'targetContainerName'), target));
    }
    for (const k of EPHEMERAL_FORBIDDEN) {
      const v = c[k];
      const set = Array.isArray(v)
        ? v.length > 0
        : isObject(v)
          ? Object.keys(v).length > 0
          : v !== undefined && v !== null && v !== '';
      if (set) errs.push(forbidden(child(p, k), 'cannot be set for an Ephemeral Container'));
    }
    // Sub-path mounts are bind mounts that outlive the container until the pod goes.
    objects(c, 'volumeMounts').forEach((m, mi) => {
      for (const k of ['subPath', 'subPathExpr']) {
        if (str(m, k) !== '')
          errs.push(
            forbidden(
              child(index(child(p, 'volumeMounts'), mi), k),
              'cannot be set for an Ephemeral Container',
            ),
          );
      }
    });
  });
}

/**
 * The container fields an ephemeral container may not set, in the order of kube's
 * EphemeralContainerCommon (its allow list leaves them out).
 */
const EPHEMERAL_FORBIDDEN = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
] as const;

/**
 * Validates a pod spec at `path` (`spec`, `spec.template.spec`, ...).
 *
 * @param opts `isPod` for a Pod's own spec.
 */
export function validatePodSpec(
  spec: JsonObject,
  path: string,
  opts: PodSpecOptions,
  errs: FieldError[],
): void {
  const grace = num(spec, 'terminationGracePeriodSeconds');
  if (!has(spec, 'terminationGracePeriodSeconds'))
    errs.push(required(child(path, 'terminationGracePeriodSeconds')));
  const hostUsers = bool(spec, 'hostUsers') !== false;
  const volumes = validateVolumes(spec, child(path, 'volumes'), errs);
  const ctx: ContainerContext = { volumes, gracePeriod: grace, hostUsers };
  validateContainers(spec, ctx, child(path, 'containers'), errs);
  validateInitContainers(spec, ctx, child(path, 'initContainers'), errs);
  validateEphemeralContainers(spec, ctx, child(path, 'ephemeralContainers'), errs);
  validateHostNetworkPorts(spec, path, opts, errs);
  validateEnum(str(spec, 'restartPolicy'), RESTART_POLICIES, child(path, 'restartPolicy'), errs);
  validateEnum(str(spec, 'dnsPolicy'), DNS_POLICIES, child(path, 'dnsPolicy'), errs);
  errs.push(...validateLabels(spec['nodeSelector'], child(path, 'nodeSelector')));
  validatePodSecurityContext(spec, child(path, 'securityContext'), errs);
  objects(spec, 'imagePullSecrets').forEach((s, i) => {
    if (Object.keys(s).some((k) => k !== 'name'))
      errs.push(invalid(index(child(path, 'imagePullSecrets'), i), s, 'only name may be set'));
  });
  validateAffinity(spec, child(path, 'affinity'), errs);
  validateDNSConfig(spec, child(path, 'dnsConfig'), errs);
  objects(spec, 'readinessGates').forEach((g, i) => {
    const t = str(g, 'conditionType');
    for (const msg of isQualifiedName(t))
      errs.push(invalid(child(index(child(path, 'readinessGates'), i), 'conditionType'), t, msg));
  });
  const gates = objects(spec, 'schedulingGates').map((g) => str(g, 'name'));
  gates.forEach((g, i) => {
    for (const msg of isQualifiedName(g))
      errs.push(invalid(index(child(path, 'schedulingGates'), i), g, msg));
  });
  errs.push(...duplicates(gates, child(path, 'schedulingGates')));
  validateTopologySpread(spec, child(path, 'topologySpreadConstraints'), errs);
  for (const [k, check] of [
    ['serviceAccountName', isDNS1123Subdomain],
    ['nodeName', isDNS1123Subdomain],
    ['hostname', isDNS1123Label],
    ['subdomain', isDNS1123Label],
    ['priorityClassName', isDNS1123Subdomain],
  ] as const) {
    const v = str(spec, k);
    if (v !== '') for (const msg of check(v)) errs.push(invalid(child(path, k), v, msg));
  }
  const ads = num(spec, 'activeDeadlineSeconds');
  if (ads !== undefined && (ads < 1 || ads > MAX_INT32)) {
    errs.push(invalid(child(path, 'activeDeadlineSeconds'), ads, inclusiveRangeError(1, MAX_INT32)));
  }
  validateTolerations(spec, child(path, 'tolerations'), errs);
  objects(spec, 'hostAliases').forEach((a, i) => {
    const p = index(child(path, 'hostAliases'), i);
    for (const msg of ipErrors(str(a, 'ip'))) errs.push(invalid(child(p, 'ip'), str(a, 'ip'), msg));
    strings(a, 'hostnames').forEach((h, j) => {
      for (const msg of isDNS1123Subdomain(h)) errs.push(invalid(index(child(p, 'hostnames'), j), h, msg));
    });
  });
  const runtimeClass = spec['runtimeClassName'];
  if (typeof runtimeClass === 'string') {
    for (const msg of isDNS1123Subdomain(runtimeClass))
      errs.push(invalid(child(path, 'runtimeClassName'), runtimeClass, msg));
  }
  const preemption = spec['preemptionPolicy'];
  if (preemption !== undefined && preemption !== null) {
    validateEnum(
      typeof preemption === 'string' ? preemption : '',
      ['PreemptLowerPriority', 'Never'],
      child(path, 'preemptionPolicy'),
      errs,
    );
  }
  validateResourceList(spec['overhead'], child(path, 'overhead'), errs);
  const os = obj(spec, 'os');
  if (os !== undefined) {
    const name = str(os, 'name');
    if (name === '') errs.push(required(child(path, 'os', 'name')));
    else if (name !== 'linux' && name !== 'windows')
      errs.push(notSupported(child(path, 'os', 'name'), name, ['linux', 'windows']));
  }
}

/**
 * `ValidatePodTemplateSpec`: template labels and annotations, the pod spec, and no ephemeral
 * containers.
 */
export function validatePodTemplateSpec(template: JsonObject, path: string, errs: FieldError[]): void {
  const meta = obj(template, 'metadata');
  errs.push(...validateLabels(meta?.['labels'], child(path, 'labels')));
  errs.push(...validateAnnotations(meta?.['annotations'], child(path, 'annotations')));
  const spec = obj(template, 'spec') ?? {};
  validatePodSpec(spec, child(path, 'spec'), { isPod: false }, errs);
  if ((arr(spec, 'ephemeralContainers') ?? []).length > 0) {
    errs.push(
      forbidden(
        child(path, 'spec', 'ephemeralContainers'),
        'ephemeral containers not allowed in pod template',
      ),
    );
  }
}
