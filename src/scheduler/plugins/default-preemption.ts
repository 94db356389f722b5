/**
 * DefaultPreemption (PostFilter): when a pod fits nowhere, find nodes where evicting pods of lower
 * priority would make it fit, keep as many of those pods as still allow it (PDB-protected ones
 * first), pick the node whose victims cost least (kube's order: fewest PDB violations, lowest
 * top priority, lowest priority sum, fewest victims, latest start), evict the victims gracefully
 * with the DisruptionTarget condition, and nominate the node for the pod.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { PodDisruptionBudget } from '../../api/types/policy-v1.js';
import type { Handle, Plugin, Snapshot } from '../framework/types.js';
import { Code, errorStatus, type MaybeStatus, type Status } from '../framework/status.js';
import { fitErrorMessage } from '../fit-error.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { compileLabelSelector } from '../selectors.js';
import { PLUGIN } from './names.js';
import { OverlaySnapshot } from './snapshot-overlay.js';

const NOT_HELPFUL: Status = {
  code: Code.UnschedulableAndUnresolvable,
  reasons: ['Preemption is not helpful for scheduling'],
};
const NO_VICTIMS: Status = {
  code: Code.UnschedulableAndUnresolvable,
  reasons: ['No preemption victims found for incoming pod'],
};

/** A node where preemption would make the pod fit. */
export interface Candidate {
  readonly node: string;
  readonly victims: readonly PodInfo[];
  readonly pdbViolations: number;
}

function startTime(p: Pod): number {
  const t = p.status?.startTime ?? p.metadata.creationTimestamp ?? undefined;
  return t === undefined || t === null ? 0 : Date.parse(t);
}

/** Higher priority first, then earlier start (kube's MoreImportantPod). */
function moreImportant(a: PodInfo, b: PodInfo): number {
  return b.priority - a.priority || startTime(a.pod) - startTime(b.pod);
}

function isTerminating(p: Pod): boolean {
  return p.metadata.deletionTimestamp !== undefined && p.metadata.deletionTimestamp !== null;
}

/** Splits victims into those whose eviction would violate a PDB and the rest. */
function splitByPdb(
  victims: readonly PodInfo[],
  pdbs: readonly PodDisruptionBudget[],
): [PodInfo[], PodInfo[]] {
  const allowed = pdbs.map((p) => p.status?.disruptionsAllowed ?? 0);
  const selectors = pdbs.map((p) => compileLabelSelector(p.spec?.selector));
  const violating: PodInfo[] = [];
  const ok: PodInfo[] = [];
  for (const v of victims) {
    let violates = false;
    pdbs.forEach((pdb, i) => {
      if (pdb.metadata.namespace !== v.pod.metadata.namespace) return;
      const sel = pdb.spec?.selector;
      if (
        sel === undefined ||
        Object.keys(sel).length === 0 ||
        !(selectors[i] as (l: unknown) => boolean)(v.pod.metadata.labels)
      )
        return;
      if (pdb.status?.disruptedPods?.[v.pod.metadata.name ?? ''] !== undefined) return;
      allowed[i] = (allowed[i] ?? 0) - 1;
      if ((allowed[i] ?? 0) < 0) violates = true;
    });
    (violates ? violating : ok).push(v);
  }
  return [violating, ok];
}

/** Victims on one node, or the status explaining why preemption there does not help. */
export function selectVictimsOnNode(
  handle: Handle,
  pod: PodInfo,
  node: NodeInfo,
  snap: Snapshot,
  pdbs: readonly PodDisruptionBudget[],
): Candidate | Status {
  const copy = node.clone();
  const potential = [...copy.pods.values()].filter((p) => p.priority < pod.priority).sort(moreImportant);
  if (potential.length === 0) return NO_VICTIMS;
  for (const v of potential) copy.removePod(v.key);
  const overlay = new OverlaySnapshot(snap, copy);
  const fits = (): MaybeStatus => handle.dryRun(pod, copy, overlay);
  const initial = fits();
  if (initial !== undefined) return initial;
  const [violating, ok] = splitByPdb(potential, pdbs);
  const victims: PodInfo[] = [];
  let pdbViolations = 0;
  const reprieve = (v: PodInfo, isViolating: boolean): void => {
    copy.addPod(v);
    if (fits() === undefined) return;
    copy.removePod(v.key);
    victims.push(v);
    if (isViolating) pdbViolations++;
  };
  for (const v of violating) reprieve(v, true);
  for (const v of ok) reprieve(v, false);
  if (victims.length === 0) {
    return errorStatus(new Error(`expected at least one victim pod on node "${node.name}"`), 'preemption');
  }
  return { node: node.name, victims: victims.sort(moreImportant), pdbViolations };
}

