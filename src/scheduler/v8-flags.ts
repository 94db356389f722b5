/**
 * V8 settings of the standalone `capstan scheduler` process, for memory over allocation
 * throughput, as the controller manager's (`src/controller-manager/heap.ts`, which says why each
 * flag saves memory). The scheduler holds every Pod and Node in its informers; its scheduling
 * cycle allocates briefly per pod, and a bind rate limited by the API server leaves the extra
 * scavenges room. Process-wide, so only the command sets them, never `capstan server`, whose
 * in-process scheduler shares the server's heap. Measured in docs/bench/scheduler.md.
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flags {@link tuneSchedulerHeap} sets. */
export const SCHEDULER_V8_FLAGS = ['--semi-space-growth-factor=1', '--optimize-for-size'] as const;

/** Applies {@link SCHEDULER_V8_FLAGS} to this process (before any informer starts). */
export function tuneSchedulerHeap(): void {
  for (const flag of SCHEDULER_V8_FLAGS) setFlagsFromString(flag);
}
