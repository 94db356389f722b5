/**
 * The seam between the resource handlers and the wire: a {@link Representation}, chosen once per
 * request by negotiation, turns object versions ({@link ObjectSource}) into response bytes. Every
 * encoder is a pure function of its inputs (object → bytes, list items → list bytes, event →
 * frame bytes), so a cache of encoded object versions (the watch cache's `encoded(format, ...)`)
 * can hold the per-item part and lists and watch frames are assembled from it.
 */
import type { KubeObject } from '../api/object.js';

/** Watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One object version as the encoders read it. Implementations compute each form lazily and at
 * most once; callers must not mutate what they get.
 */
export interface ObjectSource {
  /** The object's wire JSON, `metadata.resourceVersion` set. */
  json(): Uint8Array;
  /** The parsed object, `metadata.resourceVersion` set. Shared: never mutate. */
  object(): KubeObject;
  /**
   * The bytes of this version in the encoding named `key` (for example `protobuf`): cached when
   * the source has a cache (watch-cache versions do), else simply `produce()`. `produce` must be
   * a pure function of the object.
   */
  encoded(key: string, produce: () => Uint8Array): Uint8Array;
}

/** The list metadata of a list response. */
export interface ListMetaValues {
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

/** The API type a request is about: what lists and bookmarks are named after. */
export interface RepresentedType {
  /** `v1` or `group/version`. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly listKind: string;
  readonly group: string;
  /** Plural resource name (selects the Table printer). */
  readonly plural: string;
}

/** A response encoding chosen by negotiation, bound to one request's type. */
export interface Representation {
  /** `Content-Type` of object and list bodies. */
  readonly contentType: string;
  /** `Content-Type` of a watch stream. */
  readonly streamContentType: string;
  /**
   * The body of one object (get, create, update, patch, delete, subresources).
   * @throws ApiError 406 when the object cannot take this form (a list-only conversion).
   */
  object(source: ObjectSource): Uint8Array;
  /**
   * The body of a list of the request's type from its items.
   * @throws ApiError 406 when lists cannot take this form (an item-only conversion).
   */
  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array;
  /**
   * The same body as {@link list}, as parts to write in order that reference the items' cached
   * encodings instead of copying them (forms that can stream large lists offer it).
   */
  listParts?(meta: ListMetaValues, items: Iterable<ObjectSource>): Iterable<Uint8Array>;
  /** One watch event as it goes on the stream (a JSON line, a length-prefixed frame). */
  event(type: WatchEventType, source: ObjectSource): Uint8Array;
  /**
   * The empty list of the request's type in this encoding, which a WatchList stream's
   * initial-events-end bookmark carries (see list-blueprint.ts); absent where kube sends none.
   */
  listBlueprint?(): Uint8Array | undefined;
}
