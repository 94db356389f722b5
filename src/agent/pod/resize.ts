/**
 * In-place pod resize on the node, as kubelet v1.33 does it (handlePodResourcesResize, then the
 * runtime's resize step):
 * - **Allocation.** The agent keeps the resources it has accepted for each container of a pod,
 *   starting from the spec it first saw. A later change of a container's resources in the spec
 *   (written through `pods/resize`) is a resize request. Containers are created with their
 *   allocation, not the spec.
 * - **Admission** ({@link admitResize}). The request is accepted when the pod's new requests fit
 *   the node's allocatable (else `PodResizePending`, reason `Infeasible`) beside what the node's
 *   other pods are allocated (else `Deferred`, tried again on later syncs).
 * - **Actuation** ({@link actuateResize}). A running app container or sidecar whose cgroup
 *   settings differ from its allocation is updated in place through CRI UpdateContainerResources,
 *   or restarted when its `resizePolicy` asks so for a changed resource.
 *   `PodResizeInProgress` holds while a running container's settings differ from its allocation,
 *   with reason `Error` when the runtime refused the update.
 *
 * The allocation is kept on disk (`deps.allocations`, allocation-checkpoint.ts), as kubelet
 * checkpoints it: a restarted agent takes up each pod's allocation where it was, so a resize
 * pending when it stopped stays pending.
 */
import type { Container, Pod, PodCondition, ResourceRequirements } from '../../api/types/core-v1.js';
import { canonicalQuantityText, milliValue } from '../../api/quantity.js';
import { podResources } from '../../api/quota/usage.js';
import { changedResources, linuxResources, qosClass } from '../runtime/resources.js';
import type { LinuxContainerResources } from '../cri/types.js';
import type { ContainerInstance, PodRuntimeState } from '../runtime/runtime.js';
import { killContainer } from './lifecycle.js';
import type { Allocation } from './allocation-checkpoint.js';
import { isSidecar } from './sidecar.js';
import type { PodRecord, SyncDeps } from './sync.js';

/** Cpu in millicores and memory in bytes. */
export interface CpuMemory {
  readonly cpu: number;
  readonly memory: number;
}

/** What the node offers pods, for resize admission. */
export interface NodeResources {
  /** The node's allocatable cpu (cores) and memory (bytes). */
  readonly allocatable: CpuMemory;
  /** The requests allocated to the node's pods other than `uid` (cpu in millicores). */
  allocatedToOthers(uid: string): CpuMemory;
}

/** A resize condition the agent holds for a pod (kubelet's status manager cache). */
interface ResizeCondition {
  readonly reason: string;
  readonly message: string;
  readonly since: string;
}

/** A pod's resize state on its record. */
export interface ResizeState {
  /** Container name → its allocated resources (app containers and init containers). */
  readonly allocated: Map<string, ResourceRequirements | undefined>;
  /** Why the spec's resources are not allocated yet. */
  pending?: ResizeCondition;
  /** The runtime refused the last in-place update. */
  failed?: ResizeCondition;
  /** Since when a running container's settings lag its allocation. */
  progressSince?: string;
}

/** How long a Deferred resize waits before the fit is checked again. */
const DEFERRED_RETRY_MS = 10_000;

/** The pod's containers that can be resized: app containers and sidecars. */
function resizable(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])];
}