const PRIORITY_OFFSET = 2 ** 31;

/** kube's pickOneNodeForPreemption. */
export function pickCandidate(cands: readonly Candidate[]): Candidate | undefined {
  const keys = (c: Candidate): number[] => {
    const top = c.victims[0];
    const topPriority = top?.priority ?? -Infinity;
    const sum = c.victims.reduce((a, v) => a + v.priority + PRIORITY_OFFSET, 0);
    const earliestTop = Math.min(
      ...c.victims.filter((v) => v.priority === topPriority).map((v) => startTime(v.pod)),
    );
    return [c.pdbViolations, topPriority, sum, c.victims.length, -earliestTop];
  };
  const lexLess = (a: readonly number[], b: readonly number[]): boolean => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number);
    return false;
  };
  let best: Candidate | undefined;
  let bestKeys: number[] = [];
  for (const c of cands) {
    const k = keys(c);
    if (best === undefined || lexLess(k, bestKeys)) {
      best = c;
      bestKeys = k;
    }
  }
  return best;
}

/** The plugin; args: minCandidateNodesPercentage (10), minCandidateNodesAbsolute (100). */
export function defaultPreemption(args: Record<string, unknown>, handle: Handle): Plugin {
  const pct = (args['minCandidateNodesPercentage'] as number | undefined) ?? 10;
  const abs = (args['minCandidateNodesAbsolute'] as number | undefined) ?? 100;
  return {
    name: PLUGIN.DefaultPreemption,
    async postFilter(_state, pod, statuses) {
      if (pod.pod.spec?.preemptionPolicy === 'Never') {
        return {
          status: {
            code: Code.Unschedulable,
            reasons: ['preemption: not eligible due to preemptionPolicy=Never.'],
          },
        };
      }
      const snap = handle.snapshot();
      const nominated = pod.pod.status?.nominatedNodeName;
      if (nominated !== undefined && nominated !== '') {
        const st = statuses.get(nominated);
        const ni = snap.get(nominated);
        if (st?.code !== Code.UnschedulableAndUnresolvable && ni !== undefined) {
          for (const p of ni.pods.values()) {
            if (isTerminating(p.pod) && p.priority < pod.priority) {
              return {
                status: {
                  code: Code.Unschedulable,
                  reasons: ['preemption: not eligible due to a terminating pod on the nominated node.'],
                },
              };
            }
          }
        }
      }
      const nodeStatuses = new Map<string, Status>();
      const potential: NodeInfo[] = [];
      for (const n of snap.nodes) {
        const st = statuses.get(n.name);
        if (st === undefined || st.code === Code.UnschedulableAndUnresolvable)
          nodeStatuses.set(n.name, NOT_HELPFUL);
        else potential.push(n);
      }
      const want = Math.max(Math.trunc((snap.nodes.length * pct) / 100), abs);
      const pdbs = handle.lister.pdbs(pod.pod.metadata.namespace ?? '');
      const candidates: Candidate[] = [];
      const offset = potential.length === 0 ? 0 : Math.floor(Math.random() * potential.length);
      for (let i = 0; i < potential.length && candidates.length < want; i++) {
        const n = potential[(offset + i) % potential.length] as NodeInfo;
        const r = selectVictimsOnNode(handle, pod, n, snap, pdbs);
        if ('code' in r) nodeStatuses.set(n.name, r);
        else candidates.push(r);
      }
      const best = pickCandidate(candidates);
      if (best === undefined) {
        const msg = fitErrorMessage({ numAllNodes: snap.nodes.length, nodeStatuses, absent: NOT_HELPFUL });
        return { status: { code: Code.Unschedulable, reasons: [`preemption: ${msg}`] }, nominatedNode: '' };
      }
      try {
        for (const v of best.victims) {
          await handle.api.evictVictim(
            v.pod,
            pod.pod,
            `${handle.schedulerName}: preempting to accommodate a higher priority pod`,
          );
          handle.api.event(
            v.pod,
            'Normal',
            'Preempted',
            'Preempting',
            `Preempted by pod ${pod.pod.metadata.uid ?? ''} on node ${best.node}`,
          );
        }
        for (const other of handle.lister.nominatedPods(best.node)) {
          if (other.key !== pod.key && other.priority < pod.priority)
            await handle.api.setNominatedNode(other.pod, '');
        }
      } catch (err) {
        return { status: errorStatus(err, 'preemption') };
      }
      return { status: undefined, nominatedNode: best.node };
    },
  };
}
