/**
 * The warnings kube-apiserver v1.33 sends (as `Warning` headers, which kubectl prints) when a pod
 * or a pod template is written with something valid but likely wrong: kube's
 * `GetWarningsForPod`/`GetWarningsForPodTemplate` and the strategies' `WarningsOnCreate` and
 * `WarningsOnUpdate` that call them.
 *
 * - Pods warn on create only (kube skips pod updates: they are frequent and seldom a person's).
 * - The workload kinds warn on create, and on an update that changed their generation (a
 *   DaemonSet: its template generation).
 * - Map keys (node selector, annotations) are visited in the object's order; Go's map order is
 *   random, so kube's order of those warnings is not fixed either.
 *
 * Not done: the AppArmor annotation warning of a bare pod (kube sends it from its version-skew
 * step). The core kinds without a pod template warn in object-warnings.ts.
 */
import { POD_TEMPLATE_PATHS } from '../../api/pod-templates.js';
import { canonicalQuantity, milliValue, parseQuantity } from '../../api/quantity.js';
import { DAEMONSET_TEMPLATE_GENERATION } from '../../api/annotations.js';
import { isDNS1123Label, isLabelValue } from '../formats.js';
import { arr, isObject, num, obj, objectAtPath, objects, str, type JsonObject } from '../json.js';
import { child, index, key } from '../path.js';
import { ipWarnings, q } from './ip-warnings.js';

