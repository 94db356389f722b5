/**
 * Decoded versions shared between readers that never modify what they read (admission plugins'
 * lookups, service-account token checks). A version (key, mod revision) never changes, and the
 * same few are read on every request of a kind: a pod create reads its namespace (Pod Security),
 * its service account and the PriorityClasses. Each is decoded once and handed out frozen, so a
 * reader that tried to modify one would fail loudly instead of changing what the others see.
 */
import { decodeStored, deepFreeze, type KubeObject } from '../api/object.js';

/** Versions kept, oldest forgotten first. */
const ENTRIES = 1024;

/** See the module comment. */
export class SharedDecodes {
  readonly #memo = new Map<string, KubeObject>();

  /** The frozen object stored as `value` under `key` at `revision`. */
  of(key: string, value: Uint8Array, revision: bigint): Readonly<KubeObject> {
    const memoKey = `${revision}\u0000${key}`;
    const known = this.#memo.get(memoKey);
    if (known !== undefined) return known;
    const obj = deepFreeze(decodeStored(value, revision));
    if (this.#memo.size >= ENTRIES) {
      const oldest = this.#memo.keys().next();
      if (oldest.done !== true) this.#memo.delete(oldest.value);
    }
    this.#memo.set(memoKey, obj);
    return obj;
  }
}
