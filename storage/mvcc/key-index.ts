/**
 * The in-memory key index: every key's latest state, including writes that are accepted but
 * not yet durable. Compares (`ifModRevision`) are decided against it synchronously, so two
 * writers racing on one key cannot both pass their compare, and no compare waits for a disk.
 *
 * Entries are immutable; every write replaces the key's entry. A delete leaves a tombstone
 * entry (`createRev = 0n`) until its batch is durable, so a read at the durable revision can
 * tell "deleted by a pending write" (still visible) from "absent".
 */

/** A key's latest state. `createRev === 0n`: deleted by a not-yet-durable write. */
export interface IndexEntry {
  readonly createRev: bigint;
  readonly modRev: bigint;
  readonly lease: bigint;
}

/** Key → latest state, for every live key and every not-yet-durable delete. */
export type KeyIndex = Map<string, IndexEntry>;

/** The entry when it names a live key (not a pending tombstone). */
export function liveEntry(entry: IndexEntry | undefined): IndexEntry | undefined {
  return entry !== undefined && entry.createRev !== 0n ? entry : undefined;
}
