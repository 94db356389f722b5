/**
 * A namespace's Pod Security policy: the `pod-security.kubernetes.io/{enforce,audit,warn}` level
 * labels and their `-version` labels over the configured defaults (kube's `PolicyToEvaluate`),
 * and the plugin's `PodSecurityConfiguration` (defaults and exemptions).
 */
import { isJsonObject, type JsonObject } from '../../api/object.js';
import type { Level } from './checks.js';

/** A level at a policy version (`minor` undefined: `latest`). */
export interface LevelVersion {
  readonly level: Level;
  readonly minor: number | undefined;
}

/** The three modes' levels. */
export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

/** A label that does not parse, as kube's field error. */
export interface LabelError {
  readonly field: string;
  readonly message: string;
}

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
const MODES = ['enforce', 'audit', 'warn'] as const;
type Mode = (typeof MODES)[number];

/** `restricted:latest`, `baseline:v1.30`. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${lv.minor === undefined ? 'latest' : `v1.${lv.minor}`}`;
}

/** kube's `LevelVersion.Equivalent`. */
export function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (
    (a.level === 'privileged' && b.level === 'privileged') || (a.level === b.level && a.minor === b.minor)
  );
}

const RANK: Readonly<Record<Level, number>> = { privileged: 0, baseline: 1, restricted: 2 };

/** kube's `CompareLevels`: negative, 0 or positive. */
export function compareLevels(a: Level, b: Level): number {
  return RANK[a] - RANK[b];
}

/** A level, or the error message kube gives. */
export function parseLevel(value: string): Level | Error {
  return value === 'privileged' || value === 'baseline' || value === 'restricted'
    ? value
    : new Error('must be one of privileged, baseline, restricted');
}

/** A version (`latest` → undefined minor), or the error message kube gives. */
export function parseVersion(value: string): { minor: number | undefined } | Error {
  if (value === 'latest') return { minor: undefined };
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(value);
  if (m === null) return new Error('must be "latest" or "v1.x"');
  return { minor: Number(m[1]) };
}

/** The policy `labels` set over `defaults`, and the labels that did not parse (kube's rules). */
export function policyToEvaluate(
  labels: Readonly<Record<string, string>> | undefined,
  defaults: Policy,
): { policy: Policy; errors: LabelError[] } {
  const errors: LabelError[] = [];
  if (labels === undefined || Object.keys(labels).length === 0) return { policy: defaults, errors };
  const p: Record<Mode, { level: Level; minor: number | undefined }> = {
    enforce: { ...defaults.enforce },
    audit: { ...defaults.audit },
    warn: { ...defaults.warn },
  };
  let hasEnforceLevel = false;
  let hasWarnLevel = false;
  let hasWarnVersion = false;
  for (const mode of MODES) {
    const levelKey = `${LABEL_PREFIX}${mode}`;
    const level = labels[levelKey];
    if (level !== undefined) {
      const parsed = parseLevel(level);
      if (parsed instanceof Error) {
        errors.push({
          field: `metadata.labels[${levelKey}]`,
          message: `Invalid value: ${JSON.stringify(level)}: ${parsed.message}`,
        });
        // Enforce fails closed, audit and warn fail open.
        p[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      } else {
        p[mode].level = parsed;
        if (mode === 'enforce') hasEnforceLevel = true;
      }
      if (mode === 'warn') hasWarnLevel = true;
    }
    const versionKey = `${levelKey}-version`;
    const version = labels[versionKey];
    if (version !== undefined) {
      const parsed = parseVersion(version);
      if (parsed instanceof Error) {
        errors.push({
          field: `metadata.labels[${versionKey}]`,
          message: `Invalid value: ${JSON.stringify(version)}: ${parsed.message}`,
        });
        p[mode].minor = undefined;
      } else p[mode].minor = parsed.minor;
      if (mode === 'warn') hasWarnVersion = true;
    }
  }
  if (!hasWarnLevel && hasEnforceLevel && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!hasWarnVersion) p.warn.minor = p.enforce.minor;
  }
  return { policy: p, errors };
}

/** True when every mode is privileged. */
export function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

/** The plugin's configuration (`PodSecurityConfiguration`). */
export interface PodSecurityConfig {
  readonly defaults: Policy;
  readonly exemptions: {
    readonly usernames: readonly string[];
    readonly runtimeClasses: readonly string[];
    readonly namespaces: readonly string[];
  };
}

const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', minor: undefined };

/** kube's defaults: privileged:latest for every mode, no exemptions. */
export const DEFAULT_CONFIG: PodSecurityConfig = {
  defaults: { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST },
  exemptions: { usernames: [], runtimeClasses: [], namespaces: [] },
};

const CONFIG_API_VERSIONS = [
  'pod-security.admission.config.k8s.io/v1',
  'pod-security.admission.config.k8s.io/v1beta1',
  'pod-security.admission.config.k8s.io/v1alpha1',
];

/**
 * Parses a `PodSecurityConfiguration` (kube's fields: `defaults.{enforce,audit,warn}[-version]`,
 * `exemptions.{usernames,runtimeClasses,namespaces}`).
 * @throws Error with what is wrong
 */
export function parsePodSecurityConfig(config: JsonObject | undefined): PodSecurityConfig {
  if (config === undefined) return DEFAULT_CONFIG;
  const apiVersion = config['apiVersion'];
  if (config['kind'] !== 'PodSecurityConfiguration' || !CONFIG_API_VERSIONS.includes(String(apiVersion))) {
    throw new Error(
      `PodSecurity: expected kind PodSecurityConfiguration of ${CONFIG_API_VERSIONS[0]}, got ${String(config['kind'])} of ${String(apiVersion)}`,
    );
  }
  const defaults = isJsonObject(config['defaults']) ? config['defaults'] : {};
  const mode = (m: Mode): LevelVersion => {
    const level = parseLevel(typeof defaults[m] === 'string' ? defaults[m] : 'privileged');
    const version = parseVersion(
      typeof defaults[`${m}-version`] === 'string' ? (defaults[`${m}-version`] as string) : 'latest',
    );
    if (level instanceof Error) throw new Error(`PodSecurity: defaults.${m}: ${level.message}`);
    if (version instanceof Error) throw new Error(`PodSecurity: defaults.${m}-version: ${version.message}`);
    return { level, minor: version.minor };
  };
  const ex = isJsonObject(config['exemptions']) ? config['exemptions'] : {};
  const list = (k: string): string[] => {
    const v = ex[k];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) {
      throw new Error(`PodSecurity: exemptions.${k} must be a list of non-empty strings`);
    }
    return v as string[];
  };
  return {
    defaults: { enforce: mode('enforce'), audit: mode('audit'), warn: mode('warn') },
    exemptions: {
      usernames: list('usernames'),
      runtimeClasses: list('runtimeClasses'),
      namespaces: list('namespaces'),
    },
  };
}
