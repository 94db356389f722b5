/**
 * Metadata-only responses (`as=PartialObjectMetadata` / `PartialObjectMetadataList`, used by
 * metadata informers and the garbage collector): every object becomes a `PartialObjectMetadata`
 * of `meta.k8s.io/<v>` with the object's `metadata`, lists become a `PartialObjectMetadataList`,
 * in any format. As kube-apiserver: `PartialObjectMetadata` on a list and
 * `PartialObjectMetadataList` on a single object are 406; watches take either and send
 * `PartialObjectMetadata` events. ERROR events carry their Status unchanged.
 */
import { notAcceptable } from '../api/errors.js';
import type { KubeObject } from '../api/object.js';
import { DerivedSource } from './derived.js';
import { listMetaObject } from './json.js';
import { ValueSource } from './source.js';
import type { Transform } from './negotiate.js';
import type { ListMetaValues, ObjectSource, Representation, WatchEventType } from './types.js';

/** The PartialObjectMetadata of `obj` in `meta.k8s.io/<version>`. */
export function partialObjectMetadata(obj: KubeObject, version: string): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

/** The metadata-only form over a format's representation of the `meta.k8s.io` type. */
export class PartialRepresentation implements Representation {
  readonly contentType: string;
  readonly streamContentType: string;
  readonly #inner: Representation;
  readonly #transform: Transform;
  readonly #prefix: string;
  readonly #derive: (obj: KubeObject) => KubeObject;

  /** `inner` must be bound to the PartialObjectMetadata type of the transform's version. */
  constructor(inner: Representation, transform: Transform) {
    this.#inner = inner;
    this.#transform = transform;
    this.contentType = inner.contentType;
    this.streamContentType = inner.streamContentType;
    this.#prefix = `partial;${transform.version};`;
    const version = transform.version;
    this.#derive = (obj) => partialObjectMetadata(obj, version);
  }

  #view(source: ObjectSource): ObjectSource {
    return new DerivedSource(source, this.#prefix, this.#derive);
  }

  object(source: ObjectSource): Uint8Array {
    if (this.#transform.kind !== 'PartialObjectMetadata') {
      throw notAcceptable(
        `you requested PartialObjectMetadataList, but the requested object is not a list (${String(source.object().kind)})`,
      );
    }
    return this.#inner.object(this.#view(source));
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    if (this.#transform.kind !== 'PartialObjectMetadataList') {
      throw notAcceptable('you requested PartialObjectMetadata, but the requested object is a list');
    }
    if (items.length === 0) {
      // kube fills the list by appending to a nil slice: an empty one has `"items": null`.
      return this.#inner.object(
        new ValueSource({
          kind: 'PartialObjectMetadataList',
          apiVersion: `meta.k8s.io/${this.#transform.version}`,
          metadata: listMetaObject(meta),
          items: null,
        }),
      );
    }
    return this.#inner.list(
      meta,
      items.map((s) => this.#view(s)),
    );
  }

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    return this.#inner.event(type, type === 'ERROR' ? source : this.#view(source));
  }

  listBlueprint(): Uint8Array | undefined {
    // The inner representation is of PartialObjectMetadataList (kube: asPartialObjectMetadataList).
    return this.#inner.listBlueprint?.();
  }
}
