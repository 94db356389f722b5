/**
 * The JSON body of a list, written in pieces: the head (`kind`, `apiVersion`, list metadata),
 * the items' bytes as they are (cached or stored encodings, each produced once), the tail. Pieces
 * are gathered into writes of about 64 KiB, so a list of 50,000 objects never exists as one
 * string or buffer, and the stream's back-pressure paces the work to the client.
 */
import { Readable } from 'node:stream';

/** List metadata on the wire. */
export interface ListMeta {
  readonly resourceVersion: bigint;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

const CHUNK_BYTES = 64 * 1024;
const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');

function head(listKind: string, apiVersion: string, meta: ListMeta): Buffer {
  const m: Record<string, unknown> = { resourceVersion: String(meta.resourceVersion) };
  if (meta.continue !== undefined) m['continue'] = meta.continue;
  if (meta.remainingItemCount !== undefined) m['remainingItemCount'] = meta.remainingItemCount;
  return Buffer.from(
    `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(m)},"items":[`,
  );
}

function* pieces(
  listKind: string,
  apiVersion: string,
  meta: ListMeta,
  items: Iterable<Uint8Array>,
): Generator<Buffer> {
  let parts: Uint8Array[] = [head(listKind, apiVersion, meta)];
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
    if (bytes >= CHUNK_BYTES) {
      yield Buffer.concat(parts, bytes);
      parts = [];
      bytes = 0;
    }
  }
  parts.push(TAIL);
  yield Buffer.concat(parts, bytes + TAIL.length);
}

/**
 * A stream of a body given as parts to write in order (e.g. a protobuf list whose parts point at
 * cached item bytes), gathered into writes of about 64 KiB without joining the whole body.
 */
export function partsStream(parts: Iterable<Uint8Array>): Readable {
  return Readable.from(gathered(parts), { objectMode: false });
}

function* gathered(parts: Iterable<Uint8Array>): Generator<Buffer> {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  for (const part of parts) {
    batch.push(part);
    bytes += part.byteLength;
    if (bytes >= CHUNK_BYTES) {
      yield Buffer.concat(batch, bytes);
      batch = [];
      bytes = 0;
    }
  }
  if (bytes > 0) yield Buffer.concat(batch, bytes);
}

/**
 * A stream of the list's JSON. `items` is iterated lazily as the client reads; it must be a
 * snapshot that does not change meanwhile (a cache snapshot or a finished storage read).
 */
export function listStream(
  listKind: string,
  apiVersion: string,
  meta: ListMeta,
  items: Iterable<Uint8Array>,
): Readable {
  return Readable.from(pieces(listKind, apiVersion, meta, items), { objectMode: false });
}

/** The whole list as one buffer (small lists, tests). */
export function listBuffer(
  listKind: string,
  apiVersion: string,
  meta: ListMeta,
  items: Iterable<Uint8Array>,
): Buffer {
  return Buffer.concat([...pieces(listKind, apiVersion, meta, items)]);
}
