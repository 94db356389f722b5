/**
 * The pod status a kubelet would report, computed from the pod and what the simulated runtime
 * "did": pure functions, no I/O. The pod worker (`pods.ts`) decides when each applies.
 *
 * Shapes follow kubelet v1.33 (`pkg/kubelet/kubelet_pods.go` generateAPIPodStatus and
 * `pkg/kubelet/status/generate.go`): kubelet-owned conditions in the order
 * PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled, after the
 * conditions others own; terminal pods get `PodCompleted`/`PodFailed` reasons; the phase of
 * stopped containers is Succeeded when all exited 0, else Failed.
 */
import { createHash } from 'node:crypto';
import type {
  Container,
  ContainerStatus,
  EphemeralContainer,
  Pod,
  PodCondition,
  PodStatus,
} from '../../api/types/core-v1.js';
// What a simulated container "runs" with is its spec's resources, reported as a real node
// reports a stopped container's: the allocation as it stands.
import { statusResources } from '../runtime/resources.js';

/** Conditions the kubelet owns (kube's PodConditionByKubelet). */
const KUBELET_CONDITIONS = new Set([
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
  'PodResizePending',
  'PodResizeInProgress',
]);

/** RFC 3339 with seconds, as metav1.Time. */
export function rfc3339(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The image reference as the runtime reports it (`nginx` → `docker.io/library/nginx:latest`). */
export function normalizeImage(image: string): string {
  let name = image;
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  if (slash === -1) name = `docker.io/library/${name}`;
  else if (!first.includes('.') && !first.includes(':') && first !== 'localhost') name = `docker.io/${name}`;
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  if (!lastPart.includes(':') && !name.includes('@')) name = `${name}:latest`;
  return name;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The runtime's image ID for an image (`repo@sha256:...`, stable per reference). */
export function imageId(image: string): string {
  const normalized = normalizeImage(image);
  const at = normalized.indexOf('@');
  if (at !== -1) return normalized;
  const colon = normalized.lastIndexOf(':');
  return `${normalized.slice(0, colon)}@sha256:${digest(normalized)}`;
}

/** A container ID of the simulated runtime, stable per pod, container and restart. */
export function containerId(podUid: string, name: string, restartCount: number): string {
  return `sim://${digest(`${podUid}/${name}/${restartCount}`)}`;
}

/** kube's QoS class of a pod (v1qos.GetPodQOS, without pod-level resources). */
export function qosClass(pod: Pod): string {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const req = requests[r];
      const lim = limits[r];
      if ((req !== undefined && !isZero(req)) || (lim !== undefined && !isZero(lim))) any = true;
      if (lim === undefined || isZero(lim)) guaranteed = false;
      else if (req !== undefined && req !== lim) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function isZero(quantity: string): boolean {
  return /^[+]?0*(\.0*)?[a-zA-Z]*$/.test(quantity.trim());
}

/** A sidecar: an init container with `restartPolicy: Always`. */
export function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

function condition(
  type: string,
  status: 'True' | 'False',
  old: readonly PodCondition[],
  now: string,
  reason?: string,
  message?: string,
): PodCondition {
  const prev = old.find((c) => c.type === type);
  const c: PodCondition = {
    type,
    status,
    lastTransitionTime:
      prev?.status === status && prev.lastTransitionTime !== undefined ? prev.lastTransitionTime : now,
  };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

function readinessGateProblems(pod: Pod, conditions: readonly PodCondition[]): string[] {
  const out: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (c === undefined) {
      out.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    } else if (c.status !== 'True') {
      out.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
    }
  }
  return out;
}

/** The conditions of a pod in `phase` with containers ready or not, kubelet's way. */
function conditions(pod: Pod, phase: string, nowMs: number): PodCondition[] {
  const old = pod.status?.conditions ?? [];
  const now = rfc3339(nowMs);
  const out = old.filter((c) => !KUBELET_CONDITIONS.has(c.type ?? ''));
  const running = phase === 'Running';
  out.push(condition('PodReadyToStartContainers', running ? 'True' : 'False', old, now));
  out.push(
    phase === 'Succeeded'
      ? condition('Initialized', 'True', old, now, 'PodCompleted')
      : condition('Initialized', 'True', old, now),
  );
  if (running) {
    const gates = readinessGateProblems(pod, old);
    out.push(
      gates.length === 0
        ? condition('Ready', 'True', old, now)
        : condition('Ready', 'False', old, now, 'ReadinessGatesNotReady', gates.join(', ')),
    );
    out.push(condition('ContainersReady', 'True', old, now));
  } else {
    const reason = phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed';
    out.push(condition('Ready', 'False', old, now, reason));
    out.push(condition('ContainersReady', 'False', old, now, reason));
  }
  out.push(condition('PodScheduled', 'True', old, now));
  return out;
}

function runningStatus(
  pod: Pod,
  c: Container,
  startedAt: string,
  restartCount: number,
  last?: ContainerStatus,
): ContainerStatus {
  const image = c.image ?? '';
  const s: ContainerStatus = {
    name: c.name ?? '',
    state: { running: { startedAt } },
    lastState: last?.state?.terminated !== undefined ? { terminated: last.state.terminated } : {},
    ready: true,
    restartCount,
    image: normalizeImage(image),
    imageID: imageId(image),
    containerID: containerId(pod.metadata.uid ?? '', c.name ?? '', restartCount),
    started: true,
    resources: statusResources(c.resources, undefined, false),
  };
  return s;
}

/**
 * The status after an in-place resize (a container's resources changed through `pods/resize`):
 * the simulated runtime applies it at once, so each running app container and sidecar reports
 * its spec's resources. Undefined when every one reports them already.
 */
export function resizedStatus(pod: Pod): PodStatus | undefined {
  const status = pod.status ?? {};
  const specs = new Map(
    [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])].map((c) => [
      c.name ?? '',
      c,
    ]),
  );
  let changed = false;
  const update = (list: ContainerStatus[] | undefined): ContainerStatus[] | undefined =>
    list?.map((s) => {
      const spec = specs.get(s.name ?? '');
      if (spec === undefined || s.state?.running === undefined) return s;
      const wanted = statusResources(spec.resources, undefined, false);
      if (JSON.stringify(wanted) === JSON.stringify(s.resources ?? {})) return s;
      changed = true;
      return { ...s, resources: wanted };
    });
  const containerStatuses = update(status.containerStatuses);
  const initContainerStatuses = update(status.initContainerStatuses);
  if (!changed) return undefined;
  return {
    ...status,
    ...(containerStatuses ? { containerStatuses } : {}),
    ...(initContainerStatuses ? { initContainerStatuses } : {}),
  };
}

function terminatedStatus(s: ContainerStatus, exitCode: number, finishedAt: string): ContainerStatus {
  const startedAt = s.state?.running?.startedAt ?? s.state?.terminated?.startedAt ?? finishedAt;
  return {
    ...s,
    state: {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        startedAt,
        finishedAt,
        containerID: s.containerID ?? '',
      },
    },
    ready: false,
    started: false,
  };
}

