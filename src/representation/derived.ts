/**
 * An {@link ObjectSource} computed from another (the metadata-only view of an object version):
 * its encodings are cached on the base source under a prefixed key, so a caching base encodes
 * each view of each version once too.
 */
import type { KubeObject } from '../api/object.js';
import type { ObjectSource } from './types.js';

const encoder = new TextEncoder();

/** A view of `base` produced by `derive`, with cache keys prefixed by `prefix`. */
export class DerivedSource implements ObjectSource {
  readonly #base: ObjectSource;
  readonly #prefix: string;
  readonly #derive: (obj: KubeObject) => KubeObject;
  #object: KubeObject | undefined;

  constructor(base: ObjectSource, prefix: string, derive: (obj: KubeObject) => KubeObject) {
    this.#base = base;
    this.#prefix = prefix;
    this.#derive = derive;
  }

  object(): KubeObject {
    return (this.#object ??= this.#derive(this.#base.object()));
  }

  json(): Uint8Array {
    return this.#base.encoded(`${this.#prefix}json`, () => encoder.encode(JSON.stringify(this.object())));
  }

  encoded(key: string, produce: () => Uint8Array): Uint8Array {
    return this.#base.encoded(`${this.#prefix}${key}`, produce);
  }
}