/** kube's deprecated node labels and what to say of each (`pkg/api/node`). */
export const DEPRECATED_NODE_LABELS: ReadonlyMap<string, string> = new Map([
  ['beta.kubernetes.io/arch', 'deprecated since v1.14; use "kubernetes.io/arch" instead'],
  ['beta.kubernetes.io/os', 'deprecated since v1.14; use "kubernetes.io/os" instead'],
  [
    'failure-domain.beta.kubernetes.io/region',
    'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
  ],
  [
    'failure-domain.beta.kubernetes.io/zone',
    'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  ],
  [
    'beta.kubernetes.io/instance-type',
    'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
  ],
  ['app.kubernetes.io/created-by', 'deprecated since v1.9'],
  [
    'scheduler.alpha.kubernetes.io/preferAvoidPods',
    'deprecated since v1.22; use Taints and Tolerations instead',
  ],
  ['node-role.kubernetes.io/master', 'use "node-role.kubernetes.io/control-plane" instead'],
]);

const DEPRECATED_ANNOTATIONS: ReadonlyMap<string, string> = new Map([
  [
    'scheduler.alpha.kubernetes.io/critical-pod',
    'non-functional in v1.16+; use the "priorityClassName" field instead',
  ],
  ['security.alpha.kubernetes.io/sysctls', 'non-functional in v1.11+; use the "sysctls" field instead'],
  [
    'security.alpha.kubernetes.io/unsafe-sysctls',
    'non-functional in v1.11+; use the "sysctls" field instead',
  ],
]);

/**
 * Volume sources that kube v1.33 names as deprecated or gone: the JSON key, the name kube's
 * warning gives the field (StorageOS's differs from its key), and since when.
 */
export const DEPRECATED_VOLUMES: readonly (readonly [string, string, string])[] = [
  ['photonPersistentDisk', 'photonPersistentDisk', 'deprecated in v1.11, non-functional in v1.16+'],
  // The GitRepoVolumeDriver gate is off by default in v1.33.
  ['gitRepo', 'gitRepo', 'deprecated in v1.11, and disabled by default in v1.33+'],
  ['scaleIO', 'scaleIO', 'deprecated in v1.16, non-functional in v1.22+'],
  ['flocker', 'flocker', 'deprecated in v1.22, non-functional in v1.25+'],
  ['storageos', 'storageOS', 'deprecated in v1.22, non-functional in v1.25+'],
  ['quobyte', 'quobyte', 'deprecated in v1.22, non-functional in v1.25+'],
  ['glusterfs', 'glusterfs', 'deprecated in v1.25, non-functional in v1.26+'],
  ['cephfs', 'cephfs', 'deprecated in v1.28, non-functional in v1.31+'],
  ['rbd', 'rbd', 'deprecated in v1.28, non-functional in v1.31+'],
];

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const APPARMOR_CONTAINER_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/** Go's `%v` of a string slice. */
const goList = (items: readonly string[]): string => `[${items.join(' ')}]`;

/** A quantity at `o[k]` whose byte count has a fraction, as kube's canonical text; or undefined. */
function fractionalBytes(o: JsonObject | undefined, k: string): string | undefined {
  const parsed = parseQuantity(o?.[k]);
  if (parsed === undefined || milliValue(parsed) % 1000n === 0n) return undefined;
  return canonicalQuantity(parsed);
}

function fractionalWarning(path: string, value: string): string {
  return `${path}: fractional byte value ${q(value)} is invalid, must be an integer`;
}

/** A PersistentVolumeClaim spec's fractional storage request or limit (kube's pvcutil). */
export function claimSpecWarnings(path: string, spec: JsonObject | undefined): string[] {
  const out: string[] = [];
  const resources = obj(spec, 'resources');
  for (const part of ['requests', 'limits']) {
    const value = fractionalBytes(obj(resources, part), 'storage');
    if (value !== undefined)
      out.push(fractionalWarning(key(child(path, 'resources', part), 'storage'), value));
  }
  return out;
}

/** A node selector term's deprecated label keys, and (for preferences) invalid label values. */
export function nodeSelectorTermWarnings(
  term: JsonObject | undefined,
  checkValues: boolean,
  path: string,
): string[] {
  const out: string[] = [];
  objects(term, 'matchExpressions').forEach((e, i) => {
    const k = str(e, 'key');
    const msg = DEPRECATED_NODE_LABELS.get(k);
    if (msg !== undefined)
      out.push(`${child(index(child(path, 'matchExpressions'), i), 'key')}: ${k} is ${msg}`);
    if (!checkValues) return;
    (arr(e, 'values') ?? []).forEach((v, j) => {
      if (typeof v !== 'string') return;
      for (const m of isLabelValue(v))
        out.push(
          `${index(child(index(child(path, 'matchExpressions'), i), 'values'), j)}: ${v} is invalid, ${m}`,
        );
    });
  });
  return out;
}

/** A path and what it comes from, as kube's `pathAndSource` prints. */
interface Sourced {
  readonly path: string;
  readonly source: string;
}

const sourcedText = (p: Sourced): string => (p.source === '' ? q(p.path) : `${q(p.path)} (${p.source})`);

/** The earlier paths that `needle` equals, contains or lies within. */
function overlapping(haystack: readonly Sourced[], needle: Sourced): Sourced[] {
  if (needle.path === '') return [];
  return haystack.filter(
    (item) =>
      item.path !== '' &&
      (`${item.path}/`.startsWith(`${needle.path}/`) || `${needle.path}/`.startsWith(`${item.path}/`)),
  );
}

const trimSlashes = (path: string): string => path.replace(/\/+$/, '');

/** Overlaps among one source's item paths. */
function mappingOverlaps(paths: readonly Sourced[]): string[] {
  const out: string[] = [];
  const seen: Sourced[] = [];
  for (const raw of paths) {
    const p = { ...raw, path: trimSlashes(raw.path) };
    for (const c of overlapping(seen, p)) out.push(`${sourcedText(p)} with ${sourcedText(c)}`);
    seen.push(p);
  }
  return out;
}

function itemPaths(source: JsonObject | undefined, origin: string): Sourced[] | undefined {
  const items = arr(source, 'items');
  if (items === undefined) return undefined;
  return items.map((item) => ({ path: str(isObject(item) ? item : undefined, 'path'), source: origin }));
}

/** kube's warningsForOverlappingVirtualPaths, and empty projected sources. */
function volumePathWarnings(volumes: readonly JsonObject[]): string[] {
  const out: string[] = [];
  for (const v of volumes) {
    const name = str(v, 'name');
    const warn = (desc: string, body: string): string =>
      `volume ${q(name)} (${desc}): overlapping paths: ${body}`;
    const configMap = obj(v, 'configMap');
    const cm = itemPaths(configMap, '');
    if (cm !== undefined)
      for (const o of mappingOverlaps(cm)) out.push(warn(`ConfigMap ${q(str(configMap, 'name'))}`, o));
    const secret = obj(v, 'secret');
    const sec = itemPaths(secret, '');
    if (sec !== undefined)
      for (const o of mappingOverlaps(sec)) out.push(warn(`Secret ${q(str(secret, 'secretName'))}`, o));
    const down = itemPaths(obj(v, 'downwardAPI'), '');
    if (down !== undefined) for (const o of mappingOverlaps(down)) out.push(warn('DownwardAPI', o));
    const projected = obj(v, 'projected');
    if (projected === undefined) continue;
    const all: Sourced[] = [];
    // As kube's loop: a source that gives no paths leaves the previous source's paths in place,
    // and those are checked again.
    let paths: Sourced[] = [];
    for (const s of objects(projected, 'sources')) {
      if (Object.keys(s).every((k) => s[k] === null || s[k] === undefined)) {
        out.push(`volume ${q(name)} (Projected) has no sources provided`);
        continue;
      }
      const pcm = obj(s, 'configMap');
      const psec = obj(s, 'secret');
      const pdown = obj(s, 'downwardAPI');
      const token = obj(s, 'serviceAccountToken');
      const bundle = obj(s, 'clusterTrustBundle');
      if (pcm !== undefined && arr(pcm, 'items') !== undefined)
        paths = itemPaths(pcm, `ConfigMap ${q(str(pcm, 'name'))}`) ?? [];
      else if (psec !== undefined && arr(psec, 'items') !== undefined)
        paths = itemPaths(psec, `Secret ${q(str(psec, 'name'))}`) ?? [];
      else if (pdown !== undefined && arr(pdown, 'items') !== undefined)
        paths = itemPaths(pdown, 'DownwardAPI') ?? [];
      else if (token !== undefined) paths = [{ path: str(token, 'path'), source: 'ServiceAccountToken' }];
      else if (bundle !== undefined) {
        const bundleName = typeof bundle['name'] === 'string' ? bundle['name'] : str(bundle, 'signerName');
        paths = [{ path: str(bundle, 'path'), source: `ClusterTrustBundle ${q(bundleName)}` }];
      }
      for (const raw of paths) {
        const p = { ...raw, path: trimSlashes(raw.path) };
        for (const c of overlapping(all, p))
          out.push(warn('Projected', `${sourcedText(p)} with ${sourcedText(c)}`));
        all.push(p);
      }
    }
  }
  return out;
}

/** A warning for each item whose `field` an earlier item already had. */
function repeats(
  items: readonly JsonObject[],
  field: string,
  warn: (i: number, value: string) => string,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const value = str(item, field);
    if (seen.has(value)) out.push(warn(i, value));
    seen.add(value);
  });
  return out;
}

