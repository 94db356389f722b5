/**
 * The schemas of the served CRD versions, for the OpenAPI documents (src/openapi/custom.ts): set
 * by the CRD controller when it serves a CRD, removed when it stops. One per server.
 */
import type { CustomKindDoc, CustomKinds } from '../openapi/custom.js';

/** Published custom kinds by owning CRD. */
export class PublishedSchemas implements CustomKinds {
  readonly #byOwner = new Map<string, readonly CustomKindDoc[]>();
  #generation = 0;
  #all: readonly CustomKindDoc[] = [];

  get generation(): number {
    return this.#generation;
  }

  kinds(): readonly CustomKindDoc[] {
    return this.#all;
  }

  /** Publishes `docs` for `owner` (a CRD name), replacing what it published. */
  set(owner: string, docs: readonly CustomKindDoc[]): void {
    this.#byOwner.set(owner, docs);
    this.#changed();
  }

  /** Stops publishing what `owner` published. */
  remove(owner: string): void {
    if (this.#byOwner.delete(owner)) this.#changed();
  }

  #changed(): void {
    this.#all = [...this.#byOwner.values()].flat();
    this.#generation += 1;
  }
}
