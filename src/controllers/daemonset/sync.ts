/**
 * One reconcile of one DaemonSet's pods, as kube v1.33's daemon controller:
 *
 * - manage: a node that should run the daemon and has no pod gets one; failed and succeeded
 *   daemon pods are deleted (`FailedDaemonPod` event); without surge, extra pods on a node are
 *   deleted (all but the oldest); pods on nodes that may no longer run it, and unscheduled pods
 *   for vanished nodes, are deleted.
 * - RollingUpdate without maxSurge: old pods are deleted while fewer than maxUnavailable nodes
 *   are unavailable (unavailable old pods are always replaced); with maxSurge: a new pod is
 *   added beside an old one (at most maxSurge at once) and the old one goes when the new one is
 *   available. OnDelete only replaces what users delete.
 * - status: desired/current/updated/misscheduled counts, ready and available of each node's
 *   oldest daemon pod.
 */
import type { DaemonSet, DaemonSetStatus } from '../../api/types/apps-v1.js';
import type { Node, Pod } from '../../api/types/core-v1.js';
import { isPodAvailable, isPodReady } from '../shared/pods.js';
import { shouldRunOn, targetNode } from './placement.js';
import { byCreationAndPhase, isPodUpdated, updatedPodsOnNode } from './pods.js';

/** What the pod reconcile decided. */
export interface DaemonPlan {
  /** Nodes that get a new pod. */
  readonly createOn: string[];
  /** Pods to delete. */
  readonly delete: Pod[];
  /** Failed or succeeded daemon pods found (for the FailedDaemonPod events). */
  readonly failed: { pod: Pod; node: string }[];
}

/** Daemon pods by target node. */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    const n = targetNode(p.spec);
    if (n === undefined) continue;
    const list = out.get(n);
    if (list === undefined) out.set(n, [p]);
    else list.push(p);
  }
  return out;
}

/** `intOrPercent` of `total`, percentages rounded up (kube's GetScaledValueFromIntOrPercent(…, true)). */
function scaled(v: number | string | undefined, total: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (m === null) return Number.parseInt(v, 10) || 0;
  return Math.ceil((Number(m[1]) * total) / 100);
}

/** maxSurge and maxUnavailable as counts of the desired pods (never both 0). */
export function rollingBudget(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = ds.spec?.updateStrategy?.rollingUpdate;
  const maxSurge = scaled(ru?.maxSurge, desired, 0);
  let maxUnavailable = scaled(ru?.maxUnavailable, desired, 1);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** kube's `manage` (pod placement), plus the rolling update when the strategy asks for it. */
export function planDaemonPods(
  ds: DaemonSet,
  nodes: readonly Node[],
  pods: readonly Pod[],
  hash: string,
  nowMs: number,
): DaemonPlan {
  const byNode = podsByNode(pods);
  const createOn: string[] = [];
  const del: Pod[] = [];
  const failed: { pod: Pod; node: string }[] = [];
  const surge = rollingBudget(ds, 1).maxSurge > 0 && ds.spec?.updateStrategy?.type !== 'OnDelete';
  const known = new Set<string>();
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    known.add(name);
    const here = byNode.get(name) ?? [];
    const { shouldRun, shouldContinueRunning } = shouldRunOn(node, ds);
    if (shouldRun && here.length === 0) {
      createOn.push(name);
    } else if (shouldContinueRunning) {
      const running: Pod[] = [];
      for (const p of here) {
        if (p.metadata.deletionTimestamp !== undefined) continue;
        if (p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') {
          failed.push({ pod: p, node: name });
          del.push(p);
        } else running.push(p);
      }
      if (running.length > 1) {
        running.sort(byCreationAndPhase);
        if (!surge) del.push(...running.slice(1));
        else del.push(...surgeExcess(ds, running, hash, nowMs));
      }
    } else if (!shouldContinueRunning && here.length > 0) {
      for (const p of here) if (p.metadata.deletionTimestamp === undefined) del.push(p);
    }
  }
  // Unscheduled pods whose node is gone.
  for (const [n, list] of byNode)
    if (!known.has(n))
      for (const p of list)
        if ((p.spec?.nodeName ?? '') === '' && p.metadata.deletionTimestamp === undefined) del.push(p);
  const plan = { createOn, delete: del, failed };
  if (ds.spec?.updateStrategy?.type === 'OnDelete') return plan;
  return mergeRolling(plan, rollingUpdate(ds, nodes, byNode, hash, nowMs));
}

/** With surge, keep the old pod only while the new one is not ready and the old one is. */
function surgeExcess(ds: DaemonSet, running: readonly Pod[], hash: string, nowMs: number): Pod[] {
  const gen = ds.metadata.generation;
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const newest = running.find((p) => isPodUpdated(p, hash, gen));
  const oldest = running.find((p) => !isPodUpdated(p, hash, gen));
  const keep = new Set<Pod>();
  if (newest !== undefined) keep.add(newest);
  if (
    oldest !== undefined &&
    (newest === undefined || (!isPodAvailable(newest, minReady, nowMs) && isPodReady(oldest)))
  )
    keep.add(oldest);
  if (keep.size === 0 && running[0] !== undefined) keep.add(running[0]);
  return running.filter((p) => !keep.has(p));
}

