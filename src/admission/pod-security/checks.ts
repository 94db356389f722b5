/**
 * The Pod Security Standards' checks (kube's k8s.io/pod-security-admission/policy), over the
 * pod's JSON: each check has versions (the first policy version it applies from) and reports a
 * reason and a detail in kube's words. {@link evaluatePod} runs the checks of one level and
 * version in kube's order: baseline check IDs sorted, then restricted ones sorted.
 */
import type { JsonObject } from '../../api/object.js';

/** `privileged`, `baseline` or `restricted`. */
export type Level = 'privileged' | 'baseline' | 'restricted';

/** One failed check. */
export interface CheckFailure {
  readonly reason: string;
  /** May be `''`. */
  readonly detail: string;
}

type CheckFn = (meta: JsonObject, spec: JsonObject) => CheckFailure | undefined;

interface VersionedCheck {
  /** The first minor version (of 1.x) the variant applies from. */
  readonly min: number;
  readonly fn: CheckFn;
  readonly overrides?: readonly string[];
}

interface Check {
  readonly id: string;
  readonly level: 'baseline' | 'restricted';
  readonly versions: readonly VersionedCheck[];
}

/** The newest policy version kube-apiserver v1.33 knows (`latest` means this one). */
export const MAX_POLICY_MINOR = 32;

const obj = (v: unknown): JsonObject | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
const arr = (v: unknown): JsonObject[] =>
  Array.isArray(v) ? (v.filter((x) => obj(x) !== undefined) as JsonObject[]) : [];
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

/** Go's `sets.String.List()`: unique, sorted. */
function sorted(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** kube's `visitContainers`: init containers, containers, ephemeral containers. */
function containers(spec: JsonObject): JsonObject[] {
  return [...arr(spec['initContainers']), ...arr(spec['containers']), ...arr(spec['ephemeralContainers'])];
}

const sc = (c: JsonObject): JsonObject | undefined => obj(c['securityContext']);
const podSc = (spec: JsonObject): JsonObject | undefined => obj(spec['securityContext']);
const cname = (c: JsonObject): string => str(c['name']);
const isWindows = (spec: JsonObject): boolean => obj(spec['os'])?.['name'] === 'windows';
const containersPhrase = (names: readonly string[]): string =>
  `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;

function fail(reason: string, detail: string): CheckFailure {
  return { reason, detail };
}

const notWindows =
  (fn: CheckFn): CheckFn =>
  (meta, spec) =>
    isWindows(spec) ? undefined : fn(meta, spec);

// --- baseline ---------------------------------------------------------------------------------

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckFn = (meta, spec) => {
  const allowedType = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';
  const badSetters: string[] = [];
  const badValues = new Set<string>();
  const podProfile = obj(podSc(spec)?.['appArmorProfile']);
  if (podProfile !== undefined && !allowedType(podProfile['type'])) {
    badSetters.push('pod');
    badValues.add(str(podProfile['type']));
  }
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const p = obj(sc(c)?.['appArmorProfile']);
    if (p !== undefined && !allowedType(p['type'])) {
      bad.push(cname(c));
      badValues.add(str(p['type']));
    }
  }
  if (bad.length > 0) badSetters.push(containersPhrase(bad));
  const forbiddenAnnotations: string[] = [];
  for (const [k, v] of Object.entries(obj(meta['annotations']) ?? {})) {
    const value = str(v);
    const ok = value === '' || value === 'runtime/default' || value.startsWith('localhost/');
    if (k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !ok)
      forbiddenAnnotations.push(`${k}=${JSON.stringify(value)}`);
  }
  const values = sorted(badValues);
  if (forbiddenAnnotations.length > 0) {
    forbiddenAnnotations.sort();
    values.push(...forbiddenAnnotations);
    badSetters.push(pluralize('annotation', 'annotations', forbiddenAnnotations.length));
  }
  if (badSetters.length === 0) return undefined;
  return fail(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  );
};

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const capabilitiesBaseline: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const caps = new Set<string>();
  for (const c of containers(spec)) {
    const add = (obj(sc(c)?.['capabilities'])?.['add'] as unknown[] | undefined) ?? [];
    let valid = true;
    for (const cap of Array.isArray(add) ? add : []) {
      if (!DEFAULT_CAPABILITIES.has(str(cap))) {
        valid = false;
        caps.add(str(cap));
      }
    }
    if (!valid) bad.push(cname(c));
  }
  if (bad.length === 0) return undefined;
  return fail(
    'non-default capabilities',
    `${containersPhrase(bad)} must not include ${joinQuote(sorted(caps))} in securityContext.capabilities.add`,
  );
};

const hostNamespaces: CheckFn = (_meta, spec) => {
  const found: string[] = [];
  if (spec['hostNetwork'] === true) found.push('hostNetwork=true');
  if (spec['hostPID'] === true) found.push('hostPID=true');
  if (spec['hostIPC'] === true) found.push('hostIPC=true');
  return found.length === 0 ? undefined : fail('host namespaces', found.join(', '));
};

const hostPathVolumes: CheckFn = (_meta, spec) => {
  const found = arr(spec['volumes'])
    .filter((v) => obj(v['hostPath']) !== undefined)
    .map((v) => str(v['name']));
  if (found.length === 0) return undefined;
  return fail('hostPath volumes', `${pluralize('volume', 'volumes', found.length)} ${joinQuote(found)}`);
};

const hostPorts: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const ports = new Set<string>();
  for (const c of containers(spec)) {
    let valid = true;
    for (const p of arr(c['ports'])) {
      const hp = p['hostPort'];
      if (typeof hp === 'number' && hp !== 0) {
        valid = false;
        ports.add(String(hp));
      }
    }
    if (!valid) bad.push(cname(c));
  }
  if (bad.length === 0) return undefined;
  const list = sorted(ports);
  return fail(
    'hostPort',
    `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`,
  );
};

const privileged: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => sc(c)?.['privileged'] === true)
    .map(cname);
  if (bad.length === 0) return undefined;
  return fail('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`);
};

