/**
 * Kubernetes' CEL authorizer library (`kubernetes.authz`): the `authorizer` variable of
 * admission expressions asks the server's authorizer about the requesting user.
 *
 * ```cel
 * authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('update').allowed()
 * authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').reason()
 * authorizer.path('/healthz').check('get').errored()
 * authorizer.requestResource.subresource('scale').check('patch').allowed()
 * ```
 *
 * `check()` calls {@link CelAuthorize}, which may answer asynchronously: expressions that use
 * it must be evaluated with `evaluateAsync`. Values are receiver-only: they have methods, no
 * fields (except `authorizer.requestResource`).
 */
import { nonResourceAttributes, type Attributes } from '../api/authorization.js';
import type { UserInfo } from '../api/user.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../validation/formats.js';

/** An authorizer's answer: allowed or not, its reason, and the error it met ('' none). */
export interface CelAuthzDecision {
  readonly allowed: boolean;
  readonly reason: string;
  readonly error: string;
}

/** The server's authorizer as the library asks it. */
export type CelAuthorize = (attrs: Attributes) => CelAuthzDecision | Promise<CelAuthzDecision>;

/** The resource a request addresses (for `authorizer.requestResource`). */
export interface CelRequestResource {
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** `kubernetes.authorization.Authorizer`: a user and the authorizer to ask. */
export class CelAuthorizer {
  readonly requestResource: CelResourceCheck | undefined;

  constructor(
    readonly user: UserInfo,
    readonly authorize: CelAuthorize,
    request?: CelRequestResource,
  ) {
    this.requestResource =
      request === undefined
        ? undefined
        : new CelResourceCheck(
            new CelGroupCheck(this, request.group),
            request.resource,
            request.subresource,
            request.namespace,
            request.name,
          );
  }
}

/** `kubernetes.authorization.PathCheck`. */
export class CelPathCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly path: string,
  ) {}
}

/** `kubernetes.authorization.GroupCheck`. */
export class CelGroupCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly group: string,
  ) {}
}

/** `kubernetes.authorization.ResourceCheck` (immutable: each setter returns a copy). */
export class CelResourceCheck {
  constructor(
    readonly groupCheck: CelGroupCheck,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
  ) {}

  with(change: { subresource?: string; namespace?: string; name?: string }): CelResourceCheck {
    return new CelResourceCheck(
      this.groupCheck,
      this.resource,
      change.subresource ?? this.subresource,
      change.namespace ?? this.namespace,
      change.name ?? this.name,
    );
  }
}

/** `kubernetes.authorization.Decision`. */
export class CelDecision {
  constructor(readonly decision: CelAuthzDecision) {}
}

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

/** The CEL type of the `authorizer` variable. */
export const AUTHORIZER_TYPE = AUTHORIZER;

function decide(authorizer: CelAuthorizer, attrs: Attributes): CelDecision | Promise<CelDecision> {
  const answer = authorizer.authorize(attrs);
  return answer instanceof Promise ? answer.then((d) => new CelDecision(d)) : new CelDecision(answer);
}

/** Registers a method `name` of `receiverType` (the Kubernetes libraries' registrar). */
export type MethodRegistrar = (
  name: string,
  receiverType: string,
  params: string[],
  returnType: string,
  handler: (...args: never[]) => unknown,
) => void;

/**
 * Registers the library's types on a cel-js environment (`registerType`) and its methods
 * with `m`.
 */
export function registerAuthzLibrary(
  env: { registerType(name: string, type: unknown): unknown },
  m: MethodRegistrar,
): void {
  env.registerType(PATH_CHECK, CelPathCheck);
  env.registerType(GROUP_CHECK, CelGroupCheck);
  env.registerType(RESOURCE_CHECK, CelResourceCheck);
  env.registerType(DECISION, CelDecision);
  env.registerType(AUTHORIZER, { ctor: CelAuthorizer, fields: { requestResource: RESOURCE_CHECK } });
  m('path', AUTHORIZER, ['string'], PATH_CHECK, (a: CelAuthorizer, path: string) => {
    if (path.trim() === '') throw new Error('path must not be empty');
    return new CelPathCheck(a, path);
  });
  m('group', AUTHORIZER, ['string'], GROUP_CHECK, (a: CelAuthorizer, g: string) => new CelGroupCheck(a, g));
  m(
    'serviceAccount',
    AUTHORIZER,
    ['string', 'string'],
    AUTHORIZER,
    (a: CelAuthorizer, namespace: string, name: string) => {
      if (isDNS1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
      if (isDNS1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
      const user: UserInfo = {
        name: `system:serviceaccount:${namespace}:${name}`,
        uid: '',
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
        extra: {},
      };
      return new CelAuthorizer(user, a.authorize);
    },
  );
  m('resource', GROUP_CHECK, ['string'], RESOURCE_CHECK, (g: CelGroupCheck, resource: string) => {
    if (resource.trim() === '') throw new Error('resource must not be empty');
    return new CelResourceCheck(g, resource);
  });
  m('subresource', RESOURCE_CHECK, ['string'], RESOURCE_CHECK, (r: CelResourceCheck, s: string) =>
    r.with({ subresource: s }),
  );
  m('namespace', RESOURCE_CHECK, ['string'], RESOURCE_CHECK, (r: CelResourceCheck, s: string) =>
    r.with({ namespace: s }),
  );
  m('name', RESOURCE_CHECK, ['string'], RESOURCE_CHECK, (r: CelResourceCheck, s: string) =>
    r.with({ name: s }),
  );
  // Selectors narrow a check in kube; Capstan's authorizers ignore them, so they keep the check.
  m('fieldSelector', RESOURCE_CHECK, ['string'], RESOURCE_CHECK, (r: CelResourceCheck) => r);
  m('labelSelector', RESOURCE_CHECK, ['string'], RESOURCE_CHECK, (r: CelResourceCheck) => r);
  m('check', PATH_CHECK, ['string'], DECISION, (p: CelPathCheck, verb: string) =>
    decide(p.authorizer, nonResourceAttributes(p.authorizer.user, verb, p.path)),
  );
  m('check', RESOURCE_CHECK, ['string'], DECISION, (r: CelResourceCheck, verb: string) =>
    decide(r.groupCheck.authorizer, {
      user: r.groupCheck.authorizer.user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: r.groupCheck.group,
      apiVersion: '*',
      resource: r.resource,
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
    }),
  );
  m('allowed', DECISION, [], 'bool', (d: CelDecision) => d.decision.allowed);
  m('reason', DECISION, [], 'string', (d: CelDecision) => d.decision.reason);
  m('errored', DECISION, [], 'bool', (d: CelDecision) => d.decision.error !== '');
  m('error', DECISION, [], 'string', (d: CelDecision) => d.decision.error);
}