/** True when two containers' resources are the same amounts (`1` and `1000m` alike). */
function sameResources(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean {
  const norm = (r: ResourceRequirements | undefined): string =>
    JSON.stringify([canonical(r?.requests), canonical(r?.limits), r?.claims ?? []]);
  return norm(a) === norm(b);
}

function canonical(list: Record<string, string> | undefined): [string, string][] {
  return Object.entries(list ?? {})
    .map(([k, v]): [string, string] => [k, canonicalQuantityText(v) ?? v])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The record's resize state, allocating the pod's spec when first seen (a record made from the
 * checkpoint already holds its allocation).
 */
function resizeStateOf(record: PodRecord): ResizeState {
  if (record.resize) return record.resize;
  const allocated = new Map<string, ResourceRequirements | undefined>();
  for (const c of [...(record.pod.spec?.initContainers ?? []), ...(record.pod.spec?.containers ?? [])])
    allocated.set(c.name ?? '', c.resources);
  record.resize = { allocated };
  return record.resize;
}

/**
 * The resources a container is created with: its allocation (the spec's for a container not
 * allocated, an ephemeral one); none is `{}`.
 */
export function allocatedResources(record: PodRecord, spec: Container): ResourceRequirements {
  const state = resizeStateOf(record);
  const name = spec.name ?? '';
  return (state.allocated.has(name) ? state.allocated.get(name) : spec.resources) ?? {};
}

/** Each container's allocated resources (the spec's for a pod first seen). */
export function allocationOf(record: PodRecord): Allocation {
  return resizeStateOf(record).allocated;
}

/**
 * The pod as the node holds it: its spec with each container's allocation, without the status
 * (whose resources only echo the allocation), for node admission and the allocation sums.
 */
export function allocatedPod(record: PodRecord): Pod {
  const spec = record.pod.spec ?? {};
  const withAllocation = (list: Container[] | undefined): Container[] =>
    (list ?? []).map((c) => ({ ...c, resources: allocatedResources(record, c) }));
  return {
    metadata: record.pod.metadata,
    spec: {
      ...spec,
      containers: withAllocation(spec.containers),
      initContainers: withAllocation(spec.initContainers),
    },
  };
}

/** The pod's requests with each container's allocation (cpu millicores, memory bytes). */
function allocatedRequests(record: PodRecord): CpuMemory {
  return requestsOf(allocatedPod(record));
}

/** The allocated requests of several pods, summed. */
export function sumAllocatedRequests(records: readonly PodRecord[]): CpuMemory {
  let cpu = 0;
  let memory = 0;
  for (const r of records) {
    const one = allocatedRequests(r);
    cpu += one.cpu;
    memory += one.memory;
  }
  return { cpu, memory };
}

/** A pod's effective cpu and memory requests (init containers' peak or the sum, plus overhead). */
function requestsOf(pod: Pod): CpuMemory {
  const requests = podResources(pod as unknown as Record<string, unknown>, 'requests');
  const cpu = requests.get('cpu');
  const memory = requests.get('memory');
  return {
    cpu: cpu === undefined ? 0 : Number(milliValue(cpu)),
    memory: memory === undefined ? 0 : Number(milliValue(memory) / 1000n),
  };
}

/** kubelet's `canResizePod`: undefined when the pod's new requests fit, else the condition. */
function misfit(pod: Pod, node: NodeResources): Omit<ResizeCondition, 'since'> | undefined {
  const cpuAvailable = Math.floor(node.allocatable.cpu * 1000);
  const memAvailable = Math.floor(node.allocatable.memory);
  const wanted = requestsOf(pod);
  if (wanted.cpu > cpuAvailable || wanted.memory > memAvailable) {
    const what =
      wanted.memory > memAvailable
        ? `memory, requested: ${wanted.memory}, capacity: ${memAvailable}`
        : `cpu, requested: ${wanted.cpu}, capacity: ${cpuAvailable}`;
    return { reason: 'Infeasible', message: `Node didn't have enough capacity: ${what}` };
  }
  const used = node.allocatedToOthers(pod.metadata.uid ?? '');
  for (const [name, requested, usedNow, capacity] of [
    ['cpu', wanted.cpu, used.cpu, cpuAvailable],
    ['memory', wanted.memory, used.memory, memAvailable],
  ] as const) {
    if (requested + usedNow > capacity) {
      return {
        reason: 'Deferred',
        message: `Node didn't have enough resource: ${name}, requested: ${requested}, used: ${usedNow}, capacity: ${capacity}`,
      };
    }
  }
  return undefined;
}

function heldSince(previous: ResizeCondition | undefined, reason: string, now: string): string {
  return previous !== undefined && previous.reason === reason ? previous.since : now;
}

/**
 * Takes the spec's resources into the allocation when they changed and fit the node; otherwise
 * records why not. Answers when to check again (a Deferred resize), or undefined.
 */
export function admitResize(deps: SyncDeps, record: PodRecord, now: string): number | undefined {
  const state = resizeStateOf(record);
  const pod = record.pod;
  const changed = resizable(pod).filter(
    (c) => !sameResources(c.resources, state.allocated.get(c.name ?? '')),
  );
  if (changed.length === 0) {
    delete state.pending;
    return undefined;
  }
  const refusal = deps.node === undefined ? undefined : misfit(pod, deps.node);
  if (refusal !== undefined) {
    state.pending = { ...refusal, since: heldSince(state.pending, refusal.reason, now) };
    return refusal.reason === 'Deferred' ? DEFERRED_RETRY_MS : undefined;
  }
  for (const c of changed) {
    state.allocated.set(c.name ?? '', c.resources);
    // A container waiting to restart after a crash tries again at once with its new size.
    deps.backoff.forget(`${pod.metadata.uid ?? ''}/${c.name ?? ''}`);
  }
  deps.allocations?.set(pod.metadata.uid ?? '', state.allocated);
  delete state.pending;
  delete state.failed;
  return undefined;
}

/** A running container whose cgroup settings lag its allocation. */
interface Lagging {
  readonly spec: Container;
  readonly instance: ContainerInstance;
  /** The settings its allocation asks for. */
  readonly wanted: LinuxContainerResources;
  /** Which of cpu and memory differ. */
  readonly changed: readonly ('cpu' | 'memory')[];
}

/** The resizable containers running in the current sandbox whose settings lag their allocation. */
function lagging(record: PodRecord, state: PodRuntimeState): Lagging[] {
  const sandboxId = state.sandboxes[0]?.id;
  const qos = qosClass(record.pod);
  const out: Lagging[] = [];
  for (const spec of resizable(record.pod)) {
    const instance = state.containers.find((c) => c.name === spec.name && c.sandboxId === sandboxId);
    if (instance?.state !== 'CONTAINER_RUNNING' || instance.resources === undefined) continue;
    const wanted = linuxResources({ ...spec, resources: allocatedResources(record, spec) }, qos);
    const changed = changedResources(wanted, instance.resources);
    if (changed.length > 0) out.push({ spec, instance, wanted, changed });
  }
  return out;
}

/**
 * Brings each running app container and sidecar to its allocation: in place, or by a restart
 * where its `resizePolicy` says `RestartContainer` for a resource that changed (the sync's
 * restart rules then start it again). Answers true when a container was stopped.
 */
export async function actuateResize(
  deps: SyncDeps,
  record: PodRecord,
  state: PodRuntimeState,
  now: string,
): Promise<boolean> {
  const resize = resizeStateOf(record);
  let stopped = false;
  for (const { spec, instance, wanted, changed } of lagging(record, state)) {
    const restart = changed.some(
      (r) => spec.resizePolicy?.find((p) => p.resourceName === r)?.restartPolicy === 'RestartContainer',
    );
    if (restart) {
      deps.backoff.forget(`${record.pod.metadata.uid ?? ''}/${spec.name ?? ''}`);
      await killContainer(deps, record.pod, spec, instance, state.sandboxes[0]?.ips[0] ?? '', {
        message: `Container ${spec.name ?? ''} resize requires restart`,
      });
      stopped = true;
      continue;
    }
    try {
      await deps.runtime.updateResources(instance.id, wanted);
      delete resize.failed;
    } catch (err) {
      const message = `failed to resize container ${spec.name ?? ''}: ${(err as Error).message}`;
      resize.failed = { reason: 'Error', message, since: heldSince(resize.failed, 'Error', now) };
    }
  }
  return stopped;
}

/**
 * The pod's resize conditions, in kubelet's order: PodResizePending, then PodResizeInProgress
 * while a running container's settings lag its allocation.
 */
export function resizeConditions(
  record: PodRecord,
  state: PodRuntimeState | undefined,
  now: string,
): PodCondition[] {
  const resize = record.resize;
  if (resize === undefined) return [];
  const out: PodCondition[] = [];
  // kubelet stamps lastProbeTime at each check; the agent keeps the time the condition last
  // changed, so that an unchanged condition does not rewrite the status on every sync.
  const condition = (
    type: string,
    c: { reason?: string; message?: string; since: string },
  ): PodCondition => ({
    type,
    status: 'True',
    lastProbeTime: c.since,
    lastTransitionTime: c.since,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  });
  if (resize.pending) out.push(condition('PodResizePending', resize.pending));
  if (resize.failed) out.push(condition('PodResizeInProgress', resize.failed));
  else if (state !== undefined && lagging(record, state).length > 0) {
    resize.progressSince ??= now;
    out.push(condition('PodResizeInProgress', { since: resize.progressSince }));
  }
  if (out.every((c) => c.type !== 'PodResizeInProgress')) delete resize.progressSince;
  return out;
}
