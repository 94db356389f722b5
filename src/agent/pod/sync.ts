/**
 * One sync of one pod, kubelet's SyncPod in miniature: from the desired pod and what the runtime
 * holds for it, compute what to do and do it.
 *
 * 1. No ready sandbox: stop what is left, create a new sandbox (attempt + 1). An in-place
 *    resize is then allocated and applied to the running containers ({@link admitResize},
 *    {@link actuateResize}).
 * 2. Init containers in order, sidecars kept running ({@link syncInitContainers}); app containers
 *    start only once the pod has initialized.
 * 3. App containers: missing ones start; exited ones restart by the restart policy (Always,
 *    OnFailure when the exit code is not 0, Never) after the CrashLoopBackOff wait.
 * 4. A pod whose app containers are all done for good stops its sidecars (last to first) and
 *    its sandbox; a pod being deleted stops everything, sidecars last
 *    ({@link killContainersInOrder}).
 * 5. A pod whose phase in the API is already Succeeded or Failed is finished, whatever the
 *    runtime holds: nothing of it starts again, and what still runs is stopped, as kubelet's
 *    SyncPod ends at a terminal API phase. So a finished pod whose containers are gone (removed,
 *    or a node rebooted) is not run a second time when the agent starts again.
 *
 * Why a container is not running (ErrImagePull, CrashLoopBackOff, CreateContainerConfigError...)
 * is kept on the {@link PodRecord} for the status. The sync answers when it wants to run again
 * (a back-off ending); a container exiting wakes it through the runtime watcher.
 */
import { rmdir } from 'node:fs/promises';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../api/types/core-v1.js';
import type { EnvContext } from '../runtime/env.js';
import type { ImageManager } from '../runtime/images.js';
import { podCgroup, type PodRuntime, type PodRuntimeState } from '../runtime/runtime.js';
import type { ProbeManager } from '../probe/manager.js';
import type { VolumeManager } from '../volumes/manager.js';
import type { MountedVolume } from '../volumes/mounts.js';
import { mountPodVolumes } from '../volumes/pod-volumes.js';
import type { Backoff } from './backoff.js';
import { enforceActiveDeadline } from './deadline.js';
import { Reasons, type EventSink } from './events.js';
import { syncInitContainers } from './init-containers.js';
import { killUnhealthy } from './lifecycle.js';
import { isSidecar } from './sidecar.js';
import { latestOf, startEphemeral, startOrRestart } from './start.js';
import { killContainersInOrder } from './termination.js';
import type { Rejection } from './admission.js';
import type { AllocationStore } from './allocation-checkpoint.js';
import { actuateResize, admitResize, allocationOf, type NodeResources, type ResizeState } from './resize.js';
import { apiTerminalPhase, kubeTime } from './status.js';

/** Why a container is waiting, for its status. */
export interface WaitingReason {
  readonly reason: string;
  readonly message: string;
}

/** The worker's record of one pod. */
export interface PodRecord {
  pod: Pod;
  /** When the agent first accepted the pod (the status's startTime). */
  startTime?: string;
  /** Container name → why it is not running now. */
  readonly waiting: Map<string, WaitingReason>;
  /** The pod is being deleted: kill everything. */
  terminating: boolean;
  /** Set once every container and sandbox is gone after termination. */
  terminated: boolean;
  /** The containers as the kill left them (exit codes), for the pod's final status. */
  finalState?: PodRuntimeState | undefined;
  /** The pod failed on the node (activeDeadlineSeconds): its containers stay stopped. */
  failure?: { readonly reason: string; readonly message: string };
  /** The pod's set-up volumes (src/agent/volumes), for its containers' mounts. */
  volumes?: ReadonlyMap<string, MountedVolume>;
  /** Failed volume set-ups in a row, and since when (see volumes/pod-volumes.ts). */
  volumeFailures?: number;
  volumesFailingSince?: number;
  /** The containers' allocated resources and the pod's resize conditions (resize.ts). */
  resize?: ResizeState;
  /** The first sync has admitted the pod (or rejected it: then `failure` says why). */
  admitted?: boolean;
}