/** Containers of every kind with their paths, in kube's order (init, regular, ephemeral). */
function containersWithPaths(spec: JsonObject | undefined, specPath: string): [JsonObject, string][] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((list) =>
    objects(spec, list).map((c, i): [JsonObject, string] => [c, index(child(specPath, list), i)]),
  );
}

/** Go's `%+v` of a container port, as kube prints it in the hostIP warning. */
function portText(p: JsonObject): string {
  return `{Name:${str(p, 'name')} HostPort:${num(p, 'hostPort') ?? 0} ContainerPort:${num(p, 'containerPort') ?? 0} Protocol:${str(p, 'protocol')} HostIP:${str(p, 'hostIP')}}`;
}

function portWarnings(containers: readonly [JsonObject, string][]): string[] {
  const out: string[] = [];
  const byPort = new Map<string, { field: string; port: JsonObject }[]>();
  for (const [c, path] of containers) {
    objects(c, 'ports').forEach((port, i) => {
      const field = index(child(path, 'ports'), i);
      const hostIP = str(port, 'hostIP');
      const hostPort = num(port, 'hostPort') ?? 0;
      if (hostIP !== '' && hostPort === 0)
        out.push(`${field}: hostIP set without hostPort: ${portText(port)}`);
      const k = `${num(port, 'containerPort') ?? 0}/${str(port, 'protocol')}`;
      const others = byPort.get(k) ?? [];
      for (const other of others) {
        const otherIP = str(other.port, 'hostIP');
        const otherPort = num(other.port, 'hostPort') ?? 0;
        if (hostIP === otherIP && hostPort === otherPort)
          out.push(`${field}: duplicate port definition with ${other.field}`);
        else if (hostPort === 0 || otherPort === 0)
          out.push(`${field}: overlapping port definition with ${other.field}`);
        else if (hostPort === otherPort && (hostIP === '') !== (otherIP === ''))
          out.push(`${field}: dangerously ambiguous port definition with ${other.field}`);
      }
      byPort.set(k, [...others, { field, port }]);
    });
  }
  const names = new Map<string, string>();
  for (const [c, path] of containers) {
    objects(c, 'ports').forEach((port, i) => {
      const name = str(port, 'name');
      if (name === '') return;
      const field = index(child(path, 'ports'), i);
      const other = names.get(name);
      if (other === undefined) names.set(name, field);
      else
        out.push(
          `${field}: duplicate port name ${q(name)} with ${other}, services and probes that select ports by name will use ${other}`,
        );
    });
  }
  return out;
}

