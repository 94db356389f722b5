/**
 * Pod sysctls, as kubelet takes them: the names a pod may set (`spec.securityContext.sysctls`)
 * and how they reach the sandbox.
 *
 * A sysctl is allowed when it is one of kubelet's safe set (namespaced and isolated, each from
 * the kernel version that namespaced it) or matches `--allowed-unsafe-sysctls` (names, or
 * prefixes ending in `*`, each of which must be known to be namespaced: IPC or network). A
 * network sysctl is refused to a pod on the host's network, an IPC one to a pod on the host's IPC
 * namespace. Node admission refuses a pod with any other with reason `SysctlForbidden` and
 * "forbidden sysctl: \"kernel.msgmax\" not allowlisted" (kubelet's sysctl admit handler).
 *
 * Names may be written with slashes (`net/ipv4/ip_local_port_range`); they are compared and sent
 * to the runtime in the dotted form, as kubelet converts them.
 */
import { release } from 'node:os';
import type { Pod } from '../../api/types/core-v1.js';

/** The kernel namespace a sysctl lives in. */
type SysctlNamespace = 'IPC' | 'Net';

/** kubelet's safe sysctls, with the kernel version that namespaced each (none: always). */
const SAFE_SYSCTLS: readonly { readonly name: string; readonly kernel?: readonly [number, number] }[] = [
  { name: 'kernel.shm_rmid_forced' },
  { name: 'net.ipv4.ip_local_port_range' },
  { name: 'net.ipv4.tcp_syncookies' },
  { name: 'net.ipv4.ping_group_range' },
  { name: 'net.ipv4.ip_unprivileged_port_start' },
  { name: 'net.ipv4.ip_local_reserved_ports', kernel: [3, 16] },
  { name: 'net.ipv4.tcp_keepalive_time', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_fin_timeout', kernel: [4, 6] },
  { name: 'net.ipv4.tcp_keepalive_intvl', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_keepalive_probes', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_rmem', kernel: [4, 15] },
  { name: 'net.ipv4.tcp_wmem', kernel: [4, 15] },
];

/** Sysctls the kernel namespaces by name, and by prefix. */
const IPC_NAMES: ReadonlySet<string> = new Set([
  'kernel.sem',
  'kernel.shmall',
  'kernel.shmmax',
  'kernel.shmmni',
  'kernel.shm_rmid_forced',
  'kernel.shm',
  'kernel.msgmax',
  'kernel.msgmnb',
  'kernel.msgmni',
  'kernel.msg',
]);
const PREFIXES: readonly (readonly [string, SysctlNamespace])[] = [
  ['net.', 'Net'],
  ['fs.mqueue.', 'IPC'],
];

/** The kernel namespace of a sysctl name or of a prefix (without its `*`), if known. */
function namespaceOf(name: string): SysctlNamespace | undefined {
  if (IPC_NAMES.has(name)) return 'IPC';
  for (const [prefix, ns] of PREFIXES) if (name.startsWith(prefix)) return ns;
  return undefined;
}

/**
 * A sysctl name in its dotted form: when the first separator is a slash, slashes become dots and
 * dots slashes (`net/ipv4/conf/eth0.100/rp_filter` is `net.ipv4.conf.eth0/100.rp_filter`).
 */
export function dottedSysctl(name: string): string {
  const firstSlash = name.indexOf('/');
  const firstDot = name.indexOf('.');
  if (firstSlash === -1 || (firstDot !== -1 && firstDot < firstSlash)) return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** The kernel version's major and minor (`6.18.44-fc` → [6, 18]). */
function kernelVersion(text: string): readonly [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(have: readonly [number, number] | undefined, want: readonly [number, number]): boolean {
  return have !== undefined && (have[0] > want[0] || (have[0] === want[0] && have[1] >= want[1]));
}

/** A valid sysctl or pattern (kube's, as its error message shows it, and anchored). */
const PATTERN_TEXT = '([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]';
const PATTERN = new RegExp(`^${PATTERN_TEXT}$`);

/** The sysctls pods may set on this node. */
export class SysctlAllowlist {
  readonly #names = new Map<string, SysctlNamespace>();
  readonly #prefixes = new Map<string, SysctlNamespace>();

  /**
   * kubelet's safe set for `kernel` (the running kernel's release by default) plus `unsafe`
   * (`--allowed-unsafe-sysctls`).
   * @throws Error naming a pattern that is malformed or not known to be namespaced.
   */
  constructor(unsafe: readonly string[] = [], kernel: string = release()) {
    const have = kernelVersion(kernel);
    const patterns = [
      ...SAFE_SYSCTLS.filter((s) => s.kernel === undefined || atLeast(have, s.kernel)).map((s) => s.name),
      ...unsafe,
    ];
    for (const raw of patterns) {
      if (raw.length > 253 || !PATTERN.test(raw))
        throw new Error(
          `sysctl ${JSON.stringify(raw)} must have at most 253 characters and match regex ${PATTERN_TEXT}`,
        );
      const dotted = dottedSysctl(raw);
      const star = dotted.indexOf('*');
      const name = star === -1 ? dotted : dotted.slice(0, star);
      const ns = namespaceOf(name);
      if (ns === undefined)
        throw new Error(`the sysctls ${JSON.stringify(name)} are not known to be namespaced`);
      if (star === -1) this.#names.set(name, ns);
      else this.#prefixes.set(name, ns);
    }
  }

  /** Why `pod` may not set its sysctls here (kubelet's words), or undefined. */
  forbidden(pod: Pod): string | undefined {
    const hostNet = pod.spec?.hostNetwork === true;
    const hostIPC = pod.spec?.hostIPC === true;
    for (const { name } of pod.spec?.securityContext?.sysctls ?? []) {
      const s = dottedSysctl(name ?? '');
      let ns = this.#names.get(s);
      if (ns === undefined) for (const [p, pns] of this.#prefixes) if (s.startsWith(p)) ns = pns;
      if (ns === undefined) return `forbidden sysctl: ${JSON.stringify(s)} not allowlisted`;
      if ((ns === 'IPC' && hostIPC) || (ns === 'Net' && hostNet))
        return `forbidden sysctl: ${JSON.stringify(s)} not allowed with host ${ns} enabled`;
    }
    return undefined;
  }
}

/** The sandbox's sysctls: the pod's, by dotted name. */
export function sandboxSysctls(pod: Pod): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of pod.spec?.securityContext?.sysctls ?? [])
    out[dottedSysctl(name ?? '')] = value ?? '';
  return out;
}
