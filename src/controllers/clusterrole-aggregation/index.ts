/**
 * The `clusterrole-aggregation-controller` (alias `clusterrole-aggregation`), kube's
 * `pkg/controller/clusterroleaggregation`: a ClusterRole with an `aggregationRule` gets as its
 * rules those of every other ClusterRole its `clusterRoleSelectors` select: selector by
 * selector, the selected roles in name order, each rule once (an empty selector selects every
 * role, as a label selector does). Any ClusterRole change queues every aggregated role. The
 * rules are written by server-side apply as the field manager
 * `clusterrole-aggregation-controller` (forced), or by an update where the server refuses apply
 * (415), as kube does; nothing is written when they are already right.
 */
import type { ClusterRole, PolicyRule } from '../../api/types/rbac-v1.js';
import {
  ApiStatusError,
  CLUSTER_ROLES,
  defaultControllerRateLimiter,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { labelMatcher } from '../shared/label-selector.js';
import { startWorkers } from '../shared/workers.js';

/** The field manager of the controller's writes. */
export const FIELD_MANAGER = 'clusterrole-aggregation-controller';

function byName(a: ClusterRole, b: ClusterRole): number {
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A rule's identity for "the same rule" (kube: deep equality of the fields). */
function ruleKey(r: PolicyRule): string {
  return JSON.stringify([
    r.verbs ?? [],
    r.apiGroups ?? [],
    r.resources ?? [],
    r.resourceNames ?? [],
    r.nonResourceURLs ?? [],
  ]);
}

/**
 * The rules `role` aggregates from `roles`.
 * @throws LabelSelectorError for a selector that does not parse.
 */
export function aggregatedRules(role: ClusterRole, roles: readonly ClusterRole[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const matches = labelMatcher(selector);
    const picked = roles.filter(
      (r) => r.metadata.name !== role.metadata.name && matches(r.metadata.labels ?? {}),
    );
    for (const r of [...picked].sort(byName)) {
      for (const rule of r.rules ?? []) {
        const k = ruleKey(rule);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push(rule);
      }
    }
  }
  return out;
}

function sameRules(a: readonly PolicyRule[], b: readonly PolicyRule[]): boolean {
  return a.length === b.length && a.every((r, i) => ruleKey(r) === ruleKey(b[i] ?? {}));
}

/** One running aggregation controller. */
export class ClusterRoleAggregationController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #roles: SharedInformer<ClusterRole>;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#roles = ctx.informers.informer<ClusterRole>(CLUSTER_ROLES);
    const all = (): void => {
      for (const r of this.#roles.store.list()) {
        if (r.aggregationRule !== undefined) this.#queue.add(r.metadata.name ?? '');
      }
    };
    this.#roles.addHandler({ add: all, update: all, delete: all });
  }

  /** Starts the workers once the caches are synced (kube runs 5). */
  start(): void {
    startWorkers(this.#ctx, 'clusterrole aggregation', {
      queue: this.#queue,
      workers: 5,
      sync: (name) => this.sync(name),
    });
  }

  /** Fills ClusterRole `name`'s rules. */
  async sync(name: string): Promise<void> {
    const role = this.#roles.store.get(name);
    if (role?.aggregationRule === undefined) return;
    const rules = aggregatedRules(role, this.#roles.store.list());
    if (sameRules(rules, role.rules ?? [])) return;
    const client = this.#ctx.client.resource<ClusterRole>(CLUSTER_ROLES);
    try {
      await client.patch(
        name,
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules },
        { type: 'apply', fieldManager: FIELD_MANAGER, force: true },
      );
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 415)) throw err;
      await client.update({ ...role, rules });
    }
  }
}

/** Registry entry. */
export const clusterRoleAggregationController: ControllerDescriptor = {
  name: 'clusterrole-aggregation-controller',
  aliases: ['clusterrole-aggregation'],
  serviceAccount: 'clusterrole-aggregation-controller',
  start(ctx) {
    new ClusterRoleAggregationController(ctx).start();
  },
};
