/**
 * The ClusterRole aggregation controller (kube's clusterrole-aggregation-controller): a
 * ClusterRole with an `aggregationRule` gets as its rules the rules of every other ClusterRole
 * whose labels match one of its `clusterRoleSelectors` (roles in name order, duplicates
 * dropped). Runs off the RBAC index's change notifications; writes only when the rules differ.
 */
import type { Store } from '../../storage/interface.js';
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import type { IndexedRole, LabelSelector, RbacIndex } from './rbac-index.js';
import type { PolicyRule } from './rbac-rules.js';
import { selectorMatches as labelSelectorMatches } from '../validation/meta.js';

/**
 * `selector` matches `labels` (matchLabels and matchExpressions, as any label selector); an
 * empty selector selects no role here.
 */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const empty =
    Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
  return !empty && labelSelectorMatches(selector, new Map(Object.entries(labels)));
}

/** The rules `role`'s aggregationRule selects from `roles`. */
export function aggregatedRules(role: IndexedRole, roles: Iterable<IndexedRole>): PolicyRule[] {
  const selectors = role.object.aggregationRule?.clusterRoleSelectors ?? [];
  const picked = [...roles]
    .filter(
      (r) =>
        r.name !== role.name && selectors.some((s) => selectorMatches(s, r.object.metadata?.labels ?? {})),
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const r of picked) {
    for (const rule of r.rules) {
      const k = JSON.stringify(rule);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(rule);
    }
  }
  return out;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Keeps aggregated ClusterRoles filled. */
export class AggregationController {
  readonly #index: RbacIndex;
  readonly #store: Store;
  readonly #logError: (message: string, err?: unknown) => void;
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;

  constructor(index: RbacIndex, store: Store, logError: (message: string, err?: unknown) => void) {
    this.#index = index;
    this.#store = store;
    this.#logError = logError;
  }

  start(): void {
    this.#unsubscribe = this.#index.onChange((kind) => {
      if (kind === 'clusterroles') this.#schedule();
    });
    this.#schedule();
  }

  stop(): void {
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#unsubscribe === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#sync();
    }, 20);
  }

  async #sync(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    try {
      const roles = [...this.#index.clusterRoles()];
      for (const role of roles) {
        if ((role.object.aggregationRule?.clusterRoleSelectors ?? []).length === 0) continue;
        const want = aggregatedRules(role, roles);
        if (JSON.stringify(want) === JSON.stringify(role.rules)) continue;
        await this.#write(role.name, want);
      }
    } catch (err) {
      this.#logError('clusterrole aggregation failed', err);
      this.#again = true;
    } finally {
      this.#running = false;
      if (this.#again) {
        this.#again = false;
        this.#schedule();
      }
    }
  }

  async #write(name: string, rules: PolicyRule[]): Promise<void> {
    const key = `/clusterroles/${name}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const { kv } = await this.#store.get(key);
      if (kv === undefined) return;
      const obj = JSON.parse(decoder.decode(kv.value)) as Record<string, unknown>;
      if (JSON.stringify(obj['rules'] ?? []) === JSON.stringify(rules)) return;
      obj['rules'] = rules;
      try {
        await this.#store.update(key, encoder.encode(JSON.stringify(obj)), { ifModRevision: kv.modRevision });
        return;
      } catch (err) {
        if (err instanceof ConflictError || err instanceof NotFoundError) continue;
        throw err;
      }
    }
  }
}
