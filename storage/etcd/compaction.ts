/**
 * Learning etcd's compacted revision, and telling "compacted" from "future revision".
 *
 * etcd never reports its compacted revision directly (its Status response has no such field in
 * 3.4), and a read below it fails with OUT_OF_RANGE and no revision in the error. What etcd does
 * answer exactly is whether a read at revision R succeeds: it fails iff R < compacted revision
 * (for R ≤ current). The compacted revision is therefore the smallest readable revision, found
 * by a binary search of cheap count-only reads, started from the last value learned (usually
 * right, so two reads suffice). Compaction is rare and these reads are only made on error paths
 * and on an explicit `compactedRevision()`, never on the hot path.
 *
 * (A watch from revision 1 would report the compacted revision in a structured field, but when
 * nothing is compacted etcd would replay the whole history to it; the search avoids that.)
 */
import { CompactedError, RevisionTooLargeError } from '../errors.js';

/** The reads the search needs. */
export interface RevisionProbe {
  /** The current revision (a linearizable read). */
  currentRevision(): Promise<bigint>;
  /** For `revision` ≤ current: true when a read at it succeeds, false when it is compacted. */
  readableAt(revision: bigint): Promise<boolean>;
}

/**
 * The revision etcd was last compacted at, or `0n` if revision 1 is still readable.
 * @param hint the compacted revision learned before (`0n` if none); only speeds the search.
 */
export async function findCompactedRevision(probe: RevisionProbe, hint: bigint): Promise<bigint> {
  const current = await probe.currentRevision();
  // etcd starts at revision 1; compacting at 1 discards nothing, so it is reported only if known.
  if (current <= 1n || (await probe.readableAt(1n))) return hint === 1n ? 1n : 0n;
  // Revision 1 is gone: the answer lies in [2, current]; `hi` is always readable.
  let lo = 2n;
  let hi = current;
  if (hint >= lo && hint <= hi) {
    if (await probe.readableAt(hint)) {
      if (hint === lo || !(await probe.readableAt(hint - 1n))) return hint;
      hi = hint - 1n;
    } else {
      lo = hint + 1n;
    }
  }
  while (lo < hi) {
    const mid = (lo + hi) / 2n;
    if (await probe.readableAt(mid)) hi = mid;
    else lo = mid + 1n;
  }
  return lo;
}

/**
 * What an OUT_OF_RANGE answer to a read at `revision` meant: {@link RevisionTooLargeError},
 * {@link CompactedError}, or `undefined` when the revision is readable now (it was in the future
 * when read and has been reached since; the caller reads again).
 */
export async function classifyOutOfRange(
  probe: RevisionProbe,
  revision: bigint,
  hint: bigint,
): Promise<RevisionTooLargeError | CompactedError | undefined> {
  const current = await probe.currentRevision();
  if (revision > current) return new RevisionTooLargeError(revision, current);
  const compacted = await findCompactedRevision(probe, hint);
  if (revision < compacted) return new CompactedError(revision, compacted);
  return undefined;
}
