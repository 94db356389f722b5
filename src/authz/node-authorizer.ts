/**
 * `--authorization-mode=Node`: requests of kubelets (user `system:node:<name>` in group
 * `system:nodes`). Secrets, ConfigMaps and PersistentVolumeClaims may be read only when a pod
 * bound to the node references them, service-account tokens created only for service accounts
 * of such pods; a node may write only its own Node object and its own Lease (in
 * `kube-node-lease`). Everything else a node may do is the `system:node` role's rules. Other
 * users, and anything not allowed, get no opinion (with kube's reason), so later modes decide.
 */
import type { Attributes } from './attributes.js';
import {
  NO_OPINION,
  NO_RULES,
  unlistedRules,
  type Authorization,
  type Authorizer,
  type RulesInfo,
} from './authorizer.js';
import type { NodeGraph } from './node-graph.js';
import { ruleAllows, type PolicyRule } from './rbac-rules.js';

const ALLOW: Authorization = Object.freeze({ decision: 'allow', reason: '' });
const NODE_PREFIX = 'system:node:';
const READS = new Set(['get', 'list', 'watch']);

/** kube's node identity: a user named `system:node:<name>` in group `system:nodes`. */
function isNode(user: Attributes['user']): boolean {
  return user.groups.includes('system:nodes') && user.name.startsWith(NODE_PREFIX);
}

/** The node authorizer over `graph`, with the `system:node` role's rules for the rest. */
export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  readonly #graph: NodeGraph;
  readonly #rules: readonly PolicyRule[];

  constructor(graph: NodeGraph, nodeRules: readonly PolicyRule[]) {
    this.#graph = graph;
    this.#rules = nodeRules;
  }

  authorize(attrs: Attributes): Authorization | Promise<Authorization> {
    if (!isNode(attrs.user)) return NO_OPINION;
    return this.#authorizeNode(attrs);
  }

  /** A node's rules depend on the objects it is related to: kube lists none and says so. */
  rulesFor(user: Attributes['user']): RulesInfo {
    if (!isNode(user)) return NO_RULES;
    return unlistedRules('node authorizer does not support user rule resolution');
  }

  async #authorizeNode(attrs: Attributes): Promise<Authorization> {
    const user = attrs.user;
    const node = user.name.slice(NODE_PREFIX.length);
    if (node === '') return { decision: 'noOpinion', reason: 'unknown node' };
    if (!attrs.isResourceRequest) return NO_OPINION;
    const none = (what: string): Authorization => ({
      decision: 'noOpinion',
      reason: `no relationship found between node '${node}' and this object${what}`,
    });
    if (attrs.apiGroup === '') {
      switch (attrs.resource) {
        case 'secrets':
        case 'configmaps':
        case 'persistentvolumeclaims': {
          if (attrs.resource === 'persistentvolumeclaims' && attrs.subresource === 'status') break;
          if (!READS.has(attrs.verb) || attrs.subresource !== '') {
            return { decision: 'noOpinion', reason: `can only read individual ${attrs.resource}` };
          }
          if (attrs.name === '') return { decision: 'noOpinion', reason: 'can only read resources by name' };
          await this.#synced();
          const kind = attrs.resource === 'persistentvolumeclaims' ? 'pvcs' : attrs.resource;
          return this.#graph.related(node, kind, attrs.namespace, attrs.name) ? ALLOW : none('');
        }
        case 'serviceaccounts': {
          if (attrs.subresource !== 'token' || attrs.verb !== 'create') {
            return {
              decision: 'noOpinion',
              reason: 'can only create tokens for individual service accounts',
            };
          }
          await this.#synced();
          return this.#graph.related(node, 'serviceAccount', attrs.namespace, attrs.name) ? ALLOW : none('');
        }
        case 'nodes':
          if (!READS.has(attrs.verb) && attrs.verb !== 'create' && attrs.name !== node) {
            return { decision: 'noOpinion', reason: `node '${node}' cannot modify node '${attrs.name}'` };
          }
          break;
      }
    }
    if (attrs.apiGroup === 'coordination.k8s.io' && attrs.resource === 'leases') {
      if (attrs.namespace !== 'kube-node-lease') {
        return { decision: 'noOpinion', reason: `can only access leases in the kube-node-lease namespace` };
      }
      if (attrs.verb !== 'create' && attrs.name !== node) {
        return {
          decision: 'noOpinion',
          reason: `can only access node lease with the same name as the requesting node`,
        };
      }
    }
    return this.#rules.some((r) => ruleAllows(r, attrs)) ? ALLOW : NO_OPINION;
  }

  async #synced(): Promise<void> {
    for (let i = 0; i < 100 && !this.#graph.synced; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
