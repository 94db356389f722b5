/**
 * The JSON representation: objects are their wire JSON as the handlers have it (no re-encoding),
 * lists are assembled from item JSON, watch events are newline-terminated JSON objects.
 */
import type {
  ListMetaValues,
  ObjectSource,
  Representation,
  RepresentedType,
  WatchEventType,
} from './types.js';
import { jsonListBlueprint } from './list-blueprint.js';

/** `Content-Type` of JSON bodies and JSON watch streams (kube sends the plain type for both). */
export const JSON_MEDIA_TYPE = 'application/json';

const COMMA = Buffer.from(',');
/** A list ends with the newline kube's JSON encoder writes after every document (http/json-newline.ts). */
const LIST_TAIL = Buffer.from(']}\n');
const EVENT_TAIL = Buffer.from('}\n');
const EVENT_HEADS: Readonly<Record<WatchEventType, Buffer>> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
  BOOKMARK: Buffer.from('{"type":"BOOKMARK","object":'),
  ERROR: Buffer.from('{"type":"ERROR","object":'),
};

/** The list metadata object in kube's field order (an empty resourceVersion omitted, as Go's omitempty). */
export function listMetaObject(meta: ListMetaValues): Record<string, unknown> {
  const out: Record<string, unknown> =
    meta.resourceVersion === '' ? {} : { resourceVersion: meta.resourceVersion };
  if (meta.continue !== undefined) out['continue'] = meta.continue;
  if (meta.remainingItemCount !== undefined) out['remainingItemCount'] = meta.remainingItemCount;
  return out;
}

/** Lists are handed out in chunks of about this many bytes. */
const LIST_CHUNK_BYTES = 64 * 1024;

/**
 * A JSON list body of `listKind` around item JSON documents, in chunks of about 64 KiB. Lazy: an
 * item is taken from `items` only when its chunk is being built, so a streamed list never holds
 * more than one chunk. The chunks are gathered here, in the loop over the items, rather than
 * yielded item by item: one generator step per chunk instead of two per item keeps a list of
 * 100,000 items cheap (and 10 such lists at once).
 */
export function* jsonListParts(
  apiVersion: string,
  listKind: string,
  meta: ListMetaValues,
  items: Iterable<Uint8Array>,
): Generator<Uint8Array> {
  let parts: Uint8Array[] = [
    Buffer.from(
      `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`,
    ),
  ];
  let bytes = parts[0]?.byteLength ?? 0;
  let first = true;
  for (const item of items) {
    if (!first) {
      parts.push(COMMA);
      bytes += 1;
    }
    first = false;
    parts.push(item);
    bytes += item.byteLength;
    if (bytes >= LIST_CHUNK_BYTES) {
      yield Buffer.concat(parts, bytes);
      parts = [];
      bytes = 0;
    }
  }
  parts.push(LIST_TAIL);
  yield Buffer.concat(parts, bytes + LIST_TAIL.byteLength);
}

/** {@link jsonListParts} as one buffer. */
export function jsonList(
  apiVersion: string,
  listKind: string,
  meta: ListMetaValues,
  items: Iterable<Uint8Array>,
): Buffer {
  return Buffer.concat([...jsonListParts(apiVersion, listKind, meta, items)]);
}

/** One JSON watch event line around an object's JSON. */
export function jsonEvent(type: WatchEventType, object: Uint8Array): Buffer {
  return Buffer.concat([EVENT_HEADS[type], object, EVENT_TAIL]);
}

/** Plain JSON of the request's type. */
export class JsonRepresentation implements Representation {
  readonly contentType = JSON_MEDIA_TYPE;
  readonly streamContentType = JSON_MEDIA_TYPE;
  readonly #type: RepresentedType;

  constructor(type: RepresentedType) {
    this.#type = type;
  }

  object(source: ObjectSource): Uint8Array {
    return source.json();
  }

  list(meta: ListMetaValues, items: readonly ObjectSource[]): Uint8Array {
    return jsonList(
      this.#type.apiVersion,
      this.#type.listKind,
      meta,
      items.map((s) => s.json()),
    );
  }

  listParts(meta: ListMetaValues, items: Iterable<ObjectSource>): Iterable<Uint8Array> {
    return jsonListParts(this.#type.apiVersion, this.#type.listKind, meta, jsonOf(items));
  }

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    // Keyed by event type: a caching source frames each version once per type for all watchers.
    return source.encoded(`json;event=${type}`, () => jsonEvent(type, source.json()));
  }

  listBlueprint(): Uint8Array {
    return jsonListBlueprint(this.#type);
  }
}

function* jsonOf(sources: Iterable<ObjectSource>): Generator<Uint8Array> {
  for (const source of sources) yield source.json();
}