/** Warnings of a container's env: a later variable that hides an earlier one of its name. */
function envWarnings(c: JsonObject, path: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  objects(c, 'env').forEach((item, i) => {
    const name = str(item, 'name');
    if (!seen.has(name)) {
      seen.add(name);
      return;
    }
    const ref = `$(${name})`;
    const value = str(item, 'value');
    if (item['valueFrom'] != null || value === ref || !value.includes(ref))
      out.push(
        `${index(child(path, 'env'), i)}: hides previous definition of ${q(name)}, which may be dropped when using apply`,
      );
  });
  return out;
}

function affinityTermWarnings(terms: readonly JsonObject[], path: string, weighted: boolean): string[] {
  const out: string[] = [];
  terms.forEach((t, i) => {
    const term = weighted ? obj(t, 'podAffinityTerm') : t;
    if (term?.['labelSelector'] == null) {
      const at = weighted
        ? child(index(path, i), 'podAffinityTerm', 'labelSelector')
        : child(index(path, i), 'labelSelector');
      out.push(`${at}: a null labelSelector results in matching no pod`);
    }
  });
  return out;
}

/**
 * kube's warningsForPodSpecAndMeta: the warnings of a pod spec and its metadata, with paths
 * under `prefix` (`''` for a pod, `spec.template` for a Deployment's template, ...).
 */
