/**
 * Starting one container of a pod as kubelet does: the image (by its pull policy), env, mounts,
 * command expansion, create, start, the postStart hook, with kubelet's events. Why a container
 * could not start (ErrImagePull, CreateContainerConfigError, RunContainerError...) is kept on the
 * pod's record for its status. {@link startOrRestart} applies the CrashLoopBackOff wait to a
 * container that ran before.
 */
import type { Container, EphemeralContainer, Pod } from '../../api/types/core-v1.js';
import type * as CRI from '../cri/types.js';
import { buildEnv, EnvError, expandVars } from '../runtime/env.js';
import { ImageError } from '../runtime/images.js';
import { MountConfigError } from '../volumes/errors.js';
import { makeMounts } from '../volumes/mounts.js';
import { containerFieldPath, Reasons } from './events.js';
import { runPostStart } from './lifecycle.js';
import { allocatedResources } from './resize.js';
import {
  DEFAULT_TERMINATION_MESSAGE_PATH,
  type ContainerInstance,
  type ContainerType,
  type PodRuntimeState,
} from '../runtime/runtime.js';
import type { PodRecord, SyncDeps } from './sync.js';

const ETC_HOSTS = '/etc/hosts';

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

/** kubelet's name of a pod in messages: `name_namespace(uid)`. */
export function podRef(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/** Starts one container; records why not on failure. Answers a requeue delay on failure. */
async function startContainer(
  deps: SyncDeps,
  record: PodRecord,
  sandbox: PodRuntimeState['sandboxes'][number],
  spec: Container,
  type: ContainerType,
  restartCount: number,
  targetId?: string,
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
    // kubelet's managed /etc/hosts, once the pod has an IP, unless the container mounts its own.
    const ownHosts = (spec.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS);
    if (deps.volumes && !ownHosts && (sandbox.ips.length > 0 || pod.spec?.hostNetwork)) {
      const hostPath = await deps.volumes.hostsFile(pod, sandbox.ips, deps.runtime.options.clusterDomain);
      mounts.push({ containerPath: ETC_HOSTS, hostPath });
    }
    // The file the container may leave its termination message in (kubelet's makeMounts).
    const messagePath = spec.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
    if (deps.volumes && messagePath !== '') {
      mounts.push({ containerPath: messagePath, hostPath: await deps.volumes.terminationLog(pod, name) });
    }
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
      resources: allocatedResources(record, spec),
      ...(targetId === undefined ? {} : { targetId }),
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

/**
 * Starts an ephemeral container that has no instance yet; one that ran, in this sandbox or an
 * earlier one, is never started again (kubelet looks its name up among all the pod's containers:
 * they do not restart, not even with a new sandbox). It joins the process namespace of its
 * `targetContainerName` once that one runs. Answers a requeue delay or undefined.
 */
export async function startEphemeral(
  deps: SyncDeps,
  record: PodRecord,
  state: PodRuntimeState,
  spec: EphemeralContainer,
): Promise<number | undefined> {
  const sandbox = state.sandboxes[0];
  if (!sandbox || latestOf(state, spec.name ?? '')) return undefined;
  let targetId: string | undefined;
  if (spec.targetContainerName) {
    const target = latestOf(state, spec.targetContainerName, sandbox.id);
    if (target?.state !== 'CONTAINER_RUNNING') return 1000;
    targetId = target.id;
  }
  return startContainer(deps, record, sandbox, spec, 'ephemeral', 0, targetId);
}

/** Restart (with back-off) or start fresh; answers a requeue delay or undefined. */
export async function startOrRestart(
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
