/**
 * The protobuf representation (`application/vnd.kubernetes.protobuf`): objects in the `k8s\0`
 * envelope, lists assembled from item messages, watch events as length-prefixed frames
 * (`;stream=watch`). Item messages go through {@link ObjectSource.encoded} under the key
 * {@link PROTOBUF_ITEM_KEY}, so a caching source encodes each object version once.
 */
import type { ProtobufCodec } from '../codec/index.js';
import {
  encodeEnvelope,
  encodeWatchFrame,
  PROTOBUF_MEDIA_TYPE,
  PROTOBUF_WATCH_MEDIA_TYPE,
} from '../codec/index.js';
import { internalError } from '../api/errors.js';
import type { KubeObject } from '../api/object.js';
import { listMetaObject } from './json.js';
import type { MessageTypes } from './message-types.js';
import type {
  ListMetaValues,
  ObjectSource,
  Representation,
  RepresentedType,
  WatchEventType,
} from './types.js';

/** Cache key of an object version's protobuf message (no envelope). */
export const PROTOBUF_ITEM_KEY = 'protobuf';

/** Encodes objects of any kind with a protobuf form; the kind is read from the object. */
export class ProtobufEncoder {
  readonly #codec: ProtobufCodec;
  readonly #types: MessageTypes;

  constructor(codec: ProtobufCodec, types: MessageTypes) {
    this.#codec = codec;
    this.#types = types;
  }

  /** The codec (request bodies decode through it). */
  get codec(): ProtobufCodec {
    return this.#codec;
  }

  /** @throws ApiError 500 for an object without a protobuf form (a wiring bug). */
  messageType(obj: KubeObject): string {
    const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    const kind = typeof obj.kind === 'string' ? obj.kind : '';
    const type = this.#types.of(apiVersion, kind);
    if (type === undefined) throw internalError(`no protobuf serialization for ${apiVersion}/${kind}`);
    return type;
  }

  /** The message type of `apiVersion`/`kind`, or undefined when it has no protobuf form. */
  messageTypeOf(apiVersion: string, kind: string): string | undefined {
    return this.#types.of(apiVersion, kind);
  }

  /** The message bytes of `obj` (no envelope). */
  message(obj: KubeObject): Uint8Array {
    return this.#codec.encodeMessage(this.messageType(obj), obj);
  }

  /** The cached-or-computed message of a source. */
  item(source: ObjectSource): Uint8Array {
    return source.encoded(PROTOBUF_ITEM_KEY, () => this.message(source.object()));
  }

  /** The enveloped object. */
  envelope(obj: KubeObject, message: Uint8Array): Uint8Array {
    return encodeEnvelope(String(obj.apiVersion ?? ''), String(obj.kind ?? ''), message);
  }

  /** A list body around item messages, as parts that alias the items (see `encodeListParts`). */
  listParts(
    apiVersion: string,
    listKind: string,
    meta: ListMetaValues,
    items: readonly Uint8Array[],
  ): Uint8Array[] {
    return this.#codec.encodeListParts(apiVersion, listKind, listMetaObject(meta), items);
  }

  /** A whole list body around item messages. */
  list(apiVersion: string, listKind: string, meta: ListMetaValues, items: readonly Uint8Array[]): Uint8Array {
    return this.#codec.encodeListFromItems(apiVersion, listKind, listMetaObject(meta), items);
  }
}

/** Protobuf of the request's type. */
export class ProtobufRepresentation implements Representation {
  readonly contentType = PROTOBUF_MEDIA_TYPE;
  readonly streamContentType = PROTOBUF_WATCH_MEDIA_TYPE;
  readonly #type: RepresentedType;
  readonly #encoder: ProtobufEncoder;

  constructor(type: RepresentedType, encoder: ProtobufEncoder) {
    this.#type = type;
    this.#encoder = encoder;
  }

  object(source: ObjectSource): Uint8Array {
    return this.#encoder.envelope(source.object(), this.#encoder.item(source));
  }

  listParts(meta: ListMetaValues, items: Iterable<ObjectSource>): Iterable<Uint8Array> {
    // The envelope's length comes first, so every item message is needed up front.
    return this.#encoder.listParts(
      this.#type.apiVersion,
      this.#type.listKind,
      meta,
      Array.from(items, (s) => this.#encoder.item(s)),
    );
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    return this.#encoder.list(
      this.#type.apiVersion,
      this.#type.listKind,
      meta,
      items.map((s) => this.#encoder.item(s)),
    );
  }

  listBlueprint(): Uint8Array {
    // kube's empty ListMeta: its string fields are always written, empty.
    return this.#encoder.list(
      this.#type.apiVersion,
      this.#type.listKind,
      { resourceVersion: '', continue: '' },
      [],
    );
  }

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    // Keyed by event type: a caching source frames each version once per type for all watchers.
    return source.encoded(`${PROTOBUF_ITEM_KEY};event=${type}`, () =>
      encodeWatchFrame(type, this.object(source)),
    );
  }
}