export function podSpecWarnings(
  prefix: string,
  spec: JsonObject | undefined,
  meta: JsonObject | undefined,
): string[] {
  const out: string[] = [];
  const specPath = child(prefix, 'spec');
  const annotations = obj(meta, 'annotations') ?? {};
  for (const k of Object.keys(obj(spec, 'nodeSelector') ?? {})) {
    const msg = DEPRECATED_NODE_LABELS.get(k);
    if (msg !== undefined) out.push(`${key(child(specPath, 'nodeSelector'), k)}: ${msg}`);
  }
  const nodeAffinity = obj(obj(spec, 'affinity'), 'nodeAffinity');
  if (nodeAffinity !== undefined) {
    const required = obj(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution');
    const termsPath = child(
      specPath,
      'affinity',
      'nodeAffinity',
      'requiredDuringSchedulingIgnoredDuringExecution',
      'nodeSelectorTerms',
    );
    objects(required, 'nodeSelectorTerms').forEach((t, i) =>
      out.push(...nodeSelectorTermWarnings(t, false, index(termsPath, i))),
    );
    const preferredPath = child(
      specPath,
      'affinity',
      'nodeAffinity',
      'preferredDuringSchedulingIgnoredDuringExecution',
    );
    objects(nodeAffinity, 'preferredDuringSchedulingIgnoredDuringExecution').forEach((t, i) =>
      out.push(
        ...nodeSelectorTermWarnings(obj(t, 'preference'), true, child(index(preferredPath, i), 'preference')),
      ),
    );
  }
  objects(spec, 'topologySpreadConstraints').forEach((t, i) => {
    const path = index(child(specPath, 'topologySpreadConstraints'), i);
    const topologyKey = str(t, 'topologyKey');
    const msg = DEPRECATED_NODE_LABELS.get(topologyKey);
    if (msg !== undefined) out.push(`${child(path, 'topologyKey')}: ${topologyKey} is ${msg}`);
    if (t['labelSelector'] == null)
      out.push(`${child(path, 'labelSelector')}: a null labelSelector results in matching no pod`);
  });
  const annotationsPath = child(prefix, 'metadata', 'annotations');
  for (const [k, msg] of DEPRECATED_ANNOTATIONS)
    if (Object.hasOwn(annotations, k)) out.push(`${key(annotationsPath, k)}: ${msg}`);
  const volumes = objects(spec, 'volumes');
  volumes.forEach((v, i) => {
    const path = index(child(specPath, 'volumes'), i);
    for (const [source, field, msg] of DEPRECATED_VOLUMES)
      if (v[source] != null) out.push(`${child(path, field)}: ${msg}`);
    const claim = obj(obj(obj(v, 'ephemeral'), 'volumeClaimTemplate'), 'spec');
    if (claim !== undefined)
      out.push(...claimSpecWarnings(child(path, 'ephemeral', 'volumeClaimTemplate', 'spec'), claim));
  });
  out.push(...volumePathWarnings(volumes));
  const hostAliases = objects(spec, 'hostAliases');
  out.push(
    ...repeats(
      hostAliases,
      'ip',
      (i, ip) => `${child(index(child(specPath, 'hostAliases'), i), 'ip')}: duplicate ip ${q(ip)}`,
    ),
  );
  const pullSecrets = objects(spec, 'imagePullSecrets');
  out.push(
    ...repeats(
      pullSecrets,
      'name',
      (i, name) =>
        `${child(index(child(specPath, 'imagePullSecrets'), i), 'name')}: duplicate name ${q(name)}`,
    ),
  );
  pullSecrets.forEach((s, i) => {
    const name = str(s, 'name');
    if (name === '')
      out.push(
        `${child(index(child(specPath, 'imagePullSecrets'), i), 'name')}: invalid empty name ${q(name)}`,
      );
  });
  for (const resource of ['memory', 'ephemeral-storage']) {
    const value = fractionalBytes(obj(spec, 'overhead'), resource);
    if (value !== undefined) out.push(fractionalWarning(key(child(specPath, 'overhead'), resource), value));
  }
  const podSecurity = obj(spec, 'securityContext');
  if (podSecurity?.['seccompProfile'] == null && Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION))
    out.push(
      `${key(annotationsPath, SECCOMP_POD_ANNOTATION)}: non-functional in v1.27+; use the "seccompProfile" field instead`,
    );
  const podAppArmor = podSecurity?.['appArmorProfile'] != null;
  const containers = containersWithPaths(spec, specPath);
  for (const [c, path] of containers) {
    const security = obj(c, 'securityContext');
    const name = str(c, 'name');
    if (security?.['seccompProfile'] == null && Object.hasOwn(annotations, SECCOMP_CONTAINER_PREFIX + name))
      out.push(
        `${key(annotationsPath, SECCOMP_CONTAINER_PREFIX + name)}: non-functional in v1.27+; use the "seccompProfile" field instead`,
      );
    const template = prefix !== '';
    if (
      template &&
      !podAppArmor &&
      security?.['appArmorProfile'] == null &&
      Object.hasOwn(annotations, APPARMOR_CONTAINER_PREFIX + name)
    )
      out.push(
        `${key(annotationsPath, APPARMOR_CONTAINER_PREFIX + name)}: deprecated since v1.30; use the "appArmorProfile" field instead`,
      );
    const resources = obj(c, 'resources');
    for (const [part, resource] of [
      ['limits', 'memory'],
      ['requests', 'memory'],
      ['limits', 'ephemeral-storage'],
      ['requests', 'ephemeral-storage'],
    ] as const) {
      const value = fractionalBytes(obj(resources, part), resource);
      if (value !== undefined)
        out.push(fractionalWarning(key(child(path, 'resources', part), resource), value));
    }
    out.push(...envWarnings(c, path));
  }
  out.push(...portWarnings(containers));
  const grace = num(spec, 'terminationGracePeriodSeconds');
  if (grace !== undefined && grace < 0)
    out.push(
      `${child(specPath, 'terminationGracePeriodSeconds')}: must be >= 0; negative values are invalid and will be treated as 1`,
    );
  const affinity = obj(spec, 'affinity');
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = obj(affinity, kind);
    if (a === undefined) continue;
    const base = child(specPath, 'affinity', kind);
    out.push(
      ...affinityTermWarnings(
        objects(a, 'requiredDuringSchedulingIgnoredDuringExecution'),
        child(base, 'requiredDuringSchedulingIgnoredDuringExecution'),
        false,
      ),
      ...affinityTermWarnings(
        objects(a, 'preferredDuringSchedulingIgnoredDuringExecution'),
        child(base, 'preferredDuringSchedulingIgnoredDuringExecution'),
        true,
      ),
    );
  }
  (arr(obj(spec, 'dnsConfig'), 'nameservers') ?? []).forEach((ns, i) => {
    if (typeof ns === 'string')
      out.push(...ipWarnings(index(child(specPath, 'dnsConfig', 'nameservers'), i), ns));
  });
  hostAliases.forEach((a, i) =>
    out.push(...ipWarnings(child(index(child(specPath, 'hostAliases'), i), 'ip'), str(a, 'ip'))),
  );
  return out;
}

