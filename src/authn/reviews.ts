/**
 * The identity APIs of `authentication.k8s.io`, as custom endpoints of the resource routes:
 *
 * - TokenReview (`POST .../tokenreviews`): authenticates `spec.token` through the server's
 *   token authenticators for `spec.audiences` (empty: the server's own) and answers
 *   `status.authenticated`, `status.user`, `status.audiences` and `status.error`;
 * - SelfSubjectReview (`POST .../selfsubjectreviews`, `kubectl auth whoami`): the caller's own
 *   identity in `status.userInfo`.
 *
 * Both answer 201 with the review, as kube-apiserver does. Who may create TokenReviews is the
 * authorizer's business.
 */
import type { CustomEndpoint, EndpointCall } from '../http/resource-routes.js';
import { badRequest } from '../api/errors.js';
import type { ResourceReply } from '../resource/context.js';
import { INVALID_BEARER_TOKEN, TokenRejected } from './token-chain.js';
import type { TokenAuthentication } from './token-authenticator.js';
import type { UserInfo } from './user.js';

/** Key of the TokenReview endpoint. */
export const TOKEN_REVIEWS = 'authentication.k8s.io/tokenreviews';
/** Key of the SelfSubjectReview endpoint. */
export const SELF_SUBJECT_REVIEWS = 'authentication.k8s.io/selfsubjectreviews';

function userJson(user: UserInfo): Record<string, unknown> {
  return {
    username: user.name,
    ...(user.uid === '' ? {} : { uid: user.uid }),
    groups: [...user.groups],
    ...(Object.keys(user.extra).length === 0 ? {} : { extra: user.extra }),
  };
}

function objectOf(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('the request body is not an object');
  return body as Record<string, unknown>;
}

function created(obj: unknown): ResourceReply {
  return { code: 201, body: JSON.stringify(obj) };
}

function metadataOf(body: Record<string, unknown>): Record<string, unknown> {
  const m = body['metadata'];
  return {
    ...(m !== null && typeof m === 'object' ? (m as Record<string, unknown>) : {}),
    creationTimestamp: null,
  };
}

/** What a TokenReview authenticates with: the server's request authentication, tokens only. */
export interface TokenReviewer {
  /** @throws TokenRejected when no token authenticator accepts the token */
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthentication>;
}

/**
 * The TokenReview endpoint over `tokens`: the user is the one a request with the token gets,
 * `system:authenticated` included.
 */
export function tokenReviewEndpoint(tokens: TokenReviewer): CustomEndpoint {
  return {
    methods: ['POST'],
    async handle(call: EndpointCall): Promise<ResourceReply> {
      const body = objectOf(call.body);
      const spec = (body['spec'] ?? {}) as { token?: unknown; audiences?: unknown };
      if (typeof spec !== 'object' || spec === null) throw badRequest('spec must be an object');
      const token = spec.token;
      if (typeof token !== 'string' || token === '')
        throw badRequest('token is required for TokenReview in authentication');
      const audiences = Array.isArray(spec.audiences)
        ? spec.audiences.filter((a): a is string => typeof a === 'string')
        : [];
      let status: Record<string, unknown>;
      try {
        const r = await tokens.authenticateToken(token, audiences);
        status = {
          authenticated: true,
          user: userJson(r.user),
          ...(r.audiences.length === 0 ? {} : { audiences: [...r.audiences] }),
        };
      } catch (err) {
        // kube-apiserver v1.33 says why, `invalid bearer token` when nothing recognised the token.
        const message = err instanceof TokenRejected ? err.message : INVALID_BEARER_TOKEN;
        status = { user: {}, error: message };
      }
      return created({
        kind: 'TokenReview',
        apiVersion: `${call.target.type.group}/${call.target.type.version}`,
        metadata: metadataOf(body),
        spec,
        status,
      });
    },
  };
}

/** The SelfSubjectReview endpoint. */
export function selfSubjectReviewEndpoint(): CustomEndpoint {
  return {
    methods: ['POST'],
    handle(call: EndpointCall): Promise<ResourceReply> {
      const body = objectOf(call.body);
      return Promise.resolve(
        created({
          kind: 'SelfSubjectReview',
          apiVersion: `${call.target.type.group}/${call.target.type.version}`,
          metadata: metadataOf(body),
          status: { userInfo: userJson(call.request.user) },
        }),
      );
    },
  };
}
