/**
 * One sync of one pod, kubelet's SyncPod in miniature: from the desired pod and what the runtime
 * holds for it, compute what to do and do it.
 *
 * 1. No ready sandbox: stop what is left, create a new sandbox (attempt + 1).
 * 2. Init containers in order: a running one is waited for; a failed one is restarted (with
 *    back-off) unless the restart policy is Never, which fails the pod; one missing is started.
 *    App containers start only after every init container succeeded.
 * 3. App containers: missing ones start; exited ones restart by the restart policy (Always,
 *    OnFailure when the exit code is not 0, Never) after the CrashLoopBackOff wait.
 *
 * Why a container is not running (ErrImagePull, CrashLoopBackOff, CreateContainerConfigError...)
 * is kept on the {@link PodRecord} for the status. The sync answers when it wants to run again
 * (a back-off ending); a container exiting wakes it through the runtime watcher.
 */
import { rmdir } from 'node:fs/promises';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod } from '../../api/types/core-v1.js';
import type * as CRI from '../cri/types.js';
import { buildEnv, EnvError, expandVars, type EnvContext } from '../runtime/env.js';
import { ImageError, type ImageManager } from '../runtime/images.js';
import {
  podCgroup,
  type ContainerInstance,
  type PodRuntime,
  type PodRuntimeState,
} from '../runtime/runtime.js';
import type { ProbeManager } from '../probe/manager.js';
import { MountConfigError } from '../volumes/errors.js';
import type { VolumeManager } from '../volumes/manager.js';
import { makeMounts, type MountedVolume } from '../volumes/mounts.js';
import { mountPodVolumes } from '../volumes/pod-volumes.js';
import type { Backoff } from './backoff.js';
import { enforceActiveDeadline } from './deadline.js';
import { containerFieldPath, Reasons, type EventSink } from './events.js';
import { containerSpec, killContainer, killUnhealthy, runPostStart } from './lifecycle.js';

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
  /** The pod failed on the node (activeDeadlineSeconds): its containers stay stopped. */
  failure?: { readonly reason: string; readonly message: string };
  /** The pod's set-up volumes (src/agent/volumes), for its containers' mounts. */
  volumes?: ReadonlyMap<string, MountedVolume>;
  /** Failed volume set-ups in a row, and since when (see volumes/pod-volumes.ts). */
  volumeFailures?: number;
  volumesFailingSince?: number;
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
}

/** The outcome of a sync: run again after this many ms (undefined = on the next event). */
export interface SyncResult {
  readonly requeueAfterMs?: number;
}

const CGROUP_FS = '/sys/fs/cgroup';

