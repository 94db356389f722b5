/**
 * The RBAC authorizer: allows a request when a rule of a role bound to the user covers it; never
 * denies (no opinion lets later modes decide), as kube's. ClusterRoleBindings grant everywhere;
 * RoleBindings grant in their namespace only, through a Role of that namespace or a ClusterRole.
 * Decides from the {@link RbacIndex} only; while the index has not synced yet, requests wait for
 * it briefly.
 */
import type { UserInfo } from '../authn/user.js';
import type { Attributes } from './attributes.js';
import {
  NO_OPINION,
  type Authorization,
  type Authorizer,
  type NonResourceRuleInfo,
  type ResourceRuleInfo,
  type RulesInfo,
} from './authorizer.js';
import type { IndexedBinding, RbacIndex } from './rbac-index.js';
import { ruleAllows, subjectMatches, type PolicyRule } from './rbac-rules.js';

const ALLOW: Authorization = Object.freeze({ decision: 'allow', reason: '' });
/** Bound of the decision cache (it is dropped whole when full). */
const MAX_DECISIONS = 50_000;

/** Options of {@link RbacAuthorizer}. */
export interface RbacAuthorizerOptions {
  /** How long a request waits for the first sync (ms, default 10 000). */
  readonly syncWaitMs?: number;
  /**
   * How long a request that RBAC would not allow waits for the index to catch up with the
   * store before the answer stands (ms, default 2 000; 0 never waits).
   */
  readonly catchUpMs?: number;
  /**
   * Test hook: plant a known evaluation bug (`ignore-resource-names`) so the authorization matrix
   * can show it catches one. Never set in production.
   */
  readonly plantedBug?: string;
}

/** The rules a binding grants, or an error text when its role is missing. */
function rulesOf(index: RbacIndex, b: IndexedBinding): readonly PolicyRule[] | string {
  const ref = b.roleRef;
  if (ref.kind === 'ClusterRole') {
    const role = index.clusterRole(ref.name ?? '');
    return role?.rules ?? `clusterrole.rbac.authorization.k8s.io "${ref.name ?? ''}" not found`;
  }
  if (ref.kind === 'Role' && b.namespace !== '') {
    const role = index.role(b.namespace, ref.name ?? '');
    return role?.rules ?? `role.rbac.authorization.k8s.io "${ref.name ?? ''}" not found`;
  }
  return [];
}

/** `--authorization-mode=RBAC`. */
export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  readonly #index: RbacIndex;
  readonly #syncWaitMs: number;
  readonly #catchUpMs: number;
  readonly #ignoreNames: boolean;
  /**
   * Decisions by user and attributes, dropped whole on any change of the index (so never stale):
   * a hot request repeats the same question, and the answer needs no rule scan.
   */
  #decisions = new Map<string, Authorization>();

  constructor(index: RbacIndex, options: RbacAuthorizerOptions = {}) {
    this.#index = index;
    this.#syncWaitMs = options.syncWaitMs ?? 10_000;
    this.#catchUpMs = options.catchUpMs ?? 2_000;
    this.#ignoreNames = options.plantedBug === 'ignore-resource-names';
    index.onChange(() => {
      if (this.#decisions.size > 0) this.#decisions = new Map();
    });
  }

  /**
   * Allowed requests are answered from the index as it is, synchronously. A request the index
   * would not allow first waits until the index holds every RBAC write that finished before it
   * (the four watches run apart: a new binding may be indexed before its role), then is decided
   * again: whoever was granted access and was told so sees the grant. Revocations stay
   * eventually consistent, as on kube-apiserver.
   */
  authorize(attrs: Attributes): Authorization | Promise<Authorization> {
    if (!this.#index.synced) {
      return this.#index.waitSynced(this.#syncWaitMs).then(() => this.#decideFresh(attrs));
    }
    return this.#decideFresh(attrs);
  }

  #decideFresh(attrs: Attributes): Authorization | Promise<Authorization> {
    const answer = this.#decide(attrs);
    if (answer.decision === 'allow' || this.#catchUpMs === 0) return answer;
    const before = this.#index.appliedRevision;
    return this.#index.catchUp(this.#catchUpMs).then(
      () => (this.#index.appliedRevision === before ? answer : this.#decide(attrs)),
      () => answer,
    );
  }

  #decide(attrs: Attributes): Authorization {
    const u = attrs.user;
    const key = `${u.name}\u0000${u.groups.join('\u0001')}\u0000${attrs.verb}\u0000${attrs.isResourceRequest ? `${attrs.apiGroup}\u0000${attrs.resource}\u0000${attrs.subresource}\u0000${attrs.namespace}\u0000${attrs.name}` : `\u0001${attrs.path}`}`;
    const known = this.#decisions.get(key);
    if (known !== undefined) return known;
    const answer = this.#evaluate(attrs);
    if (this.#decisions.size >= MAX_DECISIONS) this.#decisions = new Map();
    this.#decisions.set(key, answer);
    return answer;
  }

  #evaluate(attrs: Attributes): Authorization {
    const errors: string[] = [];
    const namespace = attrs.isResourceRequest ? attrs.namespace : '';
    for (const b of this.#index.bindingsFor(attrs.user, namespace)) {
      if (!b.subjects.some((s) => subjectMatches(s, attrs.user, b.namespace))) continue;
      const rules = rulesOf(this.#index, b);
      if (typeof rules === 'string') {
        errors.push(rules);
        continue;
      }
      for (const rule of rules) {
        const r = this.#ignoreNames ? { ...rule, resourceNames: [] } : rule;
        if (ruleAllows(r, attrs)) return ALLOW;
      }
    }
    if (errors.length === 0) return NO_OPINION;
    return {
      decision: 'noOpinion',
      reason: `RBAC: ${errors.join(', ')}`,
      evaluationError: errors.join(', '),
    };
  }

  /** Every rule bound to `user` in `namespace` (cluster bindings included). */
  rulesFor(user: UserInfo, namespace: string): RulesInfo {
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    const errors: string[] = [];
    for (const b of this.#index.bindingsFor(user, namespace)) {
      if (b.namespace !== '' && b.namespace !== namespace) continue;
      if (!b.subjects.some((s) => subjectMatches(s, user, b.namespace))) continue;
      const rules = rulesOf(this.#index, b);
      if (typeof rules === 'string') {
        errors.push(rules);
        continue;
      }
      for (const r of rules) {
        if ((r.nonResourceURLs ?? []).length > 0) {
          // A RoleBinding's nonResourceURLs grant nothing (requests to paths have no namespace).
          if (b.namespace === '')
            nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs ?? [] });
        } else {
          resourceRules.push({
            verbs: r.verbs ?? [],
            apiGroups: r.apiGroups ?? [],
            resources: r.resources ?? [],
            resourceNames: r.resourceNames ?? [],
          });
        }
      }
    }
    return {
      resourceRules,
      nonResourceRules,
      incomplete: errors.length > 0,
      ...(errors.length === 0 ? {} : { evaluationError: errors.join(', ') }),
    };
  }

  /** Every rule `user` holds that applies in `namespace` (escalation checks). */
  rulesHeld(user: UserInfo, namespace: string): PolicyRule[] {
    const out: PolicyRule[] = [];
    for (const b of this.#index.bindingsFor(user, namespace)) {
      if (b.namespace !== '' && b.namespace !== namespace) continue;
      if (!b.subjects.some((s) => subjectMatches(s, user, b.namespace))) continue;
      const rules = rulesOf(this.#index, b);
      if (typeof rules !== 'string') out.push(...rules);
    }
    return out;
  }
}
