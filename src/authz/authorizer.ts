/**
 * The authorizer contract and the chain of `--authorization-mode`: each authorizer answers
 * allow, deny or no opinion; the chain asks them in order and stops at the first allow or deny,
 * as kube's union authorizer does. Before the chain, members of `system:masters` are allowed
 * whatever the modes (kube's privileged-groups authorizer). No opinion from every authorizer is
 * a denial.
 */
import { ApiError } from '../api/errors.js';
import { forbiddenMessage, type Attributes } from './attributes.js';

/** An authorizer's answer. */
export type Decision = 'allow' | 'deny' | 'noOpinion';

/** The answer with kube's reason text (shown after the forbidden message, and in reviews). */
export interface Authorization {
  readonly decision: Decision;
  readonly reason: string;
  /** An error met while deciding (a missing role, a failed webhook): SubjectAccessReview's evaluationError. */
  readonly evaluationError?: string;
  /**
   * The authorizer could not decide (a webhook that failed): when nothing allows the request,
   * it fails with 500 rather than 403, as kube-apiserver answers.
   */
  readonly failed?: string;
}

/** One resource or non-resource rule as SelfSubjectRulesReview reports it. */
export interface ResourceRuleInfo {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}
export interface NonResourceRuleInfo {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** The rules a user holds in a namespace (kube's `RuleResolver`). */
export interface RulesInfo {
  readonly resourceRules: readonly ResourceRuleInfo[];
  readonly nonResourceRules: readonly NonResourceRuleInfo[];
  readonly incomplete: boolean;
  readonly evaluationError?: string;
}

/** One authorization mode. */
export interface Authorizer {
  readonly name: string;
  authorize(attrs: Attributes): Authorization | Promise<Authorization>;
  /** The rules the user holds in `namespace` (modes that cannot list rules report incomplete). */
  rulesFor?(user: Attributes['user'], namespace: string): RulesInfo;
}

export const NO_OPINION: Authorization = Object.freeze({ decision: 'noOpinion', reason: '' });
const ALLOW: Authorization = Object.freeze({ decision: 'allow', reason: '' });

const PRIVILEGED_GROUP = 'system:masters';

/** No rules, completely listed. */
export const NO_RULES: RulesInfo = Object.freeze({
  resourceRules: [],
  nonResourceRules: [],
  incomplete: false,
});

/** No rules, and the mode's reason it cannot list them (kube's Node and Webhook modes). */
export function unlistedRules(reason: string): RulesInfo {
  return { ...NO_RULES, incomplete: true, evaluationError: reason };
}

const ALL_RULES: RulesInfo = Object.freeze({
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
});

/** `AlwaysAllow`: every rule. */
export const alwaysAllow: Authorizer = {
  name: 'AlwaysAllow',
  authorize: () => ALLOW,
  rulesFor: () => ALL_RULES,
};
/** `AlwaysDeny`: no rule. */
export const alwaysDeny: Authorizer = {
  name: 'AlwaysDeny',
  authorize: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }),
  rulesFor: () => NO_RULES,
};

/** Reasons and errors of the authorizers that had no opinion. */
interface Accumulated {
  readonly reasons: string[];
  readonly errors: string[];
  readonly failures: string[];
}

function accumulate(acc: Accumulated | undefined, a: Authorization): Accumulated | undefined {
  if (a.reason === '' && a.evaluationError === undefined && a.failed === undefined) return acc;
  const out = acc ?? { reasons: [], errors: [], failures: [] };
  if (a.reason !== '') out.reasons.push(a.reason);
  if (a.evaluationError !== undefined) out.errors.push(a.evaluationError);
  if (a.failed !== undefined) out.failures.push(a.failed);
  return out;
}

function finish(acc: Accumulated | undefined): Authorization {
  if (acc === undefined) return NO_OPINION;
  return {
    decision: 'noOpinion',
    reason: acc.reasons.join('\n'),
    ...(acc.errors.length === 0 ? {} : { evaluationError: acc.errors.join('\n') }),
    ...(acc.failures.length === 0 ? {} : { failed: acc.failures.join('; ') }),
  };
}

