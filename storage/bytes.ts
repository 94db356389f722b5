/**
 * Copies of bytes that are kept for long (a stored version, a watched value) with a backing store
 * of their own. Node allocates a small Buffer (`Buffer.from`, `Buffer.concat`, under 4 KiB) as a
 * slice of a shared 8 KiB pool slab, and one slice kept alive keeps its whole slab: a server
 * holding 2,000 pods kept 11,800 slabs (92 MiB); with copies of their own, all its buffers took
 * 60 MiB, against 124 before (docs/bench/cluster.md).
 */

/** A copy of `bytes` in a buffer of exactly its length. */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafeSlow(bytes.byteLength);
  out.set(bytes);
  return out;
}
