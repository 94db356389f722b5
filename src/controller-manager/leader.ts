/**
 * Leader election of the manager on a coordination.k8s.io Lease (`--leader-elect*`), through
 * the client library's `LeaderElector` (kube's `<hostname>_<uuid>` identity).
 */
import { LeaderElector, type Client } from '../client/index.js';
import type { LeaderElectionOptions } from './options.js';

/**
 * Runs for the lease until `signal` aborts: `onStartedLeading` with a signal that aborts when
 * leadership ends, `onStoppedLeading` after.
 */
export function runLeaderElection(
  client: Client,
  options: LeaderElectionOptions,
  identity: string,
  onStartedLeading: (signal: AbortSignal) => void,
  onStoppedLeading: () => void,
  signal: AbortSignal,
  log: (message: string, err: unknown) => void,
): Promise<void> {
  return new LeaderElector({
    client,
    namespace: options.namespace,
    name: options.name,
    identity,
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    onStartedLeading,
    onStoppedLeading,
    log,
  }).run(signal);
}