/** The kinds whose name becomes their pods' names (kube warns when it is no DNS label). */
const NAMES_PODS = new Set([
  '/ReplicationController',
  'apps/ReplicaSet',
  'apps/Deployment',
  'batch/Job',
  'batch/CronJob',
]);

/** Indexed Jobs past these sizes may lose track of their failed indexes (kube's soft limits). */
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_SOFT_LIMIT = 10_000;

function nameWarning(name: string, what: string): string[] {
  const msgs = isDNS1123Label(name);
  return msgs.length === 0
    ? []
    : [
        `metadata.name: this is used in ${what}, which can result in surprising behavior; a DNS label is recommended: ${goList(msgs)}`,
      ];
}

/** True when an update changed what the kind's warnings are computed on. */
function templateChanged(kindKey: string, o: JsonObject, old: JsonObject): boolean {
  if (kindKey === 'apps/DaemonSet') {
    const gen = (x: JsonObject): unknown =>
      obj(obj(x, 'metadata'), 'annotations')?.[DAEMONSET_TEMPLATE_GENERATION];
    return gen(o) !== gen(old);
  }
  return num(obj(o, 'metadata'), 'generation') !== num(obj(old, 'metadata'), 'generation');
}

/**
 * The warnings of a write of `o` (`old` on update) of a pod or a kind with a pod template,
 * as kube v1.33's strategies give them; none for other kinds.
 */
export function podWriteWarnings(
  group: string,
  kind: string,
  o: JsonObject,
  old: JsonObject | undefined,
): string[] {
  const kindKey = `${group}/${kind}`;
  const name = str(obj(o, 'metadata'), 'name');
  if (kindKey === '/Pod') {
    if (old !== undefined) return [];
    return [
      ...nameWarning(name, "the Pod's hostname"),
      ...podSpecWarnings('', obj(o, 'spec'), obj(o, 'metadata')),
    ];
  }
  const templatePath = POD_TEMPLATE_PATHS.get(kindKey);
  if (templatePath === undefined) return [];
  if (old !== undefined && !templateChanged(kindKey, o, old)) return [];
  const out =
    old === undefined && NAMES_PODS.has(kindKey) ? nameWarning(name, 'Pod names and hostnames') : [];
  if (kindKey === 'batch/Job' || kindKey === 'batch/CronJob') {
    const jobSpecPath = templatePath.slice(0, -1);
    const jobSpec = objectAtPath(o, jobSpecPath);
    if (
      str(jobSpec, 'completionMode') === 'Indexed' &&
      (num(jobSpec, 'completions') ?? 0) > COMPLETIONS_SOFT_LIMIT &&
      (num(jobSpec, 'parallelism') ?? 0) > PARALLELISM_SOFT_LIMIT
    )
      out.push(
        `${jobSpecPath.join('.')}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail`,
      );
  }
  const t = objectAtPath(o, templatePath);
  out.push(...podSpecWarnings(templatePath.join('.'), obj(t, 'spec'), obj(t, 'metadata')));
  if (kindKey === 'apps/StatefulSet') {
    const spec = obj(o, 'spec');
    objects(spec, 'volumeClaimTemplates').forEach((c, i) => {
      // kube's update path names the claim's spec `Spec`.
      const path =
        old === undefined
          ? index('spec.volumeClaimTemplates', i)
          : child(index('spec.volumeClaimTemplates', i), 'Spec');
      out.push(...claimSpecWarnings(path, obj(c, 'spec')));
    });
    const limit = num(spec, 'revisionHistoryLimit');
    if (limit !== undefined && limit < 0)
      out.push(
        'spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended',
      );
  }
  return out;
}
