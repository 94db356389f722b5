/**
 * The Pod Security Standards' checks (kube's k8s.io/pod-security-admission/policy), over the
 * pod's JSON: each check has versions (the first policy version it applies from) and reports a
 * reason and a detail in kube's words. {@link evaluatePod} runs the checks of one level and
 * version in kube's order: baseline check IDs sorted, then restricted ones sorted.
 */
import type { JsonObject } from '../../api/object.js';
import * as B from './baseline.js';
import { notWindows, type CheckFailure, type CheckFn, type Level } from './helpers.js';
import * as R from './restricted.js';

export type { CheckFailure, Level } from './helpers.js';

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

const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ min: 0, fn: B.appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ min: 0, fn: B.capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ min: 0, fn: B.hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ min: 0, fn: B.hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ min: 0, fn: B.hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ min: 0, fn: B.privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ min: 0, fn: B.procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { min: 0, fn: B.seLinuxOptions(B.SELINUX_TYPES_1_0) },
      { min: 31, fn: B.seLinuxOptions(B.SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { min: 0, fn: B.seccompBaseline1_0 },
      { min: 19, fn: B.seccompFields(false) },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { min: 0, fn: B.sysctls(B.SYSCTLS_1_0) },
      { min: 27, fn: B.sysctls(B.SYSCTLS_1_27) },
      { min: 29, fn: B.sysctls(B.SYSCTLS_1_29) },
      { min: 32, fn: B.sysctls(B.SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ min: 0, fn: B.windowsHostProcess }] },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { min: 8, fn: R.allowPrivilegeEscalation },
      { min: 25, fn: notWindows(R.allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { min: 22, fn: R.capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { min: 25, fn: notWindows(R.capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ min: 0, fn: R.restrictedVolumes, overrides: ['hostPathVolumes'] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ min: 0, fn: R.runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ min: 23, fn: R.runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { min: 19, fn: B.seccompFields(true), overrides: ['seccompProfile_baseline'] },
      { min: 25, fn: notWindows(B.seccompFields(true)), overrides: ['seccompProfile_baseline'] },
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