function podRef(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/** The newest instance of a container name (in a sandbox when given). */
export function latestOf(
  state: PodRuntimeState | undefined,
  name: string,
  sandboxId?: string,
): ContainerInstance | undefined {
  return state?.containers.find(
    (c) => c.name === name && (sandboxId === undefined || c.sandboxId === sandboxId),
  );
}

/** The grace period for killing a pod's containers. */
export function gracePeriodOf(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

/** True when the pod's containers are all done and none will restart. */
export function podIsDone(pod: Pod, state: PodRuntimeState | undefined): 'Succeeded' | 'Failed' | undefined {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') {
    for (const c of pod.spec?.initContainers ?? []) {
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

/** Removes a pod's cgroup directories in every hierarchy (containerd leaves them). */
async function removePodCgroup(path: string): Promise<void> {
  if (!existsSync(CGROUP_FS)) return;
  for (const h of readdirSync(CGROUP_FS)) {
    const dir = join(CGROUP_FS, h, path);
    if (existsSync(dir)) await rmdir(dir).catch(() => undefined);
  }
}

/** Kills every container and sandbox of a pod (graceful, in parallel), then removes them. */
export async function killPod(
  deps: SyncDeps,
  pod: Pod,
  state: PodRuntimeState | undefined,
  graceSeconds: number,
): Promise<void> {
  if (state) {
    await Promise.all(
      state.containers
        .filter((c) => c.state === 'CONTAINER_RUNNING')
        .map((c) =>
          killContainer(deps, pod, containerSpec(pod, c.name), c, state.sandboxes[0]?.ips[0] ?? '', {
            graceOverride: graceSeconds,
          }),
        ),
    );
    for (const c of state.containers) await deps.runtime.removeContainer(c.id);
    for (const sb of state.sandboxes) await deps.runtime.removeSandbox(sb.id);
  }
  await removePodCgroup(podCgroup(deps.runtime.options.cgroupRoot, pod));
  deps.backoff.forgetPrefix(`${pod.metadata.uid ?? ''}/`);
  await deps.volumes?.tearDown(pod.metadata.uid ?? '');
}

/** Starts one container; records why not on failure. Answers a requeue delay on failure. */
async function startContainer(
  deps: SyncDeps,
  record: PodRecord,
  sandbox: PodRuntimeState['sandboxes'][number],
  spec: Container,
  type: 'init' | 'regular',
  restartCount: number,
): Promise<number | undefined> {
  const pod = record.pod;
  const name = spec.name ?? '';
  const fieldPath = containerFieldPath(pod, name);
  let image: string;
  try {
    image = await deps.images.ensure(pod, spec);
  } catch (err) {
    if (!(err instanceof ImageError)) throw err;
    record.waiting.set(name, { reason: err.reason, message: err.message });
    if (err.reason === 'ErrImagePull' || err.reason === 'ImagePullBackOff') {
      // kubelet shows ErrImagePull for a while, then ImagePullBackOff until the back-off ends.
      const wait = deps.images.backoffRemaining(spec.image ?? '');
      if (err.reason === 'ErrImagePull') return 3000;
      return Math.max(wait, 1000);
    }
    return 10_000;
  }
  let env: { key: string; value: string }[];
  try {
    env = await buildEnv(pod, spec, deps.envContext(pod, sandbox.ips));
  } catch (err) {
    if (!(err instanceof EnvError)) throw err;
    record.waiting.set(name, { reason: 'CreateContainerConfigError', message: err.message });
    deps.events.event(pod, 'Warning', Reasons.Failed, `Error: ${err.message}`, fieldPath);
    return 10_000;
  }
  const vars = new Map(env.map((e) => [e.key, e.value]));
  let mounts: CRI.Mount[] = [];
  try {
    if (record.volumes) mounts = await makeMounts(spec, record.volumes, vars);
  } catch (err) {
    if (!(err instanceof MountConfigError)) throw err;
    record.waiting.set(name, { reason: 'CreateContainerConfigError', message: err.message });
    deps.events.event(pod, 'Warning', Reasons.Failed, `Error: ${err.message}`, fieldPath);
    return 10_000;
  }
  const command = (spec.command ?? []).map((s) => expandVars(s, vars));
  const args = (spec.args ?? []).map((s) => expandVars(s, vars));
  let id: string;
  try {
    id = await deps.runtime.createContainer(pod, sandbox, spec, {
      type,
      restartCount,
      env,
      command,
      args,
      image: spec.image ?? image,
      mounts,
    });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    record.waiting.set(name, { reason: 'CreateContainerError', message: msg });
    deps.events.event(pod, 'Warning', Reasons.Failed, `Error: ${msg}`, fieldPath);
    return 10_000;
  }
  deps.events.event(pod, 'Normal', Reasons.Created, `Created container: ${name}`, fieldPath);
  try {
    await deps.runtime.cri.startContainer(id);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    record.waiting.set(name, { reason: 'RunContainerError', message: msg });
    deps.events.event(pod, 'Warning', Reasons.Failed, `Error: ${msg}`, fieldPath);
    return 1000;
  }
  deps.events.event(pod, 'Normal', Reasons.Started, `Started container ${name}`, fieldPath);
  record.waiting.delete(name);
  const hookError = await runPostStart(deps, pod, spec, id, sandbox.ips[0] ?? '');
  if (hookError !== undefined) {
    record.waiting.set(name, { reason: 'PostStartHookError', message: hookError });
    return 1000;
  }
  return undefined;
}

/** Restart (with back-off) or start fresh; answers a requeue delay or undefined. */
async function startOrRestart(
  deps: SyncDeps,
  record: PodRecord,
  state: PodRuntimeState,
  spec: Container,
  type: 'init' | 'regular',
): Promise<number | undefined> {
  const pod = record.pod;
  const name = spec.name ?? '';
  const sandbox = state.sandboxes[0];
  if (!sandbox) return 1000;
  const last = latestOf(state, name);
  if (last && last.state !== 'CONTAINER_RUNNING') {
    const key = `${pod.metadata.uid ?? ''}/${name}`;
    const failedAt = last.finishedAt || last.createdAt;
    const wait = deps.backoff.remaining(key, failedAt);
    if (wait > 0) {
      const secs = Math.round(deps.backoff.current(key) / 1000);
      const message = `back-off ${secs >= 60 ? `${Math.floor(secs / 60)}m${secs % 60}s` : `${secs}s`} restarting failed container=${name} pod=${podRef(pod)}`;
      record.waiting.set(name, { reason: 'CrashLoopBackOff', message });
      deps.events.event(
        pod,
        'Warning',
        Reasons.BackOff,
        `Back-off restarting failed container ${name} in pod ${podRef(pod)}`,
        containerFieldPath(pod, name),
      );
      return wait;
    }
    deps.backoff.next(key, failedAt);
  }
  const restartCount = last ? last.restartCount + 1 : 0;
  return startContainer(deps, record, sandbox, spec, type, restartCount);
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
    await killPod(deps, pod, initial, gracePeriodOf(pod));
    record.terminated = true;
    return {};
  }
  let state = initial;
  const deadline = await enforceActiveDeadline(deps, record, state);
  if (record.failure) return {};
  const done = podIsDone(pod, state);
  if (done) {
    // A finished pod keeps its exited containers (for logs) but not its sandbox.
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
  const policy = pod.spec?.restartPolicy ?? 'Always';
  for (const init of pod.spec?.initContainers ?? []) {
    const name = init.name ?? '';
    const last = latestOf(state, name, sandboxId) ?? latestOf(state, name);
    if (last?.state === 'CONTAINER_RUNNING') return {};
    if (last && last.state === 'CONTAINER_EXITED' && last.exitCode === 0) continue;
    if (last && policy === 'Never') return {};
    const delay = await startOrRestart(deps, record, state, init, 'init');
    return delay === undefined ? {} : { requeueAfterMs: delay };
  }
  let requeue: number | undefined;
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
  requeue = minDelay(requeue, deadline);
  return requeue === undefined ? {} : { requeueAfterMs: requeue };
}
