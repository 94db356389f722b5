/**
 * The PodSecurity admission plugin (kube's in-tree wrapper of k8s.io/pod-security-admission):
 * validating, on CREATE and UPDATE of
 * - namespaces: the policy labels must parse (422 otherwise); raising the enforce level warns
 *   about the existing pods that violate it;
 * - pods: the namespace's enforce level refuses (403 `violates PodSecurity "<level>:<version>"`),
 *   audit records `pod-security.kubernetes.io/audit-violations`, warn adds a `Warning`;
 * - pod controllers (Deployments, Jobs, ...): the pod template gets audit and warn only.
 * Exemptions (usernames, runtime classes, namespaces) and the defaults come from the plugin's
 * `PodSecurityConfiguration` in `--admission-control-config-file`.
 */
import { forbidden, internalError, invalid } from '../../api/errors.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../../api/object.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.js';
import { KINDS, type AdmissionObjects } from '../objects.js';
import { evaluatePod, forbiddenDetail, forbiddenReason, type CheckFailure } from './checks.js';
import {
  compareLevels,
  equivalent,
  fullyPrivileged,
  LABEL_PREFIX,
  levelVersionString,
  parsePodSecurityConfig,
  policyToEvaluate,
  type LevelVersion,
  type Policy,
  type PodSecurityConfig,
} from './policy.js';
import { POD_TEMPLATE_PATHS } from '../../api/pod-templates.js';

const ENFORCE_POLICY = `${LABEL_PREFIX}enforce-policy`;
const AUDIT_VIOLATIONS = `${LABEL_PREFIX}audit-violations`;
const EXEMPT = `${LABEL_PREFIX}exempt`;

/** Pod subresources the plugin ignores (kube's `ignoredPodSubresources`). */
const IGNORED_POD_SUBRESOURCES = new Set([
  'exec',
  'attach',
  'binding',
  'eviction',
  'log',
  'portforward',
  'proxy',
  'status',
]);

/** How many existing pods a namespace label change checks at most (kube's default). */
const MAX_PODS_TO_CHECK = 3000;

const kindKey = (a: AdmissionAttributes): string => `${a.type.group}/${a.type.kind}`;

function labelsOf(o: KubeObject | undefined): Readonly<Record<string, string>> | undefined {
  return o?.metadata.labels as Readonly<Record<string, string>> | undefined;
}

/** kube's `isSignificantPodUpdate`: only container images (and new ephemeral containers) count. */
function significantPodUpdate(pod: JsonObject, old: JsonObject): boolean {
  const list = (p: JsonObject, k: string): JsonObject[] => {
    const spec = isJsonObject(p['spec']) ? p['spec'] : {};
    return Array.isArray(spec[k]) ? (spec[k] as JsonObject[]) : [];
  };
  for (const k of ['containers', 'initContainers']) {
    const a = list(pod, k);
    const b = list(old, k);
    if (a.length !== b.length) return true;
    if (a.some((c, i) => c['image'] !== b[i]?.['image'])) return true;
  }
  const oldEphemeral = list(old, 'ephemeralContainers');
  for (const c of list(pod, 'ephemeralContainers')) {
    const o = oldEphemeral.find((x) => x['name'] === c['name']);
    if (o === undefined || o['image'] !== c['image']) return true;
  }
  return false;
}

