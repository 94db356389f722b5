/**
 * A pod's status as kubelet writes it (generateAPIPodStatus and getPhase), from the desired pod,
 * what the runtime holds for it and why containers wait:
 * - `phase`: Pending while init containers run or a container never ran; Running while one runs
 *   (or all stopped and the policy restarts them); Succeeded or Failed when all stopped for good;
 * - `conditions`: PodResizePending and PodResizeInProgress while a resize waits or is under way
 *   (resize.ts), PodReadyToStartContainers, Initialized, Ready, ContainersReady (PodScheduled
 *   kept from the scheduler), each keeping its lastTransitionTime while its status holds;
 * - `initContainerStatuses`, `containerStatuses`: state, lastState, ready, restartCount, image,
 *   imageID, containerID, started, resources (the allocation, with the cgroup settings the
 *   runtime reports for a running container); a sidecar (an init container with
 *   `restartPolicy: Always`) is started and ready by its probes like an app container, and
 *   counts for the Ready conditions;
 * - `ephemeralContainerStatuses`: the same without `started`, never ready, no effect on the
 *   phase or the conditions;
 * - `hostIP(s)`, `podIP(s)`, `startTime`, `qosClass`;
 * - with probes ({@link ContainerHealth}): `started` by the startup probe, `ready` by the
 *   readiness probe; a pod failed on the node (activeDeadlineSeconds) is Failed with its reason
 *   and message, and its Ready conditions say `PodFailed`.
 */
import type {
  Container,
  ContainerStateTerminated,
  ContainerStatus,
  Pod,
  PodCondition,
  PodStatus,
} from '../../api/types/core-v1.js';
import { qosClass, statusResources } from '../runtime/resources.js';
import type { ContainerHealth } from '../probe/manager.js';
import type { ContainerInstance, PodRuntimeState } from '../runtime/runtime.js';
import { allocatedResources, resizeConditions } from './resize.js';
import { isSidecar } from './sidecar.js';
import { isStaticPod } from './static.js';
import type { PodRecord } from './sync.js';

/** kube's time format in status: RFC 3339 in whole seconds, UTC. */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function instancesOf(state: PodRuntimeState | undefined, name: string): ContainerInstance[] {
  return state?.containers.filter((c) => c.name === name) ?? [];
}

function terminated(c: ContainerInstance): ContainerStateTerminated {
  return {
    exitCode: c.exitCode,
    reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
    ...(c.message ? { message: c.message } : {}),
    startedAt: kubeTime(c.startedAt || c.createdAt),
    finishedAt: kubeTime(c.finishedAt || c.createdAt),
    containerID: `containerd://${c.id}`,
  };
}

function containerStatus(
  spec: Container,
  state: PodRuntimeState | undefined,
  record: PodRecord,
  type: 'init' | 'sidecar' | 'app' | 'ephemeral',
  initPending: boolean,
  health: ContainerHealth | undefined,
): ContainerStatus {
  const name = spec.name ?? '';
  const init = type === 'init';
  const probed = type === 'sidecar' || type === 'app';
  const [last, prev] = instancesOf(state, name);
  const waiting = record.waiting.get(name);
  const status: ContainerStatus = {
    name,
    state: {},
    lastState: {},
    ready: false,
    restartCount: 0,
    image: spec.image ?? '',
    imageID: '',
  };
  if (!last) {
    status.state = {
      waiting: waiting
        ? { reason: waiting.reason, message: waiting.message }
        : {
            reason:
              type === 'init' || type === 'sidecar' || initPending ? 'PodInitializing' : 'ContainerCreating',
          },
    };
    if (type !== 'ephemeral') status.started = false;
    return status;
  }
  status.image = last.image || (spec.image ?? '');
  status.imageID = last.imageRef;
  status.containerID = `containerd://${last.id}`;
  status.restartCount = last.restartCount;
  status.resources = statusResources(
    allocatedResources(record, spec),
    last.resources,
    last.state === 'CONTAINER_RUNNING',
  );
  if (last.state === 'CONTAINER_RUNNING') {
    status.state = { running: { startedAt: kubeTime(last.startedAt) } };
    const uid = record.pod.metadata.uid ?? '';
    if (type !== 'ephemeral') status.started = !probed || !health || health.started(uid, name, last.id);
    status.ready = probed && (health ? health.ready(uid, name, last.id) : !spec.readinessProbe);
    if (prev) status.lastState = { terminated: terminated(prev) };
    return status;
  }
  if (waiting && last.state !== 'CONTAINER_CREATED') {
    status.state = { waiting: { reason: waiting.reason, message: waiting.message } };
    status.lastState = { terminated: terminated(last) };
  } else if (last.state === 'CONTAINER_CREATED') {
    status.state = {
      waiting: waiting
        ? { reason: waiting.reason, message: waiting.message }
        : { reason: 'ContainerCreating' },
    };
    if (prev) status.lastState = { terminated: terminated(prev) };
  } else {
    status.state = { terminated: terminated(last) };
    if (prev) status.lastState = { terminated: terminated(prev) };
  }
  status.ready = init && last.state === 'CONTAINER_EXITED' && last.exitCode === 0;
  if (type !== 'ephemeral') status.started = false;
  return status;
}

