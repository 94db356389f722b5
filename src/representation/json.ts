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

/** `Content-Type` of JSON bodies and JSON watch streams (kube sends the plain type for both). */
export const JSON_MEDIA_TYPE = 'application/json';

const COMMA = Buffer.from(',');
const LIST_TAIL = Buffer.from(']}');
const EVENT_TAIL = Buffer.from('}\n');
const EVENT_HEADS: Readonly<Record<WatchEventType, Buffer>> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
  BOOKMARK: Buffer.from('{"type":"BOOKMARK","object":'),
  ERROR: Buffer.from('{"type":"ERROR","object":'),
};

/** The list metadata object in kube's field order. */
export function listMetaObject(meta: ListMetaValues): Record<string, unknown> {
  const out: Record<string, unknown> = { resourceVersion: meta.resourceVersion };
  if (meta.continue !== undefined) out['continue'] = meta.continue;
  if (meta.remainingItemCount !== undefined) out['remainingItemCount'] = meta.remainingItemCount;
  return out;
}

/** A JSON list body of `listKind` around already-encoded item JSON documents. */
export function jsonList(
  apiVersion: string,
  listKind: string,
  meta: ListMetaValues,
  items: readonly Uint8Array[],
): Buffer {
  const head = `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`;
  const parts: Uint8Array[] = [Buffer.from(head)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(LIST_TAIL);
  return Buffer.concat(parts);
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

  event(type: WatchEventType, source: ObjectSource): Uint8Array {
    // Keyed by event type: a caching source frames each version once per type for all watchers.
    return source.encoded(`json;event=${type}`, () => jsonEvent(type, source.json()));
  }
}
