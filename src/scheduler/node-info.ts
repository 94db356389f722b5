/**
 * One node with the pods placed on it (bound or assumed) and their sums, kept up to date
 * incrementally by the cache: adding or removing a pod adjusts the totals, never recomputes them.
 */
import type { Node, Taint } from '../api/types/core-v1.js';
import type { PodInfo } from './pod-info.js';
import { Resource } from './resources.js';

/** The node's image names (with and without tag) and their sizes. */
export type ImageSizes = ReadonlyMap<string, number>;

/** Normalizes an image reference as kube's ImageLocality does: a missing tag means `:latest`. */
export function normalizedImageName(name: string): string {
  if (name.includes('@')) return name;
  const lastSlash = name.lastIndexOf('/');
  return name.lastIndexOf(':') > lastSlash ? name : `${name}:latest`;
}

/** A node and what is placed on it. */
export class NodeInfo {
  node: Node | undefined;
  readonly pods = new Map<string, PodInfo>();
  /** Pods with any (anti-)affinity term, and with a required anti-affinity term. */
  readonly podsWithAffinity = new Set<PodInfo>();
  readonly podsWithRequiredAntiAffinity = new Set<PodInfo>();
  /** Pods with a term InterPodAffinity scores by (required affinity, preferred terms). */
  podsWithScoringTerms = 0;
  readonly requested = new Resource();
  readonly nonZeroRequested = new Resource();
  allocatable = new Resource();
  /** `ip/protocol/port` of each host port in use. */
  readonly usedPorts = new Map<string, number>();
  /** ns/name of each PVC used by a pod here, with its number of users. */
  readonly pvcRefCounts = new Map<string, number>();
  images: ImageSizes = new Map();
  taints: readonly Taint[] = [];
  /** Bumped on every change: lets callers detect a stale view. */
  generation = 0;

  constructor(readonly name: string) {}

  /** Replaces the node object (status, labels, taints may all change). */
  setNode(node: Node): void {
    this.node = node;
    const alloc = new Resource();
    alloc.addList(node.status?.allocatable ?? node.status?.capacity);
    this.allocatable = alloc;
    this.taints = node.spec?.taints ?? [];
    const images = new Map<string, number>();
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) images.set(normalizedImageName(n), img.sizeBytes ?? 0);
    }
    this.images = images;
    this.generation++;
  }

  addPod(pi: PodInfo): void {
    this.#apply(pi, 1);
    this.pods.set(pi.key, pi);
    if (pi.hasAffinity) this.podsWithAffinity.add(pi);
    if (pi.requiredAntiAffinity.length > 0) this.podsWithRequiredAntiAffinity.add(pi);
    if (pi.hasScoringTerms) this.podsWithScoringTerms++;
  }

  /** Removes a pod by key; false when it was not here. */
  removePod(key: string): boolean {
    const pi = this.pods.get(key);
    if (pi === undefined) return false;
    this.pods.delete(key);
    this.podsWithAffinity.delete(pi);
    this.podsWithRequiredAntiAffinity.delete(pi);
    if (pi.hasScoringTerms) this.podsWithScoringTerms--;
    this.#apply(pi, -1);
    return true;
  }

  #apply(pi: PodInfo, sign: 1 | -1): void {
    this.requested.add(pi.requests, sign);
    this.nonZeroRequested.add(pi.nonZeroRequests, sign);
    for (const p of pi.hostPorts) {
      const k = `${p.ip}/${p.protocol}/${p.port}`;
      const n = (this.usedPorts.get(k) ?? 0) + sign;
      if (n <= 0) this.usedPorts.delete(k);
      else this.usedPorts.set(k, n);
    }
    for (const c of pi.claims) {
      const n = (this.pvcRefCounts.get(c) ?? 0) + sign;
      if (n <= 0) this.pvcRefCounts.delete(c);
      else this.pvcRefCounts.set(c, n);
    }
    this.generation++;
  }

  /** A copy that can take hypothetical pods (preemption's dry runs, nominated pods). */
  clone(): NodeInfo {
    const c = new NodeInfo(this.name);
    if (this.node !== undefined) c.setNode(this.node);
    for (const pi of this.pods.values()) c.addPod(pi);
    return c;
  }

  /** True when a host port conflicts with one in use (0.0.0.0 conflicts with every IP). */
  portInUse(ip: string, protocol: string, port: number): boolean {
    if (this.usedPorts.size === 0) return false;
    if (ip === '0.0.0.0') {
      const suffix = `/${protocol}/${port}`;
      for (const k of this.usedPorts.keys()) if (k.endsWith(suffix)) return true;
      return false;
    }
    return (
      this.usedPorts.has(`${ip}/${protocol}/${port}`) || this.usedPorts.has(`0.0.0.0/${protocol}/${port}`)
    );
  }
}
