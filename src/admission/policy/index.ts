/**
 * The ValidatingAdmissionPolicy plugin (kube's name): the policies and bindings of
 * admissionregistration.k8s.io/v1 kept by informers on the store, each binding's policy run on
 * the requests both select, with its params (`paramKind` + `paramRef` by name or selector), and
 * the outcome per the binding's `validationActions`: Deny refuses (kube's 422 Invalid unless a
 * validation's `reason` says otherwise), Warn adds a Warning header, Audit an audit annotation.
 * Build once per server with {@link validatingAdmissionPolicy}, put `plugin` in the chain, and
 * `stop()` on close.
 */
import type { Store } from '../../../storage/interface.js';
import { ApiError, internalError, REASON_CODES, type StatusReason } from '../../api/errors.js';
import type { KubeObject } from '../../api/object.js';
import type { Registry } from '../../registry/types.js';
import { selectorMatches } from '../../validation/meta.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.js';
import { admissionForbidden } from '../webhook/errors.js';
import { cachedOrStored, Informer, syncedWithin } from '../webhook/informer.js';
import { isExempt } from '../webhook/matching.js';
import { admissionRequest } from '../webhook/review.js';
import { asType } from '../webhook/selection.js';
import type { CelAuthorize } from '../../cel/authz.js';
import { celActivation, celAuthorizer, ExpressionCache } from './cel.js';
import { evaluatePolicy, type Decision } from './evaluate.js';
import { matchResources, type MatchDeps } from './matching.js';
import { bindingOf, policyOf, type BindingSpec, type PolicySpec } from './spec.js';
import { startStatusWriter } from './status.js';
import { typeCheckingWarnings } from './type-checking.js';
import type { SchemaSet } from '../../registry/schema.js';

/** What the plugin is built from. */
export interface PolicyAdmissionDeps {
  /** The resource layer's store, or a function giving it (called at first use). */
  readonly store: Store | (() => Store);
  readonly registry: Registry;
  readonly onError?: (message: string, err: unknown) => void;
  /** How long a request waits for the first list of policies and bindings (default 10 s). */
  readonly readyTimeoutMs?: number;
  /**
   * The server's authorizer behind the `authorizer` CEL variable (asked for the requesting
   * user); undefined: every check is allowed.
   */
  readonly authorize?: CelAuthorize;
  /** The built-in kinds' schemas, for type checking policies against the kinds they match. */
  readonly schemas?: () => SchemaSet;
}

/** The plugin and its lifecycle. */
export interface PolicyAdmission {
  readonly plugin: AdmissionPlugin;
  /** Starts the informers (and the status writer of type checking). */
  start(): void;
  stop(): void;
}

/** One denial with its policy and binding. */
interface Denial {
  readonly policy: string;
  readonly binding: string;
  readonly decision: Decision;
}

function lazyStore(get: () => Store): Pick<Store, 'get' | 'range' | 'watch' | 'update'> {
  return {
    get: (key, options) => get().get(key, options),
    range: (span, options) => get().range(span, options),
    watch: (span, options) => get().watch(span, options),
    update: (key, value, options) => get().update(key, value, options),
  };
}