const procMount: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const c of containers(spec)) {
    const pm = sc(c)?.['procMount'];
    if (typeof pm === 'string' && pm !== 'Default') {
      bad.push(cname(c));
      types.add(pm);
    }
  }
  if (bad.length === 0) return undefined;
  return fail(
    'procMount',
    `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sorted(types))}`,
  );
};

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const seLinuxOptions =
  (allowed: ReadonlySet<string>): CheckFn =>
  (_meta, spec) => {
    const badSetters: string[] = [];
    const badTypes = new Set<string>();
    let setUser = false;
    let setRole = false;
    const valid = (o: JsonObject): boolean => {
      let ok = true;
      const t = str(o['type']);
      if (!allowed.has(t)) {
        ok = false;
        badTypes.add(t);
      }
      if (str(o['user']) !== '') {
        ok = false;
        setUser = true;
      }
      if (str(o['role']) !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = obj(podSc(spec)?.['seLinuxOptions']);
    if (podOpts !== undefined && !valid(podOpts)) badSetters.push('pod');
    const bad: string[] = [];
    for (const c of containers(spec)) {
      const o = obj(sc(c)?.['seLinuxOptions']);
      if (o !== undefined && !valid(o)) bad.push(cname(c));
    }
    if (bad.length > 0) badSetters.push(containersPhrase(bad));
    if (badSetters.length === 0) return undefined;
    const data: string[] = [];
    if (badTypes.size > 0) {
      const types = sorted(badTypes);
      data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    }
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return fail(
      'seLinuxOptions',
      `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
    );
  };

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccompType = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';

const seccompBaseline1_0: CheckFn = (meta, spec) => {
  const annotations = obj(meta['annotations']) ?? {};
  const validValue = (v: string): boolean =>
    v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden = new Set<string>();
  const podValue = annotations[SECCOMP_POD_ANNOTATION];
  if (typeof podValue === 'string' && !validValue(podValue)) {
    forbidden.add(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(podValue)}`);
  }
  for (const c of containers(spec)) {
    const key = SECCOMP_CONTAINER_PREFIX + cname(c);
    const v = annotations[key];
    if (typeof v === 'string' && !validValue(v)) forbidden.add(`${key}=${JSON.stringify(v)}`);
  }
  if (forbidden.size === 0) return undefined;
  const list = sorted(forbidden);
  return fail(
    'seccompProfile',
    `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}`,
  );
};

/** The seccomp check of baseline (1.19+) and, with `requireSet`, of restricted. */
const seccompFields =
  (requireSet: boolean): CheckFn =>
  (_meta, spec) => {
    const badSetters: string[] = [];
    const badValues = new Set<string>();
    let podSet = false;
    const podProfile = obj(podSc(spec)?.['seccompProfile']);
    if (podProfile !== undefined) {
      if (!validSeccompType(podProfile['type'])) {
        badSetters.push('pod');
        badValues.add(str(podProfile['type']));
      } else podSet = true;
    }
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const p = obj(sc(c)?.['seccompProfile']);
      if (p !== undefined) {
        if (!validSeccompType(p['type'])) {
          explicit.push(cname(c));
          badValues.add(str(p['type']));
        }
      } else if (!podSet) implicit.push(cname(c));
    }
    if (explicit.length > 0) badSetters.push(containersPhrase(explicit));
    if (badSetters.length > 0) {
      return fail(
        'seccompProfile',
        `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sorted(badValues))}`,
      );
    }
    if (requireSet && implicit.length > 0) {
      return fail(
        'seccompProfile',
        `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      );
    }
    return undefined;
  };

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

const sysctls =
  (allowed: readonly string[]): CheckFn =>
  (_meta, spec) => {
    const bad = arr(podSc(spec)?.['sysctls'])
      .map((s) => str(s['name']))
      .filter((n) => !allowed.includes(n));
    return bad.length === 0 ? undefined : fail('forbidden sysctls', bad.join(', '));
  };

const windowsHostProcess: CheckFn = (_meta, spec) => {
  const hostProcess = (s: JsonObject | undefined): boolean =>
    obj(s?.['windowsOptions'])?.['hostProcess'] === true;
  const bad = containers(spec)
    .filter((c) => hostProcess(sc(c)))
    .map(cname);
  const setters: string[] = [];
  if (hostProcess(podSc(spec))) setters.push('pod');
  if (bad.length > 0) setters.push(containersPhrase(bad));
  if (setters.length === 0) return undefined;
  return fail(
    'hostProcess',
    `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`,
  );
};

// --- restricted -------------------------------------------------------------------------------

const allowPrivilegeEscalation: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => sc(c)?.['allowPrivilegeEscalation'] !== false)
    .map(cname);
  if (bad.length === 0) return undefined;
  return fail(
    'allowPrivilegeEscalation != false',
    `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  );
};

const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const forbiddenCaps = new Set<string>();
  for (const c of containers(spec)) {
    const caps = obj(sc(c)?.['capabilities']);
    if (caps === undefined) {
      missingDrop.push(cname(c));
      continue;
    }
    const drop = Array.isArray(caps['drop']) ? (caps['drop'] as unknown[]) : [];
    if (!drop.includes('ALL')) missingDrop.push(cname(c));
    const add = Array.isArray(caps['add']) ? (caps['add'] as unknown[]) : [];
    let added = false;
    for (const cap of add) {
      if (cap !== 'NET_BIND_SERVICE') {
        added = true;
        forbiddenCaps.add(str(cap));
      }
    }
    if (added) adding.push(cname(c));
  }
  const details: string[] = [];
  if (missingDrop.length > 0) {
    details.push(`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  }
  if (adding.length > 0) {
    details.push(
      `${containersPhrase(adding)} must not include ${joinQuote(sorted(forbiddenCaps))} in securityContext.capabilities.add`,
    );
  }
  return details.length === 0 ? undefined : fail('unrestricted capabilities', details.join('; '));
};

/** Volume sources restricted allows. */
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
/** The restricted sources kube names, in its order of precedence. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of arr(spec['volumes'])) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => obj(v[s]) !== undefined)) continue;
    bad.push(str(v['name']));
    types.add(RESTRICTED_VOLUME_SOURCES.find((s) => obj(v[s]) !== undefined) ?? 'unknown');
  }
  if (bad.length === 0) return undefined;
  const list = sorted(types);
  return fail(
    'restricted volume types',
    `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', list.length)} ${joinQuote(list)}`,
  );
};

const runAsNonRoot: CheckFn = (_meta, spec) => {
  const badSetters: string[] = [];
  let podNonRoot = false;
  const podValue = podSc(spec)?.['runAsNonRoot'];
  if (typeof podValue === 'boolean') {
    if (!podValue) badSetters.push('pod');
    else podNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const v = sc(c)?.['runAsNonRoot'];
    if (typeof v === 'boolean') {
      if (!v) explicit.push(cname(c));
    } else if (!podNonRoot) implicit.push(cname(c));
  }
  if (explicit.length > 0) badSetters.push(containersPhrase(explicit));
  if (badSetters.length > 0) {
    return fail(
      'runAsNonRoot != true',
      `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    );
  }
  if (implicit.length > 0) {
    return fail(
      'runAsNonRoot != true',
      `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    );
  }
  return undefined;
};

const runAsUser: CheckFn = (_meta, spec) => {
  const badSetters: string[] = [];
  if (podSc(spec)?.['runAsUser'] === 0) badSetters.push('pod');
  const bad = containers(spec)
    .filter((c) => sc(c)?.['runAsUser'] === 0)
    .map(cname);
  if (bad.length > 0) badSetters.push(containersPhrase(bad));
  if (badSetters.length === 0) return undefined;
  return fail('runAsUser=0', `${badSetters.join(' and ')} must not set runAsUser=0`);
};

const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ min: 0, fn: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ min: 0, fn: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ min: 0, fn: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ min: 0, fn: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ min: 0, fn: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ min: 0, fn: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ min: 0, fn: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { min: 0, fn: seLinuxOptions(SELINUX_TYPES_1_0) },
      { min: 31, fn: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { min: 0, fn: seccompBaseline1_0 },
      { min: 19, fn: seccompFields(false) },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { min: 0, fn: sysctls(SYSCTLS_1_0) },
      { min: 27, fn: sysctls(SYSCTLS_1_27) },
      { min: 29, fn: sysctls(SYSCTLS_1_29) },
      { min: 32, fn: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ min: 0, fn: windowsHostProcess }] },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { min: 8, fn: allowPrivilegeEscalation },
      { min: 25, fn: notWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { min: 22, fn: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { min: 25, fn: notWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ min: 0, fn: restrictedVolumes, overrides: ['hostPathVolumes'] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ min: 0, fn: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ min: 23, fn: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { min: 19, fn: seccompFields(true), overrides: ['seccompProfile_baseline'] },
      { min: 25, fn: notWindows(seccompFields(true)), overrides: ['seccompProfile_baseline'] },
    ],
  },
];

