/**
 * The finalizers a delete request leaves for the garbage collector, as kube's generic registry
 * (`deletionFinalizersForGarbageCollection`): `propagationPolicy: Orphan` (or
 * `orphanDependents: true`) adds `orphan`, `Foreground` adds `foregroundDeletion`, `Background`
 * adds neither; with no policy, a finalizer already on the object decides, else the kind's
 * default (core/v1 ReplicationControllers and batch/v1 Jobs orphan, for compatibility; everything
 * else deletes in the background). The object then waits, with `deletionTimestamp` set, until
 * the garbage collector has orphaned or deleted its dependents and removed the finalizer.
 */
import type { ResourceType } from '../registry/types.js';

const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';

/** Kinds whose delete orphans dependents unless told otherwise (kube's `OrphanDependents` default). */
function defaultsToOrphan(type: ResourceType): boolean {
  return (
    (type.group === '' && type.plural === 'replicationcontrollers') ||
    (type.group === 'batch' && type.version === 'v1' && type.plural === 'jobs')
  );
}

/**
 * The object's finalizers after a delete with `policy` (already validated: Orphan, Background,
 * Foreground or undefined), or undefined when they stay as they are.
 */
export function finalizersAfterDelete(
  type: ResourceType,
  finalizers: readonly string[],
  policy: string | undefined,
): string[] | undefined {
  let orphan: boolean;
  let foreground: boolean;
  if (policy === 'Orphan') {
    orphan = true;
    foreground = false;
  } else if (policy === 'Background') {
    orphan = false;
    foreground = false;
  } else if (policy === 'Foreground') {
    orphan = false;
    foreground = true;
  } else if (finalizers.includes(ORPHAN)) {
    orphan = true;
    foreground = false;
  } else if (finalizers.includes(FOREGROUND)) {
    orphan = false;
    foreground = true;
  } else {
    orphan = defaultsToOrphan(type);
    foreground = false;
  }
  const next = finalizers.filter((f) => f !== ORPHAN && f !== FOREGROUND);
  if (orphan) next.push(ORPHAN);
  if (foreground) next.push(FOREGROUND);
  const same = next.length === finalizers.length && next.every((f) => finalizers.includes(f));
  return same ? undefined : next;
}
