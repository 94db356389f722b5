/**
 * The scheduler's cache: every node's {@link NodeInfo} with the pods bound to it and the pods
 * assumed there (chosen, binding in flight), updated incrementally from the informers. It is the
 * snapshot a cycle reads: a cycle's filtering and scoring are synchronous, so nothing changes
 * under them, and no copy is made per cycle.
 */
import type { Node, Pod } from '../api/types/core-v1.js';
import { AffinityIndex } from './affinity-index.js';
import type { Snapshot } from './framework/types.js';
import { NodeInfo } from './node-info.js';
import { PodInfo } from './pod-info.js';

interface CachedPod {
  readonly info: PodInfo;
  readonly nodeName: string;
  assumed: boolean;
}

/** Pod key (`ns/name`) of a pod object. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/** True for pods that no longer hold node resources (Succeeded or Failed). */
export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** True when two label sets are equal. */
function sameLabels(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  for (const k of ka) if (a?.[k] !== b?.[k]) return false;
  return true;
}

/** Nodes and placed pods. */
export class SchedulerCache implements Snapshot {
  readonly #infos = new Map<string, NodeInfo>();
  readonly #pods = new Map<string, CachedPod>();
  readonly #images = new Map<string, number>();
  /** Nodes (with a Node object) holding a pod with any affinity term; with a required anti-affinity term. */
  readonly #withAffinity = new Set<NodeInfo>();
  readonly #withAnti = new Set<NodeInfo>();
  #list: NodeInfo[] | undefined;
  /** InterPodAffinity's per-topology counts, kept with the pods and nodes. */
  readonly affinityIndex = new AffinityIndex(() => this.#infos.values());

  /** Nodes (with a Node object), in insertion order; rebuilt only when nodes come or go. */
  get nodes(): readonly NodeInfo[] {
    return (this.#list ??= [...this.#infos.values()].filter((n) => n.node !== undefined));
  }

  get(name: string): NodeInfo | undefined {
    const n = this.#infos.get(name);
    return n?.node === undefined ? undefined : n;
  }

  nodesWithAffinityPods(): Iterable<NodeInfo> {
    return this.#withAffinity;
  }

  nodesWithRequiredAntiAffinityPods(): Iterable<NodeInfo> {
    return this.#withAnti;
  }

  /** Keeps the node's membership of the two sets above current. */
  #track(info: NodeInfo): void {
    const present = info.node !== undefined;
    if (present && info.podsWithAffinity.size > 0) this.#withAffinity.add(info);
    else this.#withAffinity.delete(info);
    if (present && info.podsWithRequiredAntiAffinity.size > 0) this.#withAnti.add(info);
    else this.#withAnti.delete(info);
  }

  imageNodeCount(image: string): number {
    return this.#images.get(image) ?? 0;
  }

  #info(name: string): NodeInfo {
    let n = this.#infos.get(name);
    if (n === undefined) {
      n = new NodeInfo(name);
      this.#infos.set(name, n);
    }
    return n;
  }

  #countImages(info: NodeInfo, sign: 1 | -1): void {
    for (const image of info.images.keys()) {
      const c = (this.#images.get(image) ?? 0) + sign;
      if (c <= 0) this.#images.delete(image);
      else this.#images.set(image, c);
    }
  }

  /** Adds or replaces a node. */
  upsertNode(node: Node): void {
    const info = this.#info(node.metadata.name ?? '');
    const old = info.node;
    const isNew = old === undefined;
    const relabelled = isNew || !sameLabels(old.metadata.labels, node.metadata.labels);
    if (!isNew && relabelled) this.affinityIndex.node(info, -1);
    this.#countImages(info, -1);
    info.setNode(node);
    this.#countImages(info, 1);
    if (relabelled) this.affinityIndex.node(info, 1);
    this.#track(info);
    if (isNew) this.#list = undefined;
  }

  /** Removes a node; its pods stay accounted (as kube) until they are deleted. */
  removeNode(name: string): void {
    const info = this.#infos.get(name);
    if (info === undefined) return;
    if (info.node !== undefined) this.affinityIndex.node(info, -1);
    this.#countImages(info, -1);
    if (info.pods.size === 0) this.#infos.delete(name);
    else info.node = undefined;
    this.#track(info);
    this.#list = undefined;
  }

  /** The cached pod (bound or assumed), if any. */
  pod(key: string): PodInfo | undefined {
    return this.#pods.get(key)?.info;
  }

  /** True when the pod is assumed (binding in flight) rather than seen bound. */
  isAssumed(key: string): boolean {
    return this.#pods.get(key)?.assumed === true;
  }

  /** Adds or updates a bound pod seen by the informer (confirms an assumed one). */
  upsertPod(pod: Pod): void {
    const key = podKey(pod);
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName === '' || isTerminal(pod)) {
      this.removePod(key);
      return;
    }
    this.removePod(key);
    const info = new PodInfo(pod);
    this.#place(info, nodeName);
    this.#pods.set(key, { info, nodeName, assumed: false });
  }

  /** Removes a pod (deleted, terminal, or a forgotten assumption). */
  removePod(key: string): void {
    const c = this.#pods.get(key);
    if (c === undefined) return;
    this.#pods.delete(key);
    const info = this.#infos.get(c.nodeName);
    if (info === undefined) return;
    if (info.removePod(key)) this.affinityIndex.pod(info, c.info, -1);
    this.#track(info);
    if (info.node === undefined && info.pods.size === 0) this.#infos.delete(c.nodeName);
  }

  #place(pod: PodInfo, nodeName: string): void {
    const info = this.#info(nodeName);
    info.addPod(pod);
    this.affinityIndex.pod(info, pod, 1);
    this.#track(info);
  }

  /** Places a pod on a node before its binding is confirmed. */
  assume(info: PodInfo, nodeName: string): void {
    this.removePod(info.key);
    this.#place(info, nodeName);
    this.#pods.set(info.key, { info, nodeName, assumed: true });
  }

  /** Undoes {@link assume} (binding failed); a pod already seen bound is left alone. */
  forget(key: string): void {
    if (this.#pods.get(key)?.assumed === true) this.removePod(key);
  }

  /** Number of nodes and of placed pods (for logs and tests). */
  size(): { nodes: number; pods: number } {
    return { nodes: this.nodes.length, pods: this.#pods.size };
  }
}