/** The ordered chain of `--authorization-mode`. */
export class AuthorizerChain {
  #authorizers: readonly Authorizer[];

  constructor(authorizers: readonly Authorizer[]) {
    this.#authorizers = authorizers;
  }

  /** The authorizers, in order. */
  get authorizers(): readonly Authorizer[] {
    return this.#authorizers;
  }

  /**
   * Puts a new list in place (a reloaded `--authorization-config`). Requests already being
   * decided finish on the list they started with.
   */
  replace(authorizers: readonly Authorizer[]): void {
    this.#authorizers = authorizers;
  }

  /**
   * The answer of the first authorizer with an opinion (no opinion from all: noOpinion).
   * Synchronous while every authorizer answers synchronously (the common case: RBAC from its
   * index), so the request path pays for no promise.
   */
  authorize(attrs: Attributes): Authorization | Promise<Authorization> {
    if (attrs.user.groups.includes(PRIVILEGED_GROUP)) return ALLOW;
    let acc: Accumulated | undefined;
    const list = this.#authorizers;
    for (let i = 0; i < list.length; i++) {
      const answer = (list[i] as Authorizer).authorize(attrs);
      if (answer instanceof Promise) return answer.then((a) => this.#continue(list, attrs, i, a, acc));
      if (answer.decision !== 'noOpinion') return answer;
      acc = accumulate(acc, answer);
    }
    return finish(acc);
  }

  async #continue(
    list: readonly Authorizer[],
    attrs: Attributes,
    at: number,
    first: Authorization,
    acc0: Accumulated | undefined,
  ): Promise<Authorization> {
    if (first.decision !== 'noOpinion') return first;
    let acc = accumulate(acc0, first);
    for (let i = at + 1; i < list.length; i++) {
      const answer = await (list[i] as Authorizer).authorize(attrs);
      if (answer.decision !== 'noOpinion') return answer;
      acc = accumulate(acc, answer);
    }
    return finish(acc);
  }

  /**
   * The union of every mode's rules for SelfSubjectRulesReview, as kube's union rule resolver
   * gives it: `system:masters` adds nothing of its own (its rules are RBAC's `cluster-admin`
   * binding), and a mode that cannot list rules makes the list incomplete.
   */
  rulesFor(user: Attributes['user'], namespace: string): RulesInfo {
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    let incomplete = false;
    const errors: string[] = [];
    for (const a of this.#authorizers) {
      if (a.rulesFor === undefined) {
        incomplete = true;
        continue;
      }
      const r = a.rulesFor(user, namespace);
      resourceRules.push(...r.resourceRules);
      nonResourceRules.push(...r.nonResourceRules);
      incomplete ||= r.incomplete;
      if (r.evaluationError !== undefined) errors.push(r.evaluationError);
    }
    return {
      resourceRules,
      nonResourceRules,
      incomplete,
      // kube's aggregate error: one message as it is, several in brackets.
      ...(errors.length === 0
        ? {}
        : { evaluationError: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` }),
    };
  }
}

/** kube's 403 for a denied request: `<resource> "<name>" is forbidden: <message>[: <reason>]`. */
export function forbiddenError(attrs: Attributes, reason: string): ApiError {
  let message = forbiddenMessage(attrs);
  if (reason !== '') message += `: ${reason}`;
  if (!attrs.isResourceRequest || attrs.resource === '') {
    return new ApiError('Forbidden', `forbidden: ${message}`, {});
  }
  const qualified = attrs.apiGroup === '' ? attrs.resource : `${attrs.resource}.${attrs.apiGroup}`;
  const prefix =
    attrs.name === '' ? `${qualified} is forbidden` : `${qualified} "${attrs.name}" is forbidden`;
  return new ApiError('Forbidden', `${prefix}: ${message}`, {
    ...(attrs.name === '' ? {} : { name: attrs.name }),
    ...(attrs.apiGroup === '' ? {} : { group: attrs.apiGroup }),
    kind: attrs.resource,
  });
}