/** What a sync needs. */
export interface SyncDeps {
  readonly runtime: PodRuntime;
  readonly images: ImageManager;
  readonly events: EventSink;
  readonly backoff: Backoff;
  /** The probes (started, ready, liveness kills); absent: no probes run. */
  readonly probes?: ProbeManager;
  /** Pod volumes; absent, volumes are ignored. */
  readonly volumes?: VolumeManager;
  /** The env context for a pod (lookups, node and pod IPs). */
  envContext(pod: Pod, podIPs: readonly string[]): EnvContext;
  /** The node's resources, for resize admission; absent, every resize is taken. */
  readonly node?: NodeResources;
  /** Node admission of a new pod (admission.ts): why it may not run here; absent, all run. */
  admit?(record: PodRecord): Rejection | undefined;
  /** Where allocations outlive the agent (allocation-checkpoint.ts); absent, in memory only. */
  readonly allocations?: AllocationStore;
}

/** The outcome of a sync: run again after this many ms (undefined = on the next event). */
export interface SyncResult {
  readonly requeueAfterMs?: number;
}

const CGROUP_FS = '/sys/fs/cgroup';

/** The grace period for killing a pod's containers. */
export function gracePeriodOf(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

/** True when the pod's containers are all done and none will restart. */
export function podIsDone(pod: Pod, state: PodRuntimeState | undefined): 'Succeeded' | 'Failed' | undefined {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') {
    for (const c of pod.spec?.initContainers ?? []) {
      if (isSidecar(c)) continue;
      const l = latestOf(state, c.name ?? '');
      if (l && l.state === 'CONTAINER_EXITED' && l.exitCode !== 0) return 'Failed';
    }
  }
  if (policy === 'Always') return undefined;
  const apps = pod.spec?.containers ?? [];
  let failed = false;
  for (const c of apps) {
    const l = latestOf(state, c.name ?? '');
    if (!l || l.state !== 'CONTAINER_EXITED') return undefined;
    if (l.exitCode !== 0) {
      if (policy === 'OnFailure') return undefined;
      failed = true;
    }
  }
  return apps.length === 0 ? undefined : failed ? 'Failed' : 'Succeeded';
}

/** True when the runtime holds a sandbox or container of the pod. */
function holdsAnything(state: PodRuntimeState | undefined): boolean {
  return (state?.sandboxes.length ?? 0) + (state?.containers.length ?? 0) > 0;
}

/**
 * kubelet's admission of a pod new to the node (HandlePodAdditions): checked with `deps.admit`
 * when `check` (a pod the runtime already runs was admitted by the agent that started it; one
 * the API shows finished holds nothing). A rejected pod fails at once with the Warning event
 * (kubelet's rejectPod); an admitted one's allocation is checkpointed unless it is already.
 */
function admit(deps: SyncDeps, record: PodRecord, check: boolean): void {
  record.admitted = true;
  const rejection = check ? deps.admit?.(record) : undefined;
  if (rejection !== undefined) {
    deps.events.event(record.pod, 'Warning', rejection.reason, rejection.message);
    record.failure = { reason: rejection.reason, message: `Pod was rejected: ${rejection.message}` };
    return;
  }
  // A pod adopted after a restart took its allocation from the checkpoint: nothing to write.
  const uid = record.pod.metadata.uid ?? '';
  if (deps.allocations?.get(uid) === undefined) deps.allocations?.set(uid, allocationOf(record));
}

/** Removes a pod's cgroup directories in every hierarchy (containerd leaves them). */
async function removePodCgroup(path: string): Promise<void> {
  if (!existsSync(CGROUP_FS)) return;
  for (const h of readdirSync(CGROUP_FS)) {
    const dir = join(CGROUP_FS, h, path);
    if (existsSync(dir)) await rmdir(dir).catch(() => undefined);
  }
}

/**
 * Kills every container and sandbox of a pod (graceful, in parallel), then removes them; with
 * `record`, what the kill left (exit codes) is kept there for the final status.
 */
export async function killPod(
  deps: SyncDeps,
  pod: Pod,
  state: PodRuntimeState | undefined,
  graceSeconds: number,
  record?: PodRecord,
): Promise<void> {
  if (state) {
    await killContainersInOrder(deps, pod, state.containers, state.sandboxes[0]?.ips[0] ?? '', graceSeconds);
    if (record !== undefined)
      record.finalState = (await deps.runtime.listPods(pod.metadata.uid ?? '')).get(pod.metadata.uid ?? '');
    for (const c of state.containers) await deps.runtime.removeContainer(c.id);
    for (const sb of state.sandboxes) await deps.runtime.removeSandbox(sb.id);
  }
  await removePodCgroup(podCgroup(deps.runtime.options.cgroupRoot, pod));
  deps.backoff.forgetPrefix(`${pod.metadata.uid ?? ''}/`);
  await deps.volumes?.tearDown(pod.metadata.uid ?? '');
}

