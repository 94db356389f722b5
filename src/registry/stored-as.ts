/**
 * The built-in kinds stored as another group version's kind (kube's storage versions):
 * events.k8s.io/v1 Events as core v1, autoscaling/v1 HorizontalPodAutoscalers as v2. Every other
 * built-in kind is stored as itself. Discovery's storage version hashes and the storage codec
 * both read this table.
 */
import { formatApiVersion } from '../api/group-version.js';

/** A group, version and kind. */
export interface StoredKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Each served kind stored as another one, and the kind it is stored as. */
const ENTRIES: readonly { readonly served: StoredKind; readonly stored: StoredKind }[] = [
  {
    served: { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
    stored: { group: '', version: 'v1', kind: 'Event' },
  },
  {
    served: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' },
    stored: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
  },
];

const key = (group: string, version: string, kind: string): string => `${group}/${version}/${kind}`;

const STORED_AS: ReadonlyMap<string, StoredKind> = new Map(
  ENTRIES.map(({ served, stored }) => [key(served.group, served.version, served.kind), stored]),
);

/** The kind objects of `group/version/kind` are stored as, when it is another one. */
export function storedAs(group: string, version: string, kind: string): StoredKind | undefined {
  return STORED_AS.get(key(group, version, kind));
}

/** The served kinds stored as another one, as `kind` and `apiVersion`. */
export const CONVERTED_KINDS: readonly { readonly kind: string; readonly apiVersion: string }[] = ENTRIES.map(
  ({ served }) => ({
    kind: served.kind,
    apiVersion: formatApiVersion(served.group, served.version),
  }),
);