function completedInit(pod: Pod, c: Container, at: string): ContainerStatus {
  const image = c.image ?? '';
  const id = containerId(pod.metadata.uid ?? '', c.name ?? '', 0);
  return {
    name: c.name ?? '',
    state: {
      terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at, containerID: id },
    },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: normalizeImage(image),
    imageID: imageId(image),
    containerID: id,
    started: false,
    resources: statusResources(c.resources, undefined, false),
  };
}

/** A debugging container running (kubelet reports no `started` for them, and never ready). */
function ephemeralRunning(pod: Pod, c: EphemeralContainer, startedAt: string): ContainerStatus {
  const { ready: _r, started: _s, ...running } = runningStatus(pod, c, startedAt, 0);
  return { ...running, ready: false, resources: {} };
}

/** A debugging container stopped with its pod (as sidecars, with 0). */
function ephemeralStopped(s: ContainerStatus, finishedAt: string): ContainerStatus {
  const { started: _s, ...stopped } = terminatedStatus(s, 0, finishedAt);
  return stopped;
}

/**
 * The status with every ephemeral container that has none yet running (kubectl debug added it
 * to a running pod), or undefined when each has one.
 */
export function ephemeralStartedStatus(pod: Pod, nowMs: number): PodStatus | undefined {
  const status = pod.status ?? {};
  const known = new Set((status.ephemeralContainerStatuses ?? []).map((s) => s.name));
  const added = (pod.spec?.ephemeralContainers ?? []).filter((c) => !known.has(c.name ?? ''));
  if (added.length === 0) return undefined;
  const now = rfc3339(nowMs);
  return {
    ...status,
    ephemeralContainerStatuses: [
      ...(status.ephemeralContainerStatuses ?? []),
      ...added.map((c) => ephemeralRunning(pod, c, now)),
    ],
  };
}

