/**
 * kube-apiserver's admission plugins by name: the fixed order the chain runs them in (kube's
 * `AllOrderedPlugins`, whatever order the flags name them in), the v1.33 default-on set, the
 * checks of `--enable-admission-plugins` / `--disable-admission-plugins`, and the factory of
 * each plugin.
 *
 * | name | here |
 * |------|------|
 * | NamespaceLifecycle | enforced inline by the resource handler (src/resource/namespace-lifecycle.ts); `--disable-admission-plugins` turns it off |
 * | ServiceAccount | built by src/serviceaccount (passed in as an external plugin) |
 * | MutatingAdmissionWebhook, ValidatingAdmissionWebhook | src/admission/webhook (passed in as external plugins) |
 * | ValidatingAdmissionPolicy | src/admission/policy (passed in as an external plugin) |
 * | MutatingAdmissionPolicy | a named slot for an external plugin; none yet (accepted, no effect) |
 * | the others | one file each in this folder; names kube knows but Capstan does not implement are accepted and reported by {@link buildAdmissionPlugins} |
 */
import type { JsonObject } from '../api/object.js';
import type { UserInfo } from '../api/user.js';
import type { AdmissionPlugin } from './types.js';
import type { AdmissionObjects } from './objects.js';
import { alwaysAdmit, alwaysDeny } from './always.js';
import { alwaysPullImages } from './always-pull-images.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from './certificates.js';
import { defaultIngressClass } from './default-ingress-class.js';
import { defaultStorageClass } from './default-storage-class.js';
import { defaultTolerationSeconds } from './default-toleration-seconds.js';
import { limitRanger } from './limit-ranger.js';
import { nodeRestriction } from './node-restriction.js';
import { podSecurity } from './pod-security/plugin.js';
import { priority } from './priority.js';
import { pvcResize } from './pvc-resize.js';
import { resourceQuota } from './resource-quota.js';
import { runtimeClass } from './runtime-class.js';
import { storageObjectInUseProtection } from './storage-protection.js';
import { taintNodesByCondition } from './taint-nodes.js';

/** kube-apiserver v1.33's `AllOrderedPlugins`: the order of the chain. */
export const ALL_ORDERED_PLUGINS: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** kube-apiserver v1.33's default-on plugins (the complement of `DefaultOffAdmissionPlugins`). */
export const DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
]);

/** Asks the authorizer whether `user` may do `verb` on a resource (kube's SubjectAccessReview). */
export type Authorize = (
  user: UserInfo,
  request: {
    readonly verb: string;
    readonly group: string;
    readonly resource: string;
    readonly name: string;
  },
) => Promise<boolean>;

/** What plugin factories are built from. */
export interface PluginDeps {
  readonly objects: AdmissionObjects;
  /** The plugin's `configuration` (or `path` file) from `--admission-control-config-file`. */
  readonly config: JsonObject | undefined;
  readonly now: () => Date;
  /** The authorizer (certificate plugins); undefined: every check is allowed. */
  readonly authorize: Authorize | undefined;
  /** kube-apiserver's `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds`. */
  readonly tolerationSeconds: { readonly notReady: number; readonly unreachable: number };
}

/** A plugin factory; undefined: the plugin has nothing to do in this server. */
export type PluginFactory = (deps: PluginDeps) => AdmissionPlugin | undefined;

/** The plugins this folder makes. */
const FACTORIES: Readonly<Record<string, PluginFactory>> = {
  AlwaysAdmit: () => alwaysAdmit(),
  AlwaysDeny: () => alwaysDeny(),
  AlwaysPullImages: () => alwaysPullImages(),
  LimitRanger: (d) => limitRanger(d.objects),
  NodeRestriction: (d) => nodeRestriction(d.objects),
  TaintNodesByCondition: () => taintNodesByCondition(),
  PodSecurity: (d) => podSecurity(d.objects, d.config),
  Priority: (d) => priority(d.objects),
  DefaultTolerationSeconds: (d) => defaultTolerationSeconds(d.tolerationSeconds),
  DefaultStorageClass: (d) => defaultStorageClass(d.objects),
  StorageObjectInUseProtection: () => storageObjectInUseProtection(),
  PersistentVolumeClaimResize: (d) => pvcResize(d.objects),
  RuntimeClass: (d) => runtimeClass(d.objects),
  CertificateApproval: (d) => certificateApproval(d.authorize),
  CertificateSigning: (d) => certificateSigning(d.authorize),
  CertificateSubjectRestriction: () => certificateSubjectRestriction(),
  DefaultIngressClass: (d) => defaultIngressClass(d.objects),
  ResourceQuota: (d) => resourceQuota(d.objects),
};

/** kube's start-up errors for the two flags (empty: fine). */
export function pluginFlagErrors(enable: readonly string[], disable: readonly string[]): string[] {
  const known = new Set(ALL_ORDERED_PLUGINS);
  const errors: string[] = [];
  for (const name of enable) {
    if (!known.has(name)) errors.push(`enable-admission-plugins plugin "${name}" is unknown`);
  }
  for (const name of disable) {
    if (!known.has(name)) errors.push(`disable-admission-plugins plugin "${name}" is unknown`);
  }
  const both = [...new Set(enable)].filter((n) => disable.includes(n)).sort();
  if (both.length > 0) {
    errors.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  }
  return errors;
}

/**
 * Plugins made outside this folder and wired by src/server/app.ts, and NamespaceLifecycle, which
 * the resource handler enforces inline.
 */
const MADE_ELSEWHERE: ReadonlySet<string> = new Set([
  'NamespaceLifecycle',
  'ServiceAccount',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
]);

/** Of `names`, those kube knows that Capstan accepts without implementing (MutatingAdmissionPolicy among them). */
export function unimplementedPlugins(names: readonly string[]): string[] {
  return names.filter((n) => !MADE_ELSEWHERE.has(n) && FACTORIES[n] === undefined);
}

/** The enabled plugin names in kube's order: the default-on set, plus `enable`, minus `disable`. */
export function enabledPluginNames(enable: readonly string[], disable: readonly string[]): string[] {
  return ALL_ORDERED_PLUGINS.filter(
    (n) => (DEFAULT_ON_PLUGINS.has(n) || enable.includes(n)) && !disable.includes(n),
  );
}

/**
 * The plugins of `names` (already in kube's order), each from its factory or from `external`;
 * names with neither are left out (see {@link unimplementedPlugins}). `configs` holds each
 * plugin's configuration by name.
 */
export function buildAdmissionPlugins(
  names: readonly string[],
  deps: Omit<PluginDeps, 'config'>,
  configs: ReadonlyMap<string, JsonObject>,
  external: ReadonlyMap<string, AdmissionPlugin>,
): AdmissionPlugin[] {
  const plugins: AdmissionPlugin[] = [];
  for (const name of names) {
    const plugin = external.get(name) ?? FACTORIES[name]?.({ ...deps, config: configs.get(name) });
    if (plugin !== undefined) plugins.push(plugin);
  }
  return plugins;
}
