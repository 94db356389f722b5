/**
 * V8 settings of the standalone `capstan scheduler` process, for memory over allocation
 * throughput:
 * - `--semi-space-growth-factor=1` and `--optimize-for-size`, as the controller manager's
 *   (`src/controller-manager/heap.ts` says why each saves memory);
 * - `--heap-growing-percent=25`: the old generation grows to 1.25 times its live size before the
 *   next full collection (the components' default here is 100, Go's `GOGC`; see src/cli/main.ts).
 *   The scheduler's live heap is mostly its informers' pods and nodes, which change slowly, so
 *   the extra full collections are few.
 * On `bench scheduler --preset=full` (5,000 pods, 1,000 nodes, live), peak RSS went from 136-148
 * MiB (the default flags) to 99.6-106 (the first two) and 89.5-94.2 (all three), at the same
 * scheduler CPU within the run-to-run spread (docs/bench/scheduler.md). The cycle allocates
 * briefly per pod, and a bind rate bounded by the API server leaves the extra scavenges room.
 * Process-wide, so only the command sets them, never `capstan server`, whose in-process
 * scheduler shares the server's heap.
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flags {@link tuneSchedulerHeap} sets. */
export const SCHEDULER_V8_FLAGS = [
  '--semi-space-growth-factor=1',
  '--optimize-for-size',
  '--heap-growing-percent=25',
] as const;

/** Applies {@link SCHEDULER_V8_FLAGS} to this process (before any informer starts). */
export function tuneSchedulerHeap(): void {
  for (const flag of SCHEDULER_V8_FLAGS) setFlagsFromString(flag);
}
