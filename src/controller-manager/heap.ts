/**
 * V8 settings of the standalone `capstan controller-manager` process, chosen for memory over
 * allocation throughput. The manager holds every Pod of the cluster in its informers and
 * allocates in bursts (a scale to thousands of replicas), and V8's defaults then keep heap it
 * no longer uses:
 * - the young generation grows to its 16 MiB-per-semi-space maximum and stays there (about 30
 *   MiB of RSS that holds nothing live); with a growth factor of 1 it stays at its initial
 *   1 MiB semi-spaces, at the cost of more, shorter scavenges;
 * - `--optimize-for-size` makes the old generation grow by smaller steps and release sooner.
 * Holding 10,000 pods, these took the manager from 139 to 105 MiB RSS at about the same pods/s;
 * the price is CPU: over a scale to 10,000 and a foreground delete, V8's collector took 15 s
 * instead of 4 s (more objects reach the old generation, which is then marked more often; see
 * docs/bench/cluster.md). Both flags are read while the process runs, so setting them here,
 * before any informer starts, works (`--max-semi-space-size` would only work on the command
 * line). Process-wide, so only the command sets them, never `capstan server`, whose in-process
 * manager shares the server's heap.
 */
import { setFlagsFromString } from 'node:v8';

/** The V8 flags {@link tuneHeapForSize} sets. */
export const CONTROLLER_MANAGER_V8_FLAGS = ['--semi-space-growth-factor=1', '--optimize-for-size'] as const;

/** Applies {@link CONTROLLER_MANAGER_V8_FLAGS} to this process. */
export function tuneHeapForSize(): void {
  for (const flag of CONTROLLER_MANAGER_V8_FLAGS) setFlagsFromString(flag);
}
