/**
 * Encryption at rest at the store boundary: a {@link Store} that seals the values of the
 * resources an EncryptionConfiguration lists on every write (with the resource's first provider)
 * and opens them on every read (get, range, watch events, and the current values carried by
 * AlreadyExists and Conflict errors) with whichever provider's prefix the value carries. It sits
 * below the storage codec, so what is encrypted is exactly what would otherwise be stored
 * (protobuf envelope or JSON), as in kube-apiserver, on every backend.
 *
 * Rotation, as in kube: put the new key first and keep the old one listed; reads of old values
 * work, and every update rewrites a value with the new key (a no-op update of each object,
 * `kubectl get secrets -A -o json | kubectl replace -f -`, rewrites them all).
 */
import type { KeyValue, Store } from '../../storage/interface.js';
import { ValueMappingStore } from '../../storage/value-mapping.js';
import type { Registry } from '../registry/types.js';
import type { EncryptionConfig } from './config.js';
import { ProviderChain } from './providers.js';

/** True when a configured name (`secrets`, `*.apps`, `*.*`) covers `resource` of `group`. */
function covers(name: string, resource: string, group: string): boolean {
  if (name === '*.*') return true;
  const dot = name.indexOf('.');
  const r = dot < 0 ? name : name.slice(0, dot);
  const g = dot < 0 ? '' : name.slice(dot + 1);
  if (r === '*') return g === group;
  return r === resource && g === group;
}

/**
 * The provider chain of each storage location (`/<storageResource>/`) the configuration covers,
 * decided by the first `resources` entry naming one of the kinds stored there.
 */
export function chainsByPrefix(registry: Registry, config: EncryptionConfig): Map<string, ProviderChain> {
  const chains = config.resources.map((r) => ({ names: r.resources, chain: new ProviderChain(r.providers) }));
  const out = new Map<string, ProviderChain>();
  const byStorage = new Map<string, { plural: string; group: string }[]>();
  for (const t of registry.all()) {
    if (t.virtual || t.storageResource === '') continue;
    const list = byStorage.get(t.storageResource) ?? [];
    list.push({ plural: t.plural, group: t.group });
    byStorage.set(t.storageResource, list);
  }
  for (const [storage, kinds] of byStorage) {
    const hit = chains.find((c) => c.names.some((n) => kinds.some((k) => covers(n, k.plural, k.group))));
    if (hit !== undefined) out.set(`/${storage}/`, hit.chain);
  }
  return out;
}

/**
 * `store` with the values under `chains`' prefixes encrypted. `keyPrefix` (`--etcd-prefix`) is
 * prepended to keys for aesgcm's authenticated data, so the data binds to the full etcd key as in
 * kube-apiserver. `close()` closes `store`.
 */
export function encryptingStore(
  store: Store,
  chains: ReadonlyMap<string, ProviderChain>,
  keyPrefix: string,
): Store {
  return new EncryptingStore(store, chains, keyPrefix);
}

class EncryptingStore extends ValueMappingStore {
  readonly #chains: readonly (readonly [string, ProviderChain])[];
  readonly #keyPrefix: string;

  constructor(inner: Store, chains: ReadonlyMap<string, ProviderChain>, keyPrefix: string) {
    super(inner);
    this.#chains = [...chains];
    this.#keyPrefix = keyPrefix;
  }

  #chainOf(key: string): ProviderChain | undefined {
    for (const [prefix, chain] of this.#chains) if (key.startsWith(prefix)) return chain;
    return undefined;
  }

  protected toStored(key: string, value: Uint8Array): Uint8Array {
    const chain = this.#chainOf(key);
    return chain === undefined ? value : chain.seal(value, this.#keyPrefix + key);
  }

  protected toCaller(kv: KeyValue): KeyValue {
    const chain = this.#chainOf(kv.key);
    if (chain === undefined) return kv;
    return { ...kv, value: chain.open(kv.value, this.#keyPrefix + kv.key) };
  }
}