/** The PodSecurity plugin. @throws Error when `config` is not a valid PodSecurityConfiguration */
export function podSecurity(objects: AdmissionObjects, config: JsonObject | undefined): AdmissionPlugin {
  const cfg: PodSecurityConfig = parsePodSecurityConfig(config);
  const ex = cfg.exemptions;
  const exemptNamespace = (ns: string): boolean => ns !== '' && ex.namespaces.includes(ns);
  const exemptUser = (name: string): boolean => name !== '' && ex.usernames.includes(name);
  const exemptRuntimeClass = (spec: JsonObject): boolean => {
    const rc = spec['runtimeClassName'];
    return typeof rc === 'string' && rc !== '' && ex.runtimeClasses.includes(rc);
  };

  /** kube's `EvaluatePod`: enforce (pods only), audit, warn. */
  const evaluate = (
    a: AdmissionAttributes,
    policy: Policy,
    labelErrors: string | undefined,
    meta: JsonObject,
    spec: JsonObject,
    enforce: boolean,
  ): void => {
    if (exemptRuntimeClass(spec)) {
      a.annotate(EXEMPT, 'runtimeClass');
      return;
    }
    if (labelErrors !== undefined)
      a.annotate(`${LABEL_PREFIX}error`, `Failed to parse policy: ${labelErrors}`);
    const cache = new Map<string, CheckFailure[]>();
    const run = (lv: LevelVersion): CheckFailure[] => {
      const key = levelVersionString(lv);
      let r = cache.get(key);
      if (r === undefined) {
        r = evaluatePod(lv.level, lv.minor, meta, spec);
        cache.set(key, r);
      }
      return r;
    };
    let refusal: string | undefined;
    if (enforce) {
      a.annotate(ENFORCE_POLICY, levelVersionString(policy.enforce));
      const r = run(policy.enforce);
      if (r.length > 0)
        refusal = `violates PodSecurity "${levelVersionString(policy.enforce)}": ${forbiddenDetail(r)}`;
    }
    const audit = run(policy.audit);
    if (audit.length > 0) {
      a.annotate(
        AUDIT_VIOLATIONS,
        `would violate PodSecurity "${levelVersionString(policy.audit)}": ${forbiddenDetail(audit)}`,
      );
    }
    if (refusal !== undefined) {
      const name = a.name !== '' ? a.name : (a.object?.metadata.name ?? '');
      const resource = a.type.group === '' ? a.type.plural : `${a.type.plural}.${a.type.group}`;
      throw forbidden(`${resource}${name === '' ? '' : ` "${name}"`} is forbidden: ${refusal}`, {
        name,
        ...(a.type.group === '' ? {} : { group: a.type.group }),
        kind: a.type.plural,
      });
    }
    const warn = run(policy.warn);
    if (warn.length > 0) {
      a.warn(`would violate PodSecurity "${levelVersionString(policy.warn)}": ${forbiddenDetail(warn)}`);
    }
  };

  const namespacePolicy = async (
    a: AdmissionAttributes,
  ): Promise<{ policy: Policy; errors: string | undefined } | undefined> => {
    const ns = await objects.get(KINDS.namespace, undefined, a.namespace);
    if (ns === undefined) return undefined;
    const { policy, errors } = policyToEvaluate(labelsOf(ns), cfg.defaults);
    return {
      policy,
      errors: errors.length === 0 ? undefined : errors.map((e) => `${e.field}: ${e.message}`).join(', '),
    };
  };

  /** kube's `exemptNamespaceWarning`. */
  const exemptNamespaceWarning = (
    name: string,
    p: Policy,
    labels: Readonly<Record<string, string>>,
  ): string => {
    const d = cfg.defaults;
    if (
      fullyPrivileged(p) ||
      (equivalent(p.enforce, d.enforce) && equivalent(p.audit, d.audit) && equivalent(p.warn, d.warn))
    ) {
      return '';
    }
    const parts: string[] = [];
    for (const mode of ['enforce', 'audit', 'warn'] as const) {
      const has =
        labels[`${LABEL_PREFIX}${mode}`] !== undefined ||
        labels[`${LABEL_PREFIX}${mode}-version`] !== undefined;
      if (p[mode].level !== 'privileged' && has) parts.push(`${mode}=${levelVersionString(p[mode])}`);
    }
    return `namespace "${name}" is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
  };

  /** kube's `EvaluatePodsInNamespace`: warnings about the pods the new enforce level refuses. */
  const checkExistingPods = async (
    a: AdmissionAttributes,
    namespace: string,
    enforce: LevelVersion,
  ): Promise<void> => {
    let pods: KubeObject[];
    try {
      pods = await objects.list(KINDS.pod, namespace);
    } catch {
      a.warn('failed to list pods while checking new PodSecurity enforce level');
      return;
    }
    // Pods of one controller after the first go last.
    const first: KubeObject[] = [];
    const dupes: KubeObject[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      const spec = isJsonObject(pod['spec']) ? pod['spec'] : {};
      if (exemptRuntimeClass(spec)) continue;
      const owner = (
        pod.metadata.ownerReferences as { controller?: boolean; uid?: string }[] | undefined
      )?.find((r) => r.controller === true);
      if (owner === undefined) first.push(pod);
      else if (seen.has(owner.uid ?? '')) dupes.push(pod);
      else {
        seen.add(owner.uid ?? '');
        first.push(pod);
      }
    }
    const ordered = [...first, ...dupes];
    const total = ordered.length;
    const checked = ordered.slice(0, MAX_PODS_TO_CHECK);
    const byWarning = new Map<string, { name: string; count: number }>();
    const order: string[] = [];
    for (const pod of checked) {
      const r = evaluatePod(
        enforce.level,
        enforce.minor,
        pod.metadata,
        isJsonObject(pod['spec']) ? pod['spec'] : {},
      );
      if (r.length === 0) continue;
      const w = forbiddenReason(r);
      const c = byWarning.get(w);
      if (c === undefined) {
        byWarning.set(w, { name: pod.metadata.name ?? '', count: 1 });
        order.push(w);
      } else {
        c.count++;
        if ((pod.metadata.name ?? '') < c.name) c.name = pod.metadata.name ?? '';
      }
    }
    if (checked.length < total) {
      a.warn(
        `new PodSecurity enforce level only checked against the first ${checked.length} of ${total} existing pods`,
      );
    }
    if (order.length > 0) {
      a.warn(
        `existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`,
      );
    }
    const decorated = order.map((w) => {
      const c = byWarning.get(w) as { name: string; count: number };
      if (c.count === 1) return `${c.name}: ${w}`;
      if (c.count === 2) return `${c.name} (and 1 other pod): ${w}`;
      return `${c.name} (and ${c.count - 1} other pods): ${w}`;
    });
    for (const w of decorated.sort()) a.warn(w);
  };

  const validateNamespace = async (a: AdmissionAttributes): Promise<void> => {
    const ns = a.object;
    if (ns === undefined || a.subresource !== undefined) return;
    const labels = labelsOf(ns) ?? {};
    const nsName = ns.metadata.name ?? '';
    const { policy, errors } = policyToEvaluate(labels, cfg.defaults);
    const refuse = (): never => {
      throw invalid(
        'Namespace',
        '',
        nsName,
        errors.map((e) => ({ field: e.field, message: e.message })),
      );
    };
    if (a.operation === 'CREATE') {
      if (errors.length > 0) refuse();
      if (exemptNamespace(nsName)) {
        const w = exemptNamespaceWarning(nsName, policy, labels);
        if (w !== '') a.warn(w);
      }
      return;
    }
    const oldLabels = labelsOf(a.oldObject);
    const old = policyToEvaluate(oldLabels, cfg.defaults);
    if (
      errors.length > 0 &&
      (old.errors.length === 0 || JSON.stringify(errors) !== JSON.stringify(old.errors))
    )
      refuse();
    const n = policy.enforce;
    const o = old.policy.enforce;
    if (n.level === o.level && n.minor === o.minor) return;
    if (n.level === 'privileged') return;
    if (n.minor === o.minor && compareLevels(n.level, o.level) < 1) return;
    if (exemptNamespace(nsName)) {
      const w = exemptNamespaceWarning(nsName, policy, labels);
      if (w !== '') a.warn(w);
      return;
    }
    await checkExistingPods(a, nsName, n);
  };

  const validatePod = async (a: AdmissionAttributes): Promise<void> => {
    if (a.subresource !== undefined && IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (exemptNamespace(a.namespace)) return a.annotate(EXEMPT, 'namespace');
    if (exemptUser(a.user.name)) return a.annotate(EXEMPT, 'user');
    const ns = await namespacePolicy(a);
    if (ns === undefined) throw internalError(`failed to lookup namespace "${a.namespace}"`);
    if (ns.errors === undefined && fullyPrivileged(ns.policy)) {
      a.annotate(ENFORCE_POLICY, 'privileged:latest');
      return;
    }
    const pod = a.object;
    if (pod === undefined) return;
    if (a.operation === 'UPDATE' && a.oldObject !== undefined && !significantPodUpdate(pod, a.oldObject))
      return;
    evaluate(a, ns.policy, ns.errors, pod.metadata, isJsonObject(pod['spec']) ? pod['spec'] : {}, true);
  };

  const validateController = async (a: AdmissionAttributes, path: readonly string[]): Promise<void> => {
    if (a.subresource !== undefined) return;
    if (exemptNamespace(a.namespace)) return a.annotate(EXEMPT, 'namespace');
    if (exemptUser(a.user.name)) return a.annotate(EXEMPT, 'user');
    const ns = await namespacePolicy(a);
    if (ns === undefined) {
      a.annotate(`${LABEL_PREFIX}error`, `failed to lookup namespace "${a.namespace}"`);
      return;
    }
    if (
      ns.errors === undefined &&
      ns.policy.audit.level === 'privileged' &&
      ns.policy.warn.level === 'privileged'
    )
      return;
    let template: unknown = a.object;
    for (const k of path) template = isJsonObject(template) ? template[k] : undefined;
    if (!isJsonObject(template)) return;
    const meta = isJsonObject(template['metadata']) ? template['metadata'] : {};
    const spec = isJsonObject(template['spec']) ? template['spec'] : {};
    evaluate(a, ns.policy, ns.errors, meta, spec, false);
  };

  return {
    name: 'PodSecurity',
    handles: (a) =>
      (a.operation === 'CREATE' || a.operation === 'UPDATE') &&
      (kindKey(a) === '/Namespace' || kindKey(a) === '/Pod' || POD_TEMPLATE_PATHS.has(kindKey(a))),
    validate: async (a) => {
      const key = kindKey(a);
      if (key === '/Namespace') return validateNamespace(a);
      if (key === '/Pod') return validatePod(a);
      const path = POD_TEMPLATE_PATHS.get(key);
      if (path !== undefined) return validateController(a, path);
    },
  };
}
