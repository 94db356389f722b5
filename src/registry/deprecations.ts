/**
 * Deprecated API versions: kube's `Warning` text and removal release per served kind, after
 * kube's `k8s.io/apiserver/pkg/endpoints/deprecation` (`WarningMessage`), which reads the
 * prerelease-lifecycle of each type: `<group>/<version> <Kind> is deprecated in v1.X+,
 * unavailable in v1.Y+; use <group>/<version> <Kind>`.
 *
 * Of the kinds Capstan serves, kube-apiserver 1.33 marks two deprecated: v1 ComponentStatus
 * (since 1.19, with no removal release and no replacement) and v1 Endpoints (since 1.33, no
 * removal release, replaced by discovery.k8s.io/v1 EndpointSlice). Custom resource versions marked
 * `deprecated` (with their own `deprecationWarning`) use the same {@link Deprecations}.
 */
import { formatApiVersion } from '../api/group-version.js';

/** One deprecated kind version, as kube's lifecycle functions state it. */
export interface DeprecationSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** `[major, minor]` of the release that deprecated it. */
  readonly deprecated: readonly [number, number];
  /** `[major, minor]` of the release that stops serving it, if known. */
  readonly removed?: readonly [number, number];
  readonly replacement?: { readonly group: string; readonly version: string; readonly kind: string };
  /** A custom warning instead of kube's text (CRD `deprecationWarning`). */
  readonly warning?: string;
}

/** What a request for a deprecated version gets. */
export interface Deprecation {
  /** The `Warning` header's text. */
  readonly warning: string;
  /** `1.Y` of the removal, or '' (the metric's `removed_release` label). */
  readonly removedRelease: string;
}

/** kube 1.33's deprecated built-in versions among those Capstan serves. */
export const KUBE_DEPRECATIONS: readonly DeprecationSpec[] = [
  { group: '', version: 'v1', kind: 'ComponentStatus', deprecated: [1, 19] },
  {
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    deprecated: [1, 33],
    replacement: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
  },
];

/** kube's warning text for `spec`. */
export function deprecationWarning(spec: DeprecationSpec): string {
  if (spec.warning !== undefined) return spec.warning;
  const [major, minor] = spec.deprecated;
  let msg = `${formatApiVersion(spec.group, spec.version)} ${spec.kind} is deprecated in v${major}.${minor}+`;
  if (spec.removed !== undefined) msg += `, unavailable in v${spec.removed[0]}.${spec.removed[1]}+`;
  const r = spec.replacement;
  if (r !== undefined && r.group !== '' && r.version !== '' && r.kind !== '') {
    msg += `; use ${formatApiVersion(r.group, r.version)} ${r.kind}`;
  }
  return msg;
}

/** Lookup of deprecations by group, version and kind; immutable. */
export class Deprecations {
  readonly #byKind = new Map<string, Deprecation>();

  constructor(specs: readonly DeprecationSpec[] = KUBE_DEPRECATIONS) {
    for (const s of specs) {
      this.#byKind.set(`${s.group}/${s.version}/${s.kind}`, {
        warning: deprecationWarning(s),
        removedRelease: s.removed === undefined ? '' : `${s.removed[0]}.${s.removed[1]}`,
      });
    }
  }

  /** The deprecation of a kind version, or undefined when it is not deprecated. */
  of(group: string, version: string, kind: string): Deprecation | undefined {
    return this.#byKind.get(`${group}/${version}/${kind}`);
  }

  /** True when nothing is deprecated (the request hook is then not installed). */
  get empty(): boolean {
    return this.#byKind.size === 0;
  }
}