/** Addresses a started pod reports. */
export interface PodAddresses {
  readonly hostIP: string;
  readonly podIPs: readonly string[];
}

/** The status of a pod whose containers just started (Pending → Running). */
export function startedStatus(pod: Pod, addresses: PodAddresses, nowMs: number): PodStatus {
  const now = rfc3339(nowMs);
  const spec = pod.spec ?? {};
  const inits = spec.initContainers ?? [];
  return {
    phase: 'Running',
    conditions: conditions(pod, 'Running', nowMs),
    hostIP: addresses.hostIP,
    hostIPs: [{ ip: addresses.hostIP }],
    podIP: addresses.podIPs[0] ?? '',
    podIPs: addresses.podIPs.map((ip) => ({ ip })),
    startTime: pod.status?.startTime ?? now,
    ...(inits.length > 0
      ? {
          initContainerStatuses: inits.map((c) =>
            isSidecar(c) ? runningStatus(pod, c, now, 0) : completedInit(pod, c, now),
          ),
        }
      : {}),
    containerStatuses: (spec.containers ?? []).map((c) => runningStatus(pod, c, now, 0)),
    qosClass: qosClass(pod),
    ...(spec.ephemeralContainers !== undefined && spec.ephemeralContainers.length > 0
      ? { ephemeralContainerStatuses: spec.ephemeralContainers.map((c) => ephemeralRunning(pod, c, now)) }
      : {}),
  };
}

/** The regular containers' start time (the latest), in ms; undefined when none runs. */
export function containersStartedAt(pod: Pod): number | undefined {
  let latest: number | undefined;
  for (const s of pod.status?.containerStatuses ?? []) {
    const at = s.state?.running?.startedAt;
    if (at === undefined) return undefined;
    const ms = Date.parse(at);
    if (latest === undefined || ms > latest) latest = ms;
  }
  return latest;
}

/** Whether kube restarts a container that exited with `exitCode` under the pod's policy. */
export function restarts(pod: Pod, exitCode: number): boolean {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

/** The status after every regular container restarted (exited with `exitCode`, running again). */
export function restartedStatus(pod: Pod, exitCode: number, nowMs: number): PodStatus {
  const now = rfc3339(nowMs);
  const status = pod.status ?? {};
  const byName = new Map((status.containerStatuses ?? []).map((s) => [s.name, s]));
  return {
    ...status,
    conditions: conditions(pod, 'Running', nowMs),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => {
      const old = byName.get(c.name);
      const count = (old?.restartCount ?? 0) + 1;
      const last = old === undefined ? undefined : terminatedStatus(old, exitCode, now);
      return runningStatus(pod, c, now, count, last);
    }),
  };
}

/**
 * The terminal status after every container stopped with `exitCode` (sidecars stop with 0):
 * Succeeded when all exited 0, else Failed.
 */
export function stoppedStatus(pod: Pod, exitCode: number, nowMs: number): PodStatus {
  const now = rfc3339(nowMs);
  const status = pod.status ?? {};
  const phase = exitCode === 0 ? 'Succeeded' : 'Failed';
  return {
    ...status,
    phase,
    conditions: conditions(pod, phase, nowMs),
    ...(status.initContainerStatuses !== undefined
      ? {
          initContainerStatuses: status.initContainerStatuses.map((s) =>
            s.state?.running !== undefined ? terminatedStatus(s, 0, now) : s,
          ),
        }
      : {}),
    containerStatuses: (status.containerStatuses ?? []).map((s) =>
      s.state?.terminated !== undefined ? s : terminatedStatus(s, exitCode, now),
    ),
    ...(status.ephemeralContainerStatuses !== undefined
      ? {
          ephemeralContainerStatuses: status.ephemeralContainerStatuses.map((s) =>
            s.state?.running !== undefined ? ephemeralStopped(s, now) : s,
          ),
        }
      : {}),
  };
}

/** Whether a pod has reached a terminal phase. */
export function isTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}