/** Builds the plugin (nothing runs until `start()` or the first request). */
export function validatingAdmissionPolicy(deps: PolicyAdmissionDeps): PolicyAdmission {
  const onError = deps.onError ?? (() => undefined);
  const given = deps.store;
  const store = lazyStore(typeof given === 'function' ? given : () => given);
  const informers = new Map<string, Informer>();
  const informerAt = (prefix: string, kind: string): Informer => {
    let i = informers.get(prefix);
    if (i === undefined) {
      i = new Informer(store, prefix, (err) => onError(`admission policies: watch of ${kind} failed`, err));
      informers.set(prefix, i);
    }
    return i;
  };
  const prefixOf = (group: string, version: string, kind: string): string | undefined => {
    const t = deps.registry.byKind(group, version, kind);
    return t === undefined ? undefined : `/${t.storageResource}/`;
  };
  const must = (group: string, version: string, kind: string): Informer => {
    const p = prefixOf(group, version, kind);
    if (p === undefined) throw new Error(`the registry serves no ${group}/${version} ${kind}`);
    return informerAt(p, kind);
  };
  const policies = must('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy');
  const bindings = must('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicyBinding');
  const namespaces = must('', 'v1', 'Namespace');
  const nsPrefix = prefixOf('', 'v1', 'Namespace') ?? '/namespaces/';
  const cache = new ExpressionCache();
  // Each stored version of a policy or binding is parsed once (the informers replace an object
  // on every change), so its scopes and programs are worked out once, not per request.
  const parsedPolicies = new WeakMap<KubeObject, PolicySpec>();
  const parsedBindings = new WeakMap<KubeObject, BindingSpec>();
  const readyTimeoutMs = deps.readyTimeoutMs ?? 10_000;

  const synced = (i: Informer): Promise<boolean> => syncedWithin(i, readyTimeoutMs);
  const namespaceObject = async (name: string): Promise<KubeObject | undefined> => {
    if (!(await synced(namespaces)))
      throw internalError('admission policies: the Namespace informer has not synced');
    return cachedOrStored(namespaces, store, `${nsPrefix}${name}`);
  };
  const labelsOfNamespace = async (name: string): Promise<Readonly<Record<string, string>> | undefined> => {
    const ns = await namespaceObject(name);
    return ns === undefined ? undefined : (ns.metadata.labels ?? {});
  };
  const matchDeps: MatchDeps = { registry: deps.registry, namespaceLabels: labelsOfNamespace };

  /** The params of a binding: objects, `[]` when none (per parameterNotFoundAction), or an error message. */
  const paramsOf = async (
    policy: PolicySpec,
    binding: BindingSpec,
    attrs: AdmissionAttributes,
  ): Promise<{ readonly params: (KubeObject | null)[] } | { readonly error: string }> => {
    const kind = policy.paramKind;
    if (kind === undefined) return { params: [null] };
    const slash = kind.apiVersion.indexOf('/');
    const group = slash === -1 ? '' : kind.apiVersion.slice(0, slash);
    const version = slash === -1 ? kind.apiVersion : kind.apiVersion.slice(slash + 1);
    const type = deps.registry.byKind(group, version, kind.kind);
    if (type === undefined) {
      return {
        error: `failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`,
      };
    }
    const ref = binding.paramRef;
    if (ref === undefined) {
      return { error: `policy ${policy.name} has a paramKind but binding ${binding.name} has no paramRef` };
    }
    const informer = informerAt(`/${type.storageResource}/`, type.kind);
    if (!(await synced(informer)))
      return { error: `paramKind kind \`${type.kind}\` not yet synced to use for admission` };
    let namespace = '';
    if (type.namespaced) {
      namespace = ref.namespace !== '' ? ref.namespace : attrs.namespace;
      if (namespace === '') {
        return {
          error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
        };
      }
    }
    const prefix = `/${type.storageResource}/${namespace === '' ? '' : `${namespace}/`}`;
    let found: KubeObject[];
    if (ref.name !== '') {
      const obj = informer.get(`${prefix}${ref.name}`);
      found = obj === undefined ? [] : [obj];
    } else {
      const selector = ref.selector ?? {};
      found = [...informer.values()].filter(
        (o) =>
          (o.metadata.namespace ?? '') === namespace &&
          selectorMatches(selector, new Map(Object.entries(o.metadata.labels ?? {}))),
      );
      found.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    }
    if (found.length === 0 && ref.parameterNotFoundAction === 'Deny') {
      return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
    }
    return { params: found };
  };

  const validate = async (attrs: AdmissionAttributes): Promise<void> => {
    if (!(await synced(policies)) || !(await synced(bindings))) {
      throw admissionForbidden(attrs, 'not yet ready to handle request');
    }
    const byName = new Map<string, PolicySpec>();
    for (const p of policies.values()) byName.set(p.metadata.name ?? '', parsed(parsedPolicies, p, policyOf));
    const all = [...bindings.values()]
      .map((b) => parsed(parsedBindings, b, bindingOf))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const denials: Denial[] = [];
    for (const binding of all) {
      const policy = byName.get(binding.policyName);
      if (policy === undefined) continue;
      const type = await matchResources(matchDeps, policy.matchConstraints, attrs);
      if (type === undefined) continue;
      if (binding.matchResources !== undefined) {
        if ((await matchResources(matchDeps, binding.matchResources, attrs)) === undefined) continue;
      }
      const deny = (decision: Decision): void => {
        if (decision.error && policy.failurePolicy === 'Ignore') return;
        act(attrs, policy, binding, decision, denials);
      };
      const params = await paramsOf(policy, binding, attrs);
      if ('error' in params) {
        deny({ message: params.error, reason: '', error: true, index: -1 });
        continue;
      }
      const object = asType(attrs.object, type);
      const oldObject = asType(attrs.oldObject, type);
      const nsObject =
        attrs.namespace === '' ? undefined : await namespaceObject(attrs.namespace).catch(() => undefined);
      const authorizer = celAuthorizer(attrs.user, deps.authorize, {
        group: attrs.type.group,
        resource: attrs.type.plural,
        subresource: attrs.subresource ?? '',
        namespace: attrs.namespace,
        name: attrs.name,
      });
      // The request's values are converted to CEL once per binding, each param on its own.
      const base = celActivation({
        authorizer,
        object: attrs.operation === 'DELETE' ? null : object,
        oldObject: attrs.operation === 'CREATE' ? null : oldObject,
        request: admissionRequest('', attrs, type, object, oldObject),
        namespaceObject: nsObject,
      });
      for (const param of params.params) {
        const activation = { ...base, ...celActivation({ params: param }) };
        const result = await evaluatePolicy(cache, policy, activation);
        for (const [key, value] of result.annotations) attrs.annotate(`${policy.name}/${key}`, value);
        for (const d of result.decisions) deny(d);
      }
    }
    const first = denials[0];
    if (first !== undefined) throw denialError(attrs, first);
  };

  const schemas = deps.schemas;
  const status = startStatusWriter({
    informer: policies,
    store,
    cache,
    onError,
    ...(schemas === undefined
      ? {}
      : { typeCheck: (p: PolicySpec) => typeCheckingWarnings(cache, p, deps.registry, schemas()) }),
  });
  return {
    plugin: {
      name: 'ValidatingAdmissionPolicy',
      handles: (attrs) => !isExempt(attrs) && (!bindings.synced || bindings.values().next().done !== true),
      validate,
    },
    start: () => {
      policies.start();
      bindings.start();
      status.start();
    },
    stop: () => {
      status.stop();
      for (const i of informers.values()) i.close();
    },
  };
}

