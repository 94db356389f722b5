/**
 * Names the OpenAPI documents use, derived the way kube-apiserver derives them: definition names
 * from Go package paths (`io.k8s.api.apps.v1.Deployment`), group-version paths (`api/v1`,
 * `apis/apps/v1`), operation ids (`patchAppsV1NamespacedDeployment`) and tags (`apps_v1`).
 */
import type { JsonObject } from './types.js';

/** A group, version and kind as the `x-kubernetes-group-version-kind` extension spells it. */
export interface Gvk {
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * The definition name of a protobuf message: kube names definitions by the reversed domain of the
 * Go package path, and our protobuf packages are that path with `/` → `.` and `-` → `_` (in the
 * first segment after `k8s.io`, the only place a Kubernetes package path has a dash).
 * @example definitionName('k8s.io.api.apps.v1.Deployment') // 'io.k8s.api.apps.v1.Deployment'
 * @example definitionName('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON')
 *   // 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON'
 * @throws Error for a name outside `k8s.io.` (no served kind reaches one; a new one needs a rule).
 */
export function definitionName(messageType: string): string {
  if (!messageType.startsWith('k8s.io.')) throw new Error(`no OpenAPI name rule for ${messageType}`);
  const rest = messageType.slice('k8s.io.'.length);
  const dot = rest.indexOf('.');
  const head = dot === -1 ? rest : rest.slice(0, dot);
  return `io.k8s.${head.replaceAll('_', '-')}${dot === -1 ? '' : rest.slice(dot)}`;
}

/** The extension value of a GVK, keys in kube's (sorted) order. */
export function gvkJson(g: Gvk): JsonObject {
  return { group: g.group, kind: g.kind, version: g.version };
}

/** The key of a group version in the `/openapi/v3` root: `api/v1` or `apis/<group>/<version>`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** The URL prefix of a group version's resources: `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPrefix(group: string, version: string): string {
  return `/${groupVersionPath(group, version)}`;
}

/**
 * Parses a `/openapi/v3` root key back into group and version; undefined for anything else
 * (`api/v1/x`, `apis/apps`, ...).
 */
export function parseGroupVersionPath(path: string): { group: string; version: string } | undefined {
  const parts = path.split('/');
  if (parts.length === 2 && parts[0] === 'api' && parts[1] !== '')
    return { group: '', version: parts[1] as string };
  if (parts.length === 3 && parts[0] === 'apis' && parts[1] !== '' && parts[2] !== '') {
    return { group: parts[1] as string, version: parts[2] as string };
  }
  return undefined;
}

/** `s` with its first letter in upper case (operation ids: `status` → `Status`). */
export function capitalize(s: string): string {
  return s === '' ? s : s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * The group's camel-case stem kube uses in operation ids and tags: the group without its
 * `.k8s.io` suffix, dot-separated parts joined in camel case; `core` for the core group.
 * @example groupStem('rbac.authorization.k8s.io') // 'rbacAuthorization'
 */
export function groupStem(group: string): string {
  if (group === '') return 'core';
  const parts = group.replace(/\.k8s\.io$/, '').split('.');
  return parts.map((p, i) => (i === 0 ? p : capitalize(p))).join('');
}

/** The `<Group><Version>` part of operation ids, e.g. `AppsV1`, `CoreV1`, `FlowcontrolApiserverV1`. */
export function operationStem(group: string, version: string): string {
  return capitalize(groupStem(group)) + capitalize(version);
}

/** The operation tag, e.g. `apps_v1`, `core_v1`, `rbacAuthorization_v1`. */
export function operationTag(group: string, version: string): string {
  return `${groupStem(group)}_${version}`;
}