function condition(
  old: readonly PodCondition[],
  type: string,
  ok: boolean,
  now: string,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const prev = old.find((c) => c.type === type);
  return {
    type,
    status,
    lastProbeTime: null as unknown as string,
    lastTransitionTime:
      prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : now,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

function isWaitingWithHistory(s: ContainerStatus): boolean {
  return !!s.state?.waiting && !!s.lastState?.terminated;
}

/** A container of `spec.containers` is running or terminated (kube's HasAnyRegularContainerStarted). */
function anyAppStarted(apps: readonly ContainerStatus[]): boolean {
  return apps.some((s) => !!s.state?.running || !!s.state?.terminated);
}

/**
 * The phase, by kubelet's getPhase rules (v1.33): a regular init container not done, or a
 * sidecar not yet started, keeps the pod Pending until an app container has run; a running
 * sidecar counts as a running container, a stopped one is not counted (the pod can succeed once
 * its sidecars were stopped).
 */
export function podPhase(pod: Pod, init: ContainerStatus[], apps: ContainerStatus[]): string {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const byName = new Map(init.map((s) => [s.name, s]));
  let pendingInit = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const s = byName.get(c.name ?? '');
    if (isSidecar(c)) {
      if (!s) unknown++;
      else if (s.state?.running) {
        running++;
        if (!s.started) pendingInit++;
      } else if (s.state?.waiting && !s.lastState?.terminated) {
        pendingInit++;
        waiting++;
      } else if (!s.state?.terminated && !s.state?.waiting) {
        pendingInit++;
        unknown++;
      }
      continue;
    }
    if (!s || s.state?.running) pendingInit++;
    else if (s.state?.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state?.waiting && s.lastState?.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else pendingInit++;
  }
  for (const s of apps) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (isWaitingWithHistory(s)) stopped++;
    else if (s.state?.waiting) waiting++;
    else unknown++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if ((pendingInit > 0 && !anyAppStarted(apps)) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/**
 * A container's status once its pod has terminated (kubelet's final status): one the runtime no
 * longer shows terminated is `ContainerStatusUnknown`, exit code 137.
 */
function stoppedForGood(st: ContainerStatus): ContainerStatus {
  if (st.state?.terminated) return { ...st, ready: false, started: false };
  return {
    ...st,
    ready: false,
    started: false,
    state: {
      terminated: {
        exitCode: 137,
        reason: 'ContainerStatusUnknown',
        message: 'The container could not be located when the pod was terminated',
      },
    },
  };
}

/** The phase of a terminated pod (not static): Succeeded when every app container exited 0. */
function terminalPhase(apps: readonly ContainerStatus[]): string {
  return apps.every((st) => st.state?.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
}

/** The pod conditions kubelet owns: written from the node's view, never kept from the API. */
const KUBELET_CONDITIONS: ReadonlySet<string> = new Set([
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodResizePending',
  'PodResizeInProgress',
]);

/** The pod's phase in the API when it is terminal (Succeeded or Failed); pods never leave it. */
export function apiTerminalPhase(pod: Pod): 'Succeeded' | 'Failed' | undefined {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
}

/** How {@link generatePodStatus} reads the pod's state. */
export interface StatusOptions {
  /** The probe results (absent: a container is started when running, ready without a readiness probe). */
  readonly health?: ContainerHealth | undefined;
  /** Epoch ms (default: now). */
  readonly now?: number;
  /**
   * The pod's final status, once its containers are gone for good: every container terminated,
   * the phase terminal (kubelet's status of a terminated pod).
   */
  readonly terminal?: boolean;
}

/** Generates the pod's status. `hostIPs`: the node's addresses. */
export function generatePodStatus(
  record: PodRecord,
  state: PodRuntimeState | undefined,
  hostIPs: readonly string[],
  { health, now = Date.now(), terminal = false }: StatusOptions = {},
): PodStatus {
  const pod = record.pod;
  const old = pod.status ?? {};
  const oldConditions = old.conditions ?? [];
  const nowText = kubeTime(now);
  const initSpecs = pod.spec?.initContainers ?? [];
  const initStatuses = initSpecs
    .map((c) => containerStatus(c, state, record, isSidecar(c) ? 'sidecar' : 'init', false, health))
    .map((st) => (terminal ? stoppedForGood(st) : st));
  const incomplete = initSpecs
    .filter((c, i) => {
      const s = initStatuses[i];
      return isSidecar(c) ? !s?.started : s?.state?.terminated?.exitCode !== 0;
    })
    .map((c) => c.name ?? '');
  const appStatuses = (pod.spec?.containers ?? [])
    .map((c) => containerStatus(c, state, record, 'app', incomplete.length > 0, health))
    .map((st) => (terminal ? stoppedForGood(st) : st));
  if (anyAppStarted(appStatuses)) incomplete.length = 0;
  const ephemeralSpecs = pod.spec?.ephemeralContainers ?? [];
  // A pod never leaves a terminal phase: one the API already shows stays, as kubelet keeps it.
  const phase =
    apiTerminalPhase(pod) ??
    (record.failure
      ? 'Failed'
      : terminal && !isStaticPod(pod)
        ? terminalPhase(appStatuses)
        : podPhase(pod, initStatuses, appStatuses));
  // The phase's reason and message stay with it (an eviction's, say), as kubelet keeps them.
  const why = record.failure ?? (phase === old.phase ? { reason: old.reason, message: old.message } : {});
  const sandbox = state?.sandboxes[0];
  const sandboxReady = !!sandbox?.ready && phase !== 'Succeeded' && phase !== 'Failed';
  const podIPs = pod.spec?.hostNetwork
    ? [...hostIPs]
    : sandbox?.ips.length
      ? [...sandbox.ips]
      : (old.podIPs ?? []).map((p) => p.ip ?? '');
  const failed = phase === 'Failed';
  const sidecarStatuses = initStatuses.filter((_, i) => initSpecs[i] && isSidecar(initSpecs[i]));
  const unready = [...sidecarStatuses, ...appStatuses]
    .filter((s) => !s.ready || failed)
    .map((s) => s.name ?? '');
  const completed = phase === 'Succeeded';
  const readyReason = completed ? 'PodCompleted' : failed ? 'PodFailed' : 'ContainersNotReady';
  const readyMessage =
    completed || failed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions: PodCondition[] = [
    ...(completed || failed ? [] : resizeConditions(record, state, nowText)),
    condition(oldConditions, 'PodReadyToStartContainers', sandboxReady, nowText),
    condition(
      oldConditions,
      'Initialized',
      incomplete.length === 0 || completed,
      nowText,
      incomplete.length === 0 || completed ? undefined : 'ContainersNotInitialized',
      incomplete.length === 0 || completed
        ? undefined
        : `containers with incomplete status: [${incomplete.join(' ')}]`,
    ),
    condition(
      oldConditions,
      'Ready',
      unready.length === 0,
      nowText,
      unready.length === 0 ? undefined : readyReason,
      unready.length === 0 ? undefined : readyMessage,
    ),
    condition(
      oldConditions,
      'ContainersReady',
      unready.length === 0,
      nowText,
      unready.length === 0 ? undefined : readyReason,
      unready.length === 0 ? undefined : readyMessage,
    ),
  ];
  // Conditions the agent does not own stay as the API has them (PodScheduled, an eviction's
  // DisruptionTarget, readiness gates'), as kubelet's status merge keeps them.
  const generated = new Set(conditions.map((c) => c.type));
  for (const c of oldConditions)
    if (!generated.has(c.type) && !KUBELET_CONDITIONS.has(c.type ?? '')) conditions.push(c);
  const status: PodStatus = {
    phase,
    ...(why.reason ? { reason: why.reason } : {}),
    ...(why.message ? { message: why.message } : {}),
    conditions,
    ...(hostIPs[0] ? { hostIP: hostIPs[0], hostIPs: hostIPs.map((ip) => ({ ip })) } : {}),
    ...(podIPs[0] ? { podIP: podIPs[0], podIPs: podIPs.map((ip) => ({ ip })) } : {}),
    ...(record.startTime ? { startTime: record.startTime } : {}),
    ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: appStatuses,
    qosClass: qosClass(pod),
    ...(ephemeralSpecs.length > 0
      ? {
          ephemeralContainerStatuses: ephemeralSpecs.map((c) =>
            containerStatus(c as Container, state, record, 'ephemeral', false, health),
          ),
        }
      : {}),
  };
  return status;
}