/** `parse(obj)`, kept in `memo` while `obj` lives. */
function parsed<T>(memo: WeakMap<KubeObject, T>, obj: KubeObject, parse: (o: KubeObject) => T): T {
  let v = memo.get(obj);
  if (v === undefined) {
    v = parse(obj);
    memo.set(obj, v);
  }
  return v;
}

/** Applies a binding's validationActions to one failed decision. */
function act(
  attrs: AdmissionAttributes,
  policy: PolicySpec,
  binding: BindingSpec,
  decision: Decision,
  denials: Denial[],
): void {
  for (const action of binding.validationActions) {
    if (action === 'Deny') denials.push({ policy: policy.name, binding: binding.name, decision });
    else if (action === 'Warn') {
      attrs.warn(
        `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${decision.message}`,
      );
    } else {
      attrs.annotate(
        'validation.policy.admission.k8s.io/validation_failure',
        JSON.stringify([
          {
            message: decision.message,
            policy: policy.name,
            binding: binding.name,
            expressionIndex: decision.index,
            validationActions: binding.validationActions,
          },
        ]),
      );
    }
  }
}

/** kube's denial: admission's Forbidden wording, with the decision's reason and its code. */
function denialError(attrs: AdmissionAttributes, d: Denial): ApiError {
  const message = `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.decision.message}`;
  const base = admissionForbidden(attrs, message);
  const reason = (d.decision.reason === '' ? 'Invalid' : d.decision.reason) as StatusReason;
  const code = reason in REASON_CODES ? REASON_CODES[reason] : 422;
  return new ApiError(reason, base.message, { ...base.details, causes: [{ message }] }, { code });
}