function mergeRolling(plan: DaemonPlan, rolling: { createOn: string[]; delete: Pod[] }): DaemonPlan {
  const createOn = [...plan.createOn];
  for (const n of rolling.createOn) if (!createOn.includes(n)) createOn.push(n);
  const del = [...plan.delete];
  for (const p of rolling.delete) if (!del.includes(p)) del.push(p);
  return { createOn, delete: del, failed: plan.failed };
}

/** kube's `rollingUpdate`: which old pods go and where new ones surge. */
function rollingUpdate(
  ds: DaemonSet,
  nodes: readonly Node[],
  byNode: ReadonlyMap<string, Pod[]>,
  hash: string,
  nowMs: number,
): { createOn: string[]; delete: Pod[] } {
  const gen = ds.metadata.generation;
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const available = (p: Pod): boolean => isPodAvailable(p, minReady, nowMs);
  const nodeByName = new Map(nodes.map((n) => [n.metadata.name ?? '', n]));
  const desired = nodes.filter((n) => shouldRunOn(n, ds).shouldRun).length;
  const { maxSurge, maxUnavailable } = rollingBudget(ds, desired);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: Pod[] = [];
    const candidates: Pod[] = [];
    for (const pods of byNode.values()) {
      const { newPod, oldPod, ok } = updatedPodsOnNode(pods, hash, gen);
      if (!ok || (oldPod === undefined) === (newPod === undefined)) {
        unavailable++;
        continue;
      }
      if (newPod !== undefined) {
        if (!available(newPod)) unavailable++;
      } else if (oldPod !== undefined) {
        if (!available(oldPod)) {
          replace.push(oldPod);
          unavailable++;
        } else if (unavailable < maxUnavailable) candidates.push(oldPod);
      }
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { createOn: [], delete: [...replace, ...candidates.slice(0, room)] };
  }
  const del: Pod[] = [];
  const shouldNotRun: Pod[] = [];
  const candidates: string[] = [];
  const allowed: string[] = [];
  let surging = 0;
  let nAvailable = 0;
  for (const [nodeName, pods] of byNode) {
    const { newPod, oldPod, ok } = updatedPodsOnNode(pods, hash, gen);
    if (!ok) {
      surging++;
      continue;
    }
    if (oldPod !== undefined ? available(oldPod) : newPod !== undefined && available(newPod)) nAvailable++;
    if (oldPod === undefined) continue;
    const node = nodeByName.get(nodeName);
    const runs = node !== undefined && shouldRunOn(node, ds).shouldRun;
    if (newPod === undefined) {
      if (!available(oldPod)) {
        if (!runs) del.push(oldPod);
        else allowed.push(nodeName);
      } else if (!runs) shouldNotRun.push(oldPod);
      else if (surging < maxSurge) candidates.push(nodeName);
    } else if (!available(newPod)) {
      surging++;
    } else {
      del.push(oldPod);
    }
  }
  const deletable = Math.min(Math.max(0, nAvailable - desired), shouldNotRun.length);
  del.push(...shouldNotRun.slice(0, deletable));
  const room = Math.min(Math.max(0, maxSurge - surging), candidates.length);
  return { createOn: [...allowed, ...candidates.slice(0, room)], delete: del };
}

/** kube's `updateDaemonSetStatus` counts. */
export function daemonStatus(
  ds: DaemonSet,
  nodes: readonly Node[],
  pods: readonly Pod[],
  hash: string,
  nowMs: number,
): DaemonSetStatus {
  const byNode = podsByNode(pods);
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const s = {
    desiredNumberScheduled: 0,
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    numberReady: 0,
    updatedNumberScheduled: 0,
    numberAvailable: 0,
    numberUnavailable: 0,
  };
  for (const node of nodes) {
    const here = [...(byNode.get(node.metadata.name ?? '') ?? [])].sort(byCreationAndPhase);
    const { shouldRun } = shouldRunOn(node, ds);
    if (!shouldRun) {
      if (here.length > 0) s.numberMisscheduled++;
      continue;
    }
    s.desiredNumberScheduled++;
    const pod = here[0];
    if (pod === undefined) continue;
    s.currentNumberScheduled++;
    if (isPodReady(pod)) {
      s.numberReady++;
      if (isPodAvailable(pod, minReady, nowMs)) s.numberAvailable++;
    }
    if (isPodUpdated(pod, hash, ds.metadata.generation)) s.updatedNumberScheduled++;
  }
  s.numberUnavailable = s.desiredNumberScheduled - s.numberAvailable;
  return s;
}
