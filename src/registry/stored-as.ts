/**
 * The built-in kinds stored as another group version's kind (kube's storage versions):
 * events.k8s.io/v1 Events as core v1, autoscaling/v1 HorizontalPodAutoscalers as v2. Every other
 * built-in kind is stored as itself. Discovery's storage version hashes and the storage codec
 * both read this table.
 */

/** A group, version and kind. */
export interface StoredKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Served kind (`group/version/kind`) → the kind it is stored as. */
const STORED_AS: ReadonlyMap<string, StoredKind> = new Map([
  ['events.k8s.io/v1/Event', { group: '', version: 'v1', kind: 'Event' }],
  [
    'autoscaling/v1/HorizontalPodAutoscaler',
    { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' },
  ],
]);

/** The kind objects of `group/version/kind` are stored as, when it is another one. */
export function storedAs(group: string, version: string, kind: string): StoredKind | undefined {
  return STORED_AS.get(`${group}/${version}/${kind}`);
}

/** The served kinds stored as another one, as `kind` and `apiVersion`. */
export const CONVERTED_KINDS: readonly { readonly kind: string; readonly apiVersion: string }[] = [
  ...STORED_AS.keys(),
].map((key) => {
  const [group = '', version = '', kind = ''] = key.split('/');
  return { kind, apiVersion: group === '' ? version : `${group}/${version}` };
});
