/**
 * What the scheduler needs of a pod, computed once when the pod enters the cache or the queue:
 * its requests, host ports, and compiled affinity terms. Plugins read these instead of
 * re-walking the spec for every node.
 */
import type { Pod, PodAffinityTerm, WeightedPodAffinityTerm } from '../api/types/core-v1.js';
import { compileLabelSelector, type LabelPredicate, type Labels } from './selectors.js';
import { podRequests, type Resource } from './resources.js';

/** A pod affinity term with its selectors compiled. */
export interface AffinityTerm {
  readonly topologyKey: string;
  readonly selector: LabelPredicate;
  /** Namespaces named (or the pod's own when neither this nor a namespace selector is given). */
  readonly namespaces: ReadonlySet<string>;
  /** undefined when the term has no namespaceSelector. */
  readonly namespaceSelector: LabelPredicate | undefined;
  readonly weight: number;
  /** Identifies the term's selection (namespaces, selectors, topology key) across pods. */
  readonly key: string;
}

/** A host port a pod asks for. */
export interface HostPort {
  readonly ip: string;
  readonly protocol: string;
  readonly port: number;
}

/** Lookup of a namespace's labels, for namespace selectors. */
export type NamespaceLabels = (namespace: string) => Labels;

/** True when `term` (of a pod) selects `pod`. */
export function termMatches(term: AffinityTerm, pod: Pod, nsLabels: NamespaceLabels): boolean {
  const ns = pod.metadata.namespace ?? '';
  if (!term.namespaces.has(ns)) {
    if (term.namespaceSelector === undefined || !term.namespaceSelector(nsLabels(ns))) return false;
  }
  return term.selector(pod.metadata.labels);
}

function compileTerm(t: PodAffinityTerm, ownNamespace: string, weight: number): AffinityTerm {
  const names = t.namespaces ?? [];
  const namespaces = new Set(names);
  const nsSel = t.namespaceSelector;
  if (names.length === 0 && nsSel === undefined) namespaces.add(ownNamespace);
  return {
    key: JSON.stringify([
      [...namespaces].sort(),
      t.labelSelector ?? null,
      nsSel ?? null,
      t.topologyKey ?? '',
    ]),
    topologyKey: t.topologyKey ?? '',
    selector: compileLabelSelector(t.labelSelector),
    namespaces,
    namespaceSelector: nsSel === undefined ? undefined : compileLabelSelector(nsSel),
    weight,
  };
}

function weighted(terms: readonly WeightedPodAffinityTerm[] | undefined, ns: string): AffinityTerm[] {
  return (terms ?? []).map((w) => compileTerm(w.podAffinityTerm ?? {}, ns, w.weight ?? 0));
}

/** A pod with what the scheduler derives from it. */
export class PodInfo {
  readonly key: string;
  readonly requests: Resource;
  readonly nonZeroRequests: Resource;
  readonly hostPorts: readonly HostPort[];
  readonly requiredAffinity: readonly AffinityTerm[];
  readonly requiredAntiAffinity: readonly AffinityTerm[];
  readonly preferredAffinity: readonly AffinityTerm[];
  readonly preferredAntiAffinity: readonly AffinityTerm[];
  /** ns/name of every PVC the pod mounts. */
  readonly claims: readonly string[];

  constructor(readonly pod: Pod) {
    const ns = pod.metadata.namespace ?? '';
    this.key = `${ns}/${pod.metadata.name ?? ''}`;
    this.requests = podRequests(pod);
    this.nonZeroRequests = podRequests(pod, true);
    const ports: HostPort[] = [];
    const spec = pod.spec ?? {};
    for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
      for (const p of c.ports ?? []) {
        if (p.hostPort === undefined || p.hostPort <= 0) continue;
        ports.push({ ip: p.hostIP ?? '0.0.0.0', protocol: p.protocol ?? 'TCP', port: p.hostPort });
      }
    }
    this.hostPorts = ports;
    const a = spec.affinity;
    this.requiredAffinity = (a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) =>
      compileTerm(t, ns, 1),
    );
    this.requiredAntiAffinity = (
      a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []
    ).map((t) => compileTerm(t, ns, 1));
    this.preferredAffinity = weighted(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution, ns);
    this.preferredAntiAffinity = weighted(
      a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
      ns,
    );
    this.claims = (spec.volumes ?? []).flatMap((v) => {
      if (v.persistentVolumeClaim?.claimName !== undefined)
        return [`${ns}/${v.persistentVolumeClaim.claimName}`];
      if (v.ephemeral !== undefined) return [`${ns}/${pod.metadata.name ?? ''}-${v.name ?? ''}`];
      return [];
    });
  }

  /** True when the pod has any affinity or anti-affinity term. */
  get hasAffinity(): boolean {
    return (
      this.requiredAffinity.length +
        this.requiredAntiAffinity.length +
        this.preferredAffinity.length +
        this.preferredAntiAffinity.length >
      0
    );
  }

  /** True when the pod has a term InterPodAffinity scores other pods by (all but required anti-affinity). */
  get hasScoringTerms(): boolean {
    return (
      this.requiredAffinity.length + this.preferredAffinity.length + this.preferredAntiAffinity.length > 0
    );
  }

  get priority(): number {
    return this.pod.spec?.priority ?? 0;
  }
}

/** The pod's priority (spec.priority, set by the Priority admission plugin; 0 when absent). */
export function podPriority(pod: Pod): number {
  return pod.spec?.priority ?? 0;
}
