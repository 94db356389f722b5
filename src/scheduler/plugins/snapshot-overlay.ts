/** A snapshot with one node replaced: what a preemption dry run filters against. */
import type { Snapshot } from '../framework/types.js';
import type { NodeInfo } from '../node-info.js';

/** `base` with `node` in place of the node of the same name. */
export class OverlaySnapshot implements Snapshot {
  readonly nodes: readonly NodeInfo[];

  constructor(
    readonly base: Snapshot,
    readonly node: NodeInfo,
  ) {
    this.nodes = base.nodes.map((n) => (n.name === node.name ? node : n));
  }

  get(name: string): NodeInfo | undefined {
    return name === this.node.name ? this.node : this.base.get(name);
  }

  *nodesWithAffinityPods(): Iterable<NodeInfo> {
    for (const n of this.base.nodesWithAffinityPods()) if (n.name !== this.node.name) yield n;
    if (this.node.podsWithAffinity.size > 0) yield this.node;
  }

  *nodesWithRequiredAntiAffinityPods(): Iterable<NodeInfo> {
    for (const n of this.base.nodesWithRequiredAntiAffinityPods()) if (n.name !== this.node.name) yield n;
    if (this.node.podsWithRequiredAntiAffinity.size > 0) yield this.node;
  }

  imageNodeCount(image: string): number {
    return this.base.imageNodeCount(image);
  }
}
