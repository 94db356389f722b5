/**
 * {@link ObjectSource}s of the handlers: a stored value at a revision, response JSON, a value.
 * None caches encodings across requests (the watch cache's versions do that); each computes its
 * JSON and its parse at most once.
 */
import { decodeStored, withResourceVersion, type KubeObject } from '../api/object.js';
import type { ObjectSource } from './types.js';

const encoder = new TextEncoder();

/** An object version as stored: the value bytes and the revision that is its resourceVersion. */
export class StoredSource implements ObjectSource {
  readonly #value: Uint8Array;
  readonly #revision: bigint;
  #json: Uint8Array | undefined;
  #object: KubeObject | undefined;

  constructor(value: Uint8Array, revision: bigint) {
    this.#value = value;
    this.#revision = revision;
  }

  json(): Uint8Array {
    return (this.#json ??= withResourceVersion(this.#value, this.#revision));
  }

  object(): KubeObject {
    return (this.#object ??= decodeStored(this.#value, this.#revision));
  }

  encoded(_key: string, produce: () => Uint8Array): Uint8Array {
    return produce();
  }
}

/** A JSON document already in wire form (a handler's reply). */
export class JsonSource implements ObjectSource {
  readonly #json: Uint8Array;
  #object: KubeObject | undefined;

  constructor(json: Uint8Array | string) {
    this.#json = typeof json === 'string' ? encoder.encode(json) : json;
  }

  json(): Uint8Array {
    return this.#json;
  }

  /** @throws SyntaxError when the bytes are not JSON (a handler bug: handlers write JSON). */
  object(): KubeObject {
    return (this.#object ??= JSON.parse(
      Buffer.from(this.#json.buffer, this.#json.byteOffset, this.#json.byteLength).toString('utf8'),
    ) as KubeObject);
  }

  encoded(_key: string, produce: () => Uint8Array): Uint8Array {
    return produce();
  }
}

/** An object value (Status, bookmark, synthesized objects). */
export class ValueSource implements ObjectSource {
  readonly #object: KubeObject;
  #json: Uint8Array | undefined;

  constructor(object: KubeObject) {
    this.#object = object;
  }

  json(): Uint8Array {
    return (this.#json ??= encoder.encode(JSON.stringify(this.#object)));
  }

  object(): KubeObject {
    return this.#object;
  }

  encoded(_key: string, produce: () => Uint8Array): Uint8Array {
    return produce();
  }
}