function minDelay(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** Syncs one pod against the runtime. */
export async function syncPod(
  deps: SyncDeps,
  record: PodRecord,
  initial: PodRuntimeState | undefined,
): Promise<SyncResult> {
  const pod = record.pod;
  const uid = pod.metadata.uid ?? '';
  if (record.terminating) {
    await killPod(deps, pod, initial, gracePeriodOf(pod), record);
    record.terminated = true;
    return {};
  }
  let state = initial;
  const ended = apiTerminalPhase(pod);
  if (!record.admitted) admit(deps, record, ended === undefined && !holdsAnything(state));
  // A pod that ended in the API cannot fail again: no deadline for it.
  const deadline = ended ? undefined : await enforceActiveDeadline(deps, record, state);
  if (record.failure) return {};
  if (ended ?? podIsDone(pod, state)) {
    // A finished pod keeps its exited containers (for logs) but not its sandbox; its sidecars
    // stop, last to first.
    await killContainersInOrder(deps, pod, state?.containers ?? [], state?.sandboxes[0]?.ips[0] ?? '');
    for (const sb of state?.sandboxes ?? []) if (sb.ready) await deps.runtime.cri.stopPodSandbox(sb.id);
    return {};
  }
  if (deps.volumes) {
    const retry = await mountPodVolumes(deps.volumes, deps.events, record);
    if (retry !== undefined) return { requeueAfterMs: retry };
  }
  const current = state?.sandboxes[0];
  if (!current || !current.ready) {
    if (state && state.containers.length > 0) {
      deps.events.event(
        pod,
        'Normal',
        Reasons.SandboxChanged,
        'Pod sandbox changed, it will be killed and re-created.',
      );
    }
    for (const c of state?.containers ?? [])
      if (c.state === 'CONTAINER_RUNNING') await deps.runtime.stopContainer(c.id, gracePeriodOf(pod));
    for (const sb of state?.sandboxes ?? []) if (sb.ready) await deps.runtime.cri.stopPodSandbox(sb.id);
    try {
      await deps.runtime.runSandbox(pod, current ? current.attempt + 1 : 0);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      deps.events.event(
        pod,
        'Warning',
        Reasons.FailedCreatePodSandBox,
        `Failed to create pod sandbox: ${msg}`,
      );
      return { requeueAfterMs: 5000 };
    }
    state = (await deps.runtime.listPods(uid)).get(uid);
  }
  if (!state?.sandboxes[0]?.ready) return { requeueAfterMs: 1000 };
  const sandboxId = state.sandboxes[0]?.id ?? '';
  // A resize: the allocation first, then the running containers brought to it.
  const nowText = kubeTime(Date.now());
  const resizeRetry = admitResize(deps, record, nowText);
  if (await actuateResize(deps, record, state, nowText))
    state = (await deps.runtime.listPods(uid)).get(uid) ?? state;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const init = await syncInitContainers(deps, record, state, sandboxId);
  if (!init.initialized)
    return init.requeueAfterMs === undefined ? {} : { requeueAfterMs: init.requeueAfterMs };
  // Init containers ran: their state changed. Without any, the state read above still holds.
  if ((pod.spec?.initContainers ?? []).length > 0)
    state = (await deps.runtime.listPods(uid)).get(uid) ?? state;
  let requeue = minDelay(init.requeueAfterMs, resizeRetry);
  for (const c of pod.spec?.containers ?? []) {
    const name = c.name ?? '';
    const last = latestOf(state, name);
    if (last?.state === 'CONTAINER_RUNNING' && last.sandboxId === sandboxId) {
      // A container failing its liveness or startup probe is killed, then the policy applies.
      if (!(await killUnhealthy(deps, pod, c, last, state))) continue;
      state = (await deps.runtime.listPods(uid)).get(uid) ?? state;
    }
    if (last && last.sandboxId === sandboxId && last.state !== 'CONTAINER_RUNNING') {
      const restart = policy === 'Always' || (policy === 'OnFailure' && last.exitCode !== 0);
      if (!restart) continue;
    }
    requeue = minDelay(requeue, await startOrRestart(deps, record, state, c, 'regular'));
  }
  // Ephemeral containers start once the app containers have been taken care of; never again.
  for (const c of pod.spec?.ephemeralContainers ?? [])
    requeue = minDelay(requeue, await startEphemeral(deps, record, state, c));
  requeue = minDelay(requeue, deadline);
  return requeue === undefined ? {} : { requeueAfterMs: requeue };
}