/** The check functions of `level` at minor version `minor`, in kube's order. */
function plan(level: 'baseline' | 'restricted', minor: number): readonly CheckFn[] {
  const active = new Map<string, VersionedCheck>();
  for (const check of CHECKS) {
    if (check.level === 'restricted' && level === 'baseline') continue;
    const variant = [...check.versions].reverse().find((v) => v.min <= minor);
    if (variant !== undefined) active.set(check.id, variant);
  }
  for (const v of [...active.values()]) for (const id of v.overrides ?? []) active.delete(id);
  const ids = (l: string): string[] =>
    CHECKS.filter((c) => c.level === l && active.has(c.id))
      .map((c) => c.id)
      .sort();
  return [...ids('baseline'), ...ids('restricted')].map((id) => (active.get(id) as VersionedCheck).fn);
}

/** Every level's plan by minor version 0 … {@link MAX_POLICY_MINOR}, computed once (immutable). */
const PLANS: Readonly<Record<'baseline' | 'restricted', readonly (readonly CheckFn[])[]>> = Object.freeze({
  baseline: Array.from({ length: MAX_POLICY_MINOR + 1 }, (_, m) => plan('baseline', m)),
  restricted: Array.from({ length: MAX_POLICY_MINOR + 1 }, (_, m) => plan('restricted', m)),
});

/**
 * The failed checks of a pod (metadata and spec) at `level` and policy version `minor`
 * (undefined: latest). Empty: allowed.
 */
export function evaluatePod(
  level: Level,
  minor: number | undefined,
  meta: JsonObject,
  spec: JsonObject,
): CheckFailure[] {
  if (level === 'privileged') return [];
  const v = minor === undefined || minor > MAX_POLICY_MINOR ? MAX_POLICY_MINOR : minor;
  const out: CheckFailure[] = [];
  for (const fn of PLANS[level][v] ?? []) {
    const f = fn(meta, spec);
    if (f !== undefined) out.push(f);
  }
  return out;
}

/** kube's `ForbiddenDetail()`: `reason (detail), reason, ...`. */
export function forbiddenDetail(failures: readonly CheckFailure[]): string {
  return failures.map((f) => (f.detail === '' ? f.reason : `${f.reason} (${f.detail})`)).join(', ');
}

/** kube's `ForbiddenReason()`: the reasons, comma-separated. */
export function forbiddenReason(failures: readonly CheckFailure[]): string {
  return failures.map((f) => f.reason).join(', ');
}
