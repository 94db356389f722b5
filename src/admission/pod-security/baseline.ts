/** The baseline level's checks (kube's pod-security-admission policy), over pod JSON. */
import type { JsonObject } from '../../api/object.js';
import {
  arr,
  containers,
  containersPhrase,
  cname,
  fail,
  joinQuote,
  obj,
  pluralize,
  podSc,
  sc,
  sorted,
  str,
  type CheckFn,
} from './helpers.js';

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

export const appArmorProfile: CheckFn = (meta, spec) => {
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

export const capabilitiesBaseline: CheckFn = (_meta, spec) => {
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

export const hostNamespaces: CheckFn = (_meta, spec) => {
  const found: string[] = [];
  if (spec['hostNetwork'] === true) found.push('hostNetwork=true');
  if (spec['hostPID'] === true) found.push('hostPID=true');
  if (spec['hostIPC'] === true) found.push('hostIPC=true');
  return found.length === 0 ? undefined : fail('host namespaces', found.join(', '));
};

export const hostPathVolumes: CheckFn = (_meta, spec) => {
  const found = arr(spec['volumes'])
    .filter((v) => obj(v['hostPath']) !== undefined)
    .map((v) => str(v['name']));
  if (found.length === 0) return undefined;
  return fail('hostPath volumes', `${pluralize('volume', 'volumes', found.length)} ${joinQuote(found)}`);
};

export const hostPorts: CheckFn = (_meta, spec) => {
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

export const privileged: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => sc(c)?.['privileged'] === true)
    .map(cname);
  if (bad.length === 0) return undefined;
  return fail('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`);
};

export const procMount: CheckFn = (_meta, spec) => {
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

export const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
export const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

export const seLinuxOptions =
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

export const seccompBaseline1_0: CheckFn = (meta, spec) => {
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
export const seccompFields =
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

export const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
export const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
export const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
export const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

export const sysctls =
  (allowed: readonly string[]): CheckFn =>
  (_meta, spec) => {
    const bad = arr(podSc(spec)?.['sysctls'])
      .map((s) => str(s['name']))
      .filter((n) => !allowed.includes(n));
    return bad.length === 0 ? undefined : fail('forbidden sysctls', bad.join(', '));
  };

export const windowsHostProcess: CheckFn = (_meta, spec) => {
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
