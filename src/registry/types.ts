/**
 * The schema registry's view of one served resource type. Everything the HTTP facade needs to
 * know about a kind comes from here; nothing about a kind is written twice.
 *
 * Filled by `src/registry/registry.ts` from `proto/kinds.yaml` (names, scope, verbs, storage
 * layout) and the generated message schemas (`src/registry/generated/`).
 */
import { createHash } from 'node:crypto';

/** kube's per-kind `ValidateNameFunc` choices (`nameRule` in proto/kinds.yaml). */
export type NameRule =
  /** `NameIsDNSSubdomain`: most kinds. */
  | 'subdomain'
  /** `NameIsDNSLabel`: Namespace, StatefulSet. */
  | 'label'
  /** `NameIsDNS1035Label`: Service. */
  | 'dns1035'
  /** `path.IsValidPathSegmentName`: RBAC, flow control, APIService. */
  | 'path'
  /** CSIDriver: at most 63 bytes, a DNS subdomain once lower-cased. */
  | 'csidriver'
  /** CertificateSigningRequest: any name. */
  | 'any'
  /** Review kinds: never stored, no metadata validation. */
  | 'virtual';

/** Every {@link NameRule}. */
export const NAME_RULES: readonly NameRule[] = [
  'subdomain',
  'label',
  'dns1035',
  'path',
  'csidriver',
  'any',
  'virtual',
];

/** A served group/version/resource, e.g. apps/v1 deployments. */
export interface ResourceType {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** `v1` for the core group, else `group/version`. */
  readonly apiVersion: string;
  readonly kind: string;
  /** `${kind}List`. */
  readonly listKind: string;
  /** URL segment, lower case plural (`deployments`). */
  readonly plural: string;
  /** Lower case singular (`deployment`). */
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  /** e.g. `['all']` for the kinds `kubectl get all` shows. */
  readonly categories: readonly string[];
  /** Discovery verbs: get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verbs: readonly string[];
  /** Subresources served under the item path. */
  readonly subresources: readonly Subresource[];
  /**
   * Key segment under the storage prefix, as kube-apiserver lays it out: usually the plural,
   * with exceptions (`services/specs`, `services/endpoints`, `minions`, `controllers`, `ingress`,
   * `apiextensions.k8s.io/customresourcedefinitions`, ...). Keys are
   * `<prefix>/<storageResource>/<namespace>/<name>` or `<prefix>/<storageResource>/<name>`.
   */
  readonly storageResource: string;
  /** Fully qualified protobuf message name of the kind, e.g. `k8s.io.api.apps.v1.Deployment`. */
  readonly messageType: string;
  /** Virtual types (reviews) are create-only and never stored. */
  readonly virtual: boolean;
  /** `metadata.generation` is 1 on create and +1 on each change outside metadata and status. */
  readonly tracksGeneration: boolean;
  /** A PUT of a missing object creates it. */
  readonly createOnUpdate: boolean;
  /** A client-set `status` survives create (kinds with a status subresource drop it otherwise). */
  readonly keepStatusOnCreate: boolean;
  /** DELETE answers with the object; otherwise with a `Status` of `Success`. */
  readonly returnDeletedObject: boolean;
  /** The name rule of metadata validation. */
  readonly nameRule: NameRule;
  /** Objects are written with the `--event-ttl` storage lease (core and events.k8s.io Event). */
  readonly eventTTL: boolean;
  /**
   * Discovery's `storageVersionHash`: {@link storageVersionHash} of the group, version and kind
   * objects of this type are stored as. Absent for types never stored (virtual kinds).
   */
  readonly storageVersionHash?: string;
}

/**
 * kube's storage version hash: the first 8 bytes of the SHA-256 of `group/version/kind`,
 * base64 (`/v1/Pod` for the core group). Clients compare it to notice a storage version change.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256')
    .update(`${group}/${version}/${kind}`)
    .digest()
    .subarray(0, 8)
    .toString('base64');
}

/** Lookup over every served resource type. */
export interface Registry {
  /** Every served type, in a stable order (group, version, plural). */
  all(): readonly ResourceType[];
  /** By URL: group (`''` for core), version and plural. */
  byResource(group: string, version: string, plural: string): ResourceType | undefined;
  /** By group, version and kind. */
  byKind(group: string, version: string, kind: string): ResourceType | undefined;
}

/**
 * Subresources with their own routes: `status`, `scale`, `ephemeralcontainers` (a pod's
 * debugging containers) and `resize` (a pod's container resources) are served by the generic verbs, `token` (serviceaccounts/token,
 * TokenRequest) by a custom endpoint.
 */
export const SUBRESOURCES = [
  'status',
  'scale',
  'ephemeralcontainers',
  'resize',
  'token',
  'approval',
  'eviction',
  'log',
  'exec',
  'attach',
  'portforward',
  'proxy',
] as const;

/** One of {@link SUBRESOURCES} (what `proto/kinds.yaml` may list for a kind). */
export type Subresource = (typeof SUBRESOURCES)[number];

/**
 * Subresources that endpoints of their own serve, which a type's `subresources` do not list:
 * `pods/binding` (src/server/binding-endpoints.ts) and `namespaces/finalize` (an update of the
 * finalizers). Routing, discovery and the OpenAPI documents all take them from here.
 */
export type EndpointSubresource = 'binding' | 'finalize';

const POD_ENDPOINTS: readonly EndpointSubresource[] = ['binding'];
const NAMESPACE_ENDPOINTS: readonly EndpointSubresource[] = ['finalize'];

/** The {@link EndpointSubresource}s of a type: only the core group's Pod and Namespace have any. */
export function endpointSubresources(
  t: Pick<ResourceType, 'group' | 'kind'>,
): readonly EndpointSubresource[] {
  if (t.group !== '') return [];
  if (t.kind === 'Pod') return POD_ENDPOINTS;
  if (t.kind === 'Namespace') return NAMESPACE_ENDPOINTS;
  return [];
}
