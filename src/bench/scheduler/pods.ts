/**
 * The pods of `capstan bench scheduler`, by case: plain pods; pods with a required pod
 * anti-affinity on their group's label over `kubernetes.io/hostname`; pods spread over the zones
 * by a `topologySpreadConstraints` entry (maxSkew 1, DoNotSchedule). Every pod is pause-like
 * with small requests, so that neither CPU, memory nor the pod count of a node decides.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** The cases, in run order. */
export const SCHEDULER_CASES = ['plain', 'anti-affinity', 'spread'] as const;
export type SchedulerCase = (typeof SCHEDULER_CASES)[number];

/** The label every measured pod carries (the spread constraint selects on it). */
export const APP_LABEL = 'bench.capstan.dev/app';
/** The label of a pod's anti-affinity group. */
export const GROUP_LABEL = 'bench.capstan.dev/group';
/** The zone label of nodes, and the spread constraint's topology key. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * Anti-affinity groups for `pods` pods on `nodes` nodes: each group at most half the nodes, so
 * that every pod fits (one pod of a group per node) with room to choose until the last one.
 */
export function antiAffinityGroups(pods: number, nodes: number): number {
  return Math.max(1, Math.ceil(pods / Math.max(1, Math.floor(nodes / 2))));
}

/** A case's name in the rows: `plain, 5,000 pods on 1,000 nodes`. */
export function caseTitle(c: SchedulerCase, pods: number, nodes: number, zones: number): string {
  const size = `${pods.toLocaleString('en-US')} pods on ${nodes.toLocaleString('en-US')} nodes`;
  if (c === 'anti-affinity')
    return `pod anti-affinity (hostname, ${antiAffinityGroups(pods, nodes)} groups), ${size}`;
  if (c === 'spread') return `topology spread (zone, maxSkew 1, ${zones} zones), ${size}`;
  return `plain, ${size}`;
}

/** A pause container asking for little. */
function pauseSpec(): Pod['spec'] {
  return {
    containers: [
      {
        name: 'pause',
        image: 'registry.k8s.io/pause:3.10',
        resources: { requests: { cpu: '10m', memory: '16Mi' } },
      },
    ],
    terminationGracePeriodSeconds: 0,
    automountServiceAccountToken: false,
  };
}

/** The `i`-th measured pod of a case, as JSON. */
export function podBody(c: SchedulerCase, i: number, groups: number): string {
  const group = `g${i % groups}`;
  const spec = pauseSpec() as NonNullable<Pod['spec']>;
  if (c === 'anti-affinity')
    spec.affinity = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { [GROUP_LABEL]: group } }, topologyKey: HOSTNAME_LABEL },
        ],
      },
    };
  if (c === 'spread')
    spec.topologySpreadConstraints = [
      {
        maxSkew: 1,
        topologyKey: ZONE_LABEL,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { [APP_LABEL]: 'measured' } },
      },
    ];
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, labels: { [APP_LABEL]: 'measured', [GROUP_LABEL]: group } },
    spec,
  };
  return JSON.stringify(pod);
}

/** The pod that shows a scheduler ready (bound before anything is timed); no measured labels. */
export function warmUpBody(): string {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'warm-up', labels: { [APP_LABEL]: 'warm-up' } },
    spec: pauseSpec() as NonNullable<Pod['spec']>,
  };
  return JSON.stringify(pod);
}
