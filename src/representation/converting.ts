/**
 * A representation of a type that shares storage with another version of its kind (core and
 * events.k8s.io Events): every object it is given is first brought to the type's own form
 * (src/conversion), then encoded by the inner representation. Objects already in the type's form
 * pass through as they are (their cached encodings are used as usual).
 */
import type { Conversion } from '../conversion/index.js';
import type { KubeObject } from '../api/object.js';
import { DerivedSource } from './derived.js';
import type { ListMetaValues, ObjectSource, Representation, WatchEventType } from './types.js';

/** Sources in `apiVersion`'s form, converting those that are not. */
class ConvertedView {
  readonly #apiVersion: string;
  readonly #prefix: string;
  readonly #convert: Conversion;

  constructor(apiVersion: string, convert: Conversion) {
    this.#apiVersion = apiVersion;
    this.#prefix = `as;${apiVersion};`;
    this.#convert = convert;
  }

  of(source: ObjectSource): ObjectSource {
    const obj = source.object();
    if (obj.apiVersion === this.#apiVersion || obj.kind === 'Status') return source;
    return new DerivedSource(source, this.#prefix, (o: KubeObject) => this.#convert(o));
  }
}

/** `inner` fed with objects converted to `apiVersion`'s form by `convert`. */
export class ConvertingRepresentation implements Representation {
  readonly contentType: string;
  readonly streamContentType: string;
  readonly #inner: Representation;
  readonly #view: ConvertedView;
  readonly listParts?: (meta: ListMetaValues, items: Iterable<ObjectSource>) => Iterable<Uint8Array>;

  constructor(inner: Representation, apiVersion: string, convert: Conversion) {
    this.#inner = inner;
    this.#view = new ConvertedView(apiVersion, convert);
    this.contentType = inner.contentType;
    this.streamContentType = inner.streamContentType;
    const parts = inner.listParts?.bind(inner);
    if (parts !== undefined) {
      const view = this.#view;
      this.listParts = (meta, items) =>
        parts(
          meta,
          mapped(items, (s) => view.of(s)),
        );
    }
  }

  object(source: ObjectSource): Uint8Array {
    return this.#inner.object(this.#view.of(source));
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    return this.#inner.list(
      meta,
      items.map((s) => this.#view.of(s)),
    );
  }

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    return this.#inner.event(type, type === 'ERROR' || type === 'BOOKMARK' ? source : this.#view.of(source));
  }

  listBlueprint(): Uint8Array | undefined {
    return this.#inner.listBlueprint?.();
  }
}

function* mapped<A, B>(items: Iterable<A>, f: (a: A) => B): Generator<B> {
  for (const item of items) yield f(item);
}
