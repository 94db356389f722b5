/**
 * Streaming a list body: the representation gives it as parts to write in order (the head, each
 * item's cached or stored encoding, the tail); they are gathered into writes of about 64 KiB, so
 * a list of 50,000 objects never exists as one string or buffer, and the stream's back-pressure
 * paces the work to the client.
 */
import { Readable } from 'node:stream';

const CHUNK_BYTES = 64 * 1024;

/**
 * A stream of a body given as parts. `parts` is iterated lazily as the client reads; what it
 * reads from must be a snapshot that does not change meanwhile (a cache snapshot or a finished
 * storage read).
 */
export function partsStream(parts: Iterable<Uint8Array>): Readable {
  return Readable.from(gathered(parts), { objectMode: false });
}

function* gathered(parts: Iterable<Uint8Array>): Generator<Buffer> {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (bytes === 0 && part.byteLength >= CHUNK_BYTES) {
      yield Buffer.from(part.buffer, part.byteOffset, part.byteLength); // already a whole chunk
      continue;
    }
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
