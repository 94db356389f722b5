/**
 * Bytes that are kept for long (a decoded stored value) in buffers
 * of their own: Node allocates a small Buffer (`Buffer.from`, `Buffer.concat`, under 4 KiB) as a
 * slice of a shared 8 KiB pool slab, and one slice kept alive keeps its whole slab (the same
 * concern as storage/bytes.ts, which the layers here may not share).
 */

/** `text` as UTF-8 in a buffer of exactly its length. */
export function ownedUtf8(text: string): Buffer {
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  out.write(text);
  return out;
}
