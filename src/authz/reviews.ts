/**
 * The access reviews of `authorization.k8s.io/v1`, served as custom endpoints (creates of virtual
 * kinds): SubjectAccessReview (any user's access), LocalSubjectAccessReview (the same, in the
 * URL's namespace), SelfSubjectAccessReview (the caller's own) and SelfSubjectRulesReview (the
 * caller's rules in a namespace: `kubectl auth can-i --list`). Each answers 201 with the review
 * and its `status`, as kube-apiserver does.
 */
import { invalid } from '../api/errors.js';
import type { CustomEndpoint, EndpointCall } from '../http/resource-routes.js';
import type { ResourceReply } from '../resource/context.js';
import type { UserInfo } from '../authn/user.js';
import { nonResourceAttributes } from '../api/authorization.js';
import type { Attributes } from './attributes.js';
import type { AuthorizerChain } from './authorizer.js';

interface ResourceAttributesSpec {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}
interface ReviewSpec {
  resourceAttributes?: ResourceAttributesSpec | null;
  nonResourceAttributes?: { path?: string; verb?: string } | null;
  user?: string;
  groups?: string[] | null;
  extra?: Record<string, string[]> | null;
  uid?: string;
  namespace?: string;
}
interface Review {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
  spec?: ReviewSpec;
  status?: unknown;
}

function asReview(body: unknown): Review {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
}

function attributesFrom(kind: string, spec: ReviewSpec, user: UserInfo): Attributes {
  const r = spec.resourceAttributes ?? undefined;
  const n = spec.nonResourceAttributes ?? undefined;
  if ((r === undefined) === (n === undefined)) {
    throw invalid(kind, 'authorization.k8s.io', '', [
      {
        field: 'spec.resourceAttributes',
        message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        reason: 'FieldValueRequired',
      },
    ]);
  }
  if (r !== undefined) {
    return {
      user,
      verb: r.verb ?? '',
      isResourceRequest: true,
      path: '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      namespace: r.namespace ?? '',
      name: r.name ?? '',
    };
  }
  return nonResourceAttributes(user, n?.verb ?? '', n?.path ?? '');
}

function reply(review: Review, kind: string, status: Record<string, unknown>): ResourceReply {
  const out = {
    kind,
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { ...(review.metadata ?? {}), creationTimestamp: null },
    spec: review.spec ?? {},
    status,
  };
  return { code: 201, body: JSON.stringify(out) };
}

async function decide(chain: AuthorizerChain, attrs: Attributes): Promise<Record<string, unknown>> {
  const answer = await chain.authorize(attrs);
  return {
    allowed: answer.decision === 'allow',
    ...(answer.decision === 'deny' ? { denied: true } : {}),
    ...(answer.reason === '' ? {} : { reason: answer.reason }),
    ...(answer.evaluationError === undefined ? {} : { evaluationError: answer.evaluationError }),
  };
}

function specUser(kind: string, spec: ReviewSpec): UserInfo {
  const groups = spec.groups ?? [];
  if ((spec.user ?? '') === '' && groups.length === 0) {
    throw invalid(kind, 'authorization.k8s.io', '', [
      {
        field: 'spec.user',
        message: 'at least one of user or group must be specified',
        reason: 'FieldValueInvalid',
      },
    ]);
  }
  return { name: spec.user ?? '', uid: spec.uid ?? '', groups, extra: spec.extra ?? {} };
}

/** The four review endpoints, keyed as the resource routes look them up. */
export function reviewEndpoints(chain: AuthorizerChain): Map<string, CustomEndpoint> {
  const post = (handle: (call: EndpointCall) => Promise<ResourceReply>): CustomEndpoint => ({
    methods: ['POST'],
    handle,
  });
  return new Map<string, CustomEndpoint>([
    [
      'authorization.k8s.io/subjectaccessreviews',
      post(async ({ body }) => {
        const review = asReview(body);
        const spec = review.spec ?? {};
        const attrs = attributesFrom('SubjectAccessReview', spec, specUser('SubjectAccessReview', spec));
        return reply(review, 'SubjectAccessReview', await decide(chain, attrs));
      }),
    ],
    [
      'authorization.k8s.io/localsubjectaccessreviews',
      post(async ({ body, target }) => {
        const kind = 'LocalSubjectAccessReview';
        const review = asReview(body);
        const spec = review.spec ?? {};
        const ns = target.namespace ?? '';
        if (spec.resourceAttributes?.namespace !== ns) {
          throw invalid(kind, 'authorization.k8s.io', '', [
            {
              field: 'spec.resourceAttributes.namespace',
              message: `must match namespace: ${ns}`,
            },
          ]);
        }
        const attrs = attributesFrom(kind, spec, specUser(kind, spec));
        return reply(
          { ...review, metadata: { ...(review.metadata ?? {}), namespace: ns } },
          kind,
          await decide(chain, attrs),
        );
      }),
    ],
    [
      'authorization.k8s.io/selfsubjectaccessreviews',
      post(async ({ body, request }) => {
        const review = asReview(body);
        const attrs = attributesFrom('SelfSubjectAccessReview', review.spec ?? {}, request.user);
        return reply(review, 'SelfSubjectAccessReview', await decide(chain, attrs));
      }),
    ],
    [
      'authorization.k8s.io/selfsubjectrulesreviews',
      post(({ body, request }) => {
        const review = asReview(body);
        const rules = chain.rulesFor(request.user, review.spec?.namespace ?? '');
        // kube answers a new object: neither the request's metadata nor its spec come back.
        return Promise.resolve(
          reply({}, 'SelfSubjectRulesReview', {
            resourceRules: rules.resourceRules,
            nonResourceRules: rules.nonResourceRules,
            incomplete: rules.incomplete,
            ...(rules.evaluationError === undefined ? {} : { evaluationError: rules.evaluationError }),
          }),
        );
      }),
    ],
  ]);
}
