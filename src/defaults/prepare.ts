/**
 * The kind-specific content kube-apiserver's REST strategies set between defaulting and
 * validation (`PrepareForCreate`/`PrepareForUpdate`, and the Service storage's IP handling):
 * what a client sees that neither it nor the defaulters wrote. Generic bookkeeping (uid,
 * creationTimestamp, generation, resourceVersion, keeping status on update) is the handler's.
 */
import type { FieldError } from '../validation/field-error.js';
import { isObject } from '../validation/json.js';
import { JOB_LABELS } from '../validation/batch.js';
import { podQOSClass } from '../validation/core/resources.js';
import { semanticEqual } from '../validation/json.js';
import { dropDisabledFields } from './disabled-fields.js';
import { applyAppArmorVersionSkew, mutatePodAffinity } from './pod-create.js';
import { ensureObject, nonEmpty, objectAt, type JsonObject } from './mutate.js';
import { prepareServiceIPs, type IPFamily } from './service-ip.js';
import { DAEMONSET_TEMPLATE_GENERATION } from '../api/annotations.js';
import type { UserInfo } from '../api/user.js';

/** Cluster facts some kinds need while preparing. */
export interface PrepareOptions {
  /** Families of the service cluster IP range, primary first; default `['IPv4']`. */
  readonly serviceIPFamilies?: readonly IPFamily[];
  /** The requester of a create (kube's user from the request context), where a kind records it. */
  readonly user?: UserInfo;
  /** Where the preparation's warnings go (kube's `AddWarning` during `PrepareForCreate`). */
  readonly warnings?: string[];
}

function preparePod(pod: JsonObject, warnings: string[] | undefined): void {
  const spec = objectAt(pod, 'spec') ?? {};
  const status: JsonObject = { phase: 'Pending', qosClass: podQOSClass(spec) };
  if (nonEmpty(spec, 'schedulingGates')) {
    status['conditions'] = [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
      },
    ];
  }
  pod['status'] = status;
  mutatePodAffinity(pod);
  applyAppArmorVersionSkew(pod, (message) => warnings?.push(message));
}

function prepareNamespace(ns: JsonObject): void {
  const spec = ensureObject(ns, 'spec');
  if (spec !== undefined) {
    const finalizers: unknown[] = Array.isArray(spec['finalizers']) ? (spec['finalizers'] as unknown[]) : [];
    if (!finalizers.includes('kubernetes')) spec['finalizers'] = [...finalizers, 'kubernetes'];
  }
  ns['status'] = { phase: 'Active' };
  const meta = objectAt(ns, 'metadata');
  const name = meta?.['name'];
  if (meta !== undefined && typeof name === 'string' && name !== '') {
    const labels = ensureObject(meta, 'labels');
    if (labels !== undefined) labels['kubernetes.io/metadata.name'] = name;
  }
}

/**
 * kube's Job `generateSelector`: unless `manualSelector` is true, the template gets the
 * job-name and controller-uid labels (legacy and `batch.kubernetes.io/` forms) and the selector
 * matches the uid. The Job's own labels then follow its template's, as kube's defaulting on
 * read makes them appear.
 */
function prepareJob(job: JsonObject): void {
  const spec = ensureObject(job, 'spec');
  const meta = objectAt(job, 'metadata');
  if (spec === undefined || spec['manualSelector'] === true) return;
  const name = typeof meta?.['name'] === 'string' ? meta['name'] : '';
  const uid = typeof meta?.['uid'] === 'string' ? meta['uid'] : '';
  const template = ensureObject(spec, 'template');
  const tmeta = template === undefined ? undefined : ensureObject(template, 'metadata');
  const labels = tmeta === undefined ? undefined : ensureObject(tmeta, 'labels');
  if (labels === undefined) return;
  for (const k of [JOB_LABELS.legacyJobName, JOB_LABELS.jobName]) if (!(k in labels)) labels[k] = name;
  for (const k of [JOB_LABELS.legacyControllerUid, JOB_LABELS.controllerUid])
    if (!(k in labels)) labels[k] = uid;
  const selector = ensureObject(spec, 'selector');
  const matchLabels = selector === undefined ? undefined : ensureObject(selector, 'matchLabels');
  if (matchLabels !== undefined && !(JOB_LABELS.controllerUid in matchLabels))
    matchLabels[JOB_LABELS.controllerUid] = uid;
  if (meta !== undefined && !nonEmpty(meta, 'labels')) meta['labels'] = { ...labels };
}

/**
 * kube's CSR strategy: whatever the client wrote as the requester is replaced by who it is
 * (username, uid, groups, extra), so the approver and the signer can trust those fields.
 */
function prepareCSR(csr: JsonObject, user: UserInfo | undefined): void {
  const spec = ensureObject(csr, 'spec');
  if (spec === undefined) return;
  delete spec['username'];
  delete spec['uid'];
  delete spec['groups'];
  delete spec['extra'];
  if (user === undefined) return;
  if (user.name !== '') spec['username'] = user.name;
  if (user.uid !== '') spec['uid'] = user.uid;
  if (user.groups.length > 0) spec['groups'] = [...user.groups];
  const extra = Object.entries(user.extra);
  if (extra.length > 0) spec['extra'] = Object.fromEntries(extra.map(([k, v]) => [k, [...v]]));
}

function prepareCRD(crd: JsonObject): void {
  const versions = Array.isArray(objectAt(crd, 'spec')?.['versions'])
    ? (objectAt(crd, 'spec')?.['versions'] as unknown[])
    : [];
  const storage = versions.filter(isObject).find((v) => v['storage'] === true);
  crd['status'] = {
    acceptedNames: { kind: '', plural: '' },
    storedVersions: storage !== undefined && typeof storage['name'] === 'string' ? [storage['name']] : [],
  };
}

/**
 * Applies the create-time content of kube's strategies for `group`/`kind` to a defaulted
 * object whose uid and name are already set (kube fills them before `PrepareForCreate`):
 *
 * - Pod, and the kinds with a pod template: the fields of features v1.33 turns off dropped
 *   (disabled-fields.ts).
 * - Pod: `status` = phase Pending, its QoS class, and a SchedulingGated condition when gated;
 *   affinity terms' label keys merged into their selectors, AppArmor fields and annotations
 *   synced (pod-create.ts).
 * - Namespace: the `kubernetes` finalizer in `spec.finalizers`, phase Active, the
 *   `kubernetes.io/metadata.name` label (also for generated names).
 * - Service: `clusterIPs` from `clusterIP`, `ipFamilyPolicy` and `ipFamilies` (the allocator
 *   then assigns the IPs and node ports).
 * - PersistentVolumeClaim: `status` = phase Pending; PersistentVolume: phase Pending and its
 *   `lastPhaseTransitionTime`.
 * - Job: the generated selector and template labels (needs `metadata.uid`).
 * - DaemonSet: the `deprecated.daemonset.template.generation` annotation, at least `"1"`.
 * - PriorityClass: `metadata.generation` 1.
 * - CustomResourceDefinition: `status.storedVersions` = the storage version.
 * - CertificateSigningRequest: `spec.username`, `uid`, `groups` and `extra` = the requester
 *   (`opts.user`), whatever the client sent.
 *
 * @returns Errors found on the way (a Service asking for a family the cluster lacks); report
 *   them as a 422 like validation errors.
 */
export function prepareForCreate(
  group: string,
  kind: string,
  obj: Record<string, unknown>,
  opts: PrepareOptions = {},
): FieldError[] {
  dropDisabledFields(group, kind, obj, undefined);
  switch (`${group}/${kind}`) {
    case '/Pod':
      preparePod(obj, opts.warnings);
      break;
    case '/Namespace':
      prepareNamespace(obj);
      break;
    case '/Service':
      return prepareServiceIPs(obj, undefined, opts.serviceIPFamilies ?? ['IPv4']);
    case '/PersistentVolumeClaim':
      // The status was dropped; kube's read-back defaulting gives phase Pending.
      obj['status'] = { phase: 'Pending' };
      break;
    case '/PersistentVolume':
      obj['status'] = {
        phase: 'Pending',
        lastPhaseTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
      break;
    case 'batch/Job':
      prepareJob(obj);
      break;
    case 'apps/DaemonSet': {
      // kube's templateGeneration: what the client's annotation says, at least 1.
      const meta = ensureObject(obj, 'metadata');
      const annotations = meta === undefined ? undefined : ensureObject(meta, 'annotations');
      if (annotations !== undefined) {
        const given = Number(annotations[DAEMONSET_TEMPLATE_GENERATION]);
        annotations[DAEMONSET_TEMPLATE_GENERATION] = String(
          Number.isSafeInteger(given) && given >= 1 ? given : 1,
        );
      }
      break;
    }
    case 'scheduling.k8s.io/PriorityClass': {
      // Set once, never bumped (kube's PriorityClass strategy).
      const meta = ensureObject(obj, 'metadata');
      if (meta !== undefined) meta['generation'] = 1;
      break;
    }
    case 'apiextensions.k8s.io/CustomResourceDefinition':
      prepareCRD(obj);
      break;
    case 'certificates.k8s.io/CertificateSigningRequest':
      prepareCSR(obj, opts.user);
      break;
    default:
      break;
  }
  return [];
}

/**
 * Applies the update-time content of kube's strategies, given the stored object:
 *
 * - Pod, and the kinds with a pod template: the fields of features v1.33 turns off dropped,
 *   unless the stored object uses them (disabled-fields.ts).
 * - Namespace: `spec.finalizers` are kept from `old` (only the finalize subresource changes them).
 * - Service: allocated IPs, node ports and health-check port carried over when omitted; IP
 *   families re-inferred (the old policy is kept when the update omits it).
 * - DaemonSet: the template-generation annotation goes up by one when the template changed.
 * - CertificateSigningRequest: the spec is kept from `old` (it never changes after create).
 * - EndpointSlice: `metadata.generation` goes up by one when the labels changed.
 *
 * @returns Errors found on the way, as for `prepareForCreate`.
 */
export function prepareForUpdate(
  group: string,
  kind: string,
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
  opts: PrepareOptions = {},
): FieldError[] {
  dropDisabledFields(group, kind, obj, old);
  switch (`${group}/${kind}`) {
    case '/Namespace': {
      const spec = ensureObject(obj, 'spec');
      const oldFinalizers = objectAt(old, 'spec')?.['finalizers'];
      if (spec !== undefined) {
        if (oldFinalizers === undefined) delete spec['finalizers'];
        else spec['finalizers'] = oldFinalizers;
      }
      break;
    }
    case '/Service':
      return prepareServiceIPs(obj, old, opts.serviceIPFamilies ?? ['IPv4']);
    case 'apps/DaemonSet': {
      const oldGen = Number(
        objectAt(objectAt(old, 'metadata'), 'annotations')?.[DAEMONSET_TEMPLATE_GENERATION] ?? '1',
      );
      const changed = !semanticEqual(
        objectAt(obj, 'spec')?.['template'],
        objectAt(old, 'spec')?.['template'],
      );
      const meta = ensureObject(obj, 'metadata');
      const annotations = meta === undefined ? undefined : ensureObject(meta, 'annotations');
      if (annotations !== undefined)
        annotations[DAEMONSET_TEMPLATE_GENERATION] = String(
          (Number.isFinite(oldGen) ? oldGen : 1) + (changed ? 1 : 0),
        );
      break;
    }
    case 'certificates.k8s.io/CertificateSigningRequest':
      if (old['spec'] !== undefined) obj['spec'] = structuredClone(old['spec']);
      break;
    case 'discovery.k8s.io/EndpointSlice': {
      // Its generation also counts label changes (the rest is the kind's generation tracking).
      const meta = objectAt(obj, 'metadata');
      const oldMeta = objectAt(old, 'metadata');
      if (meta !== undefined && !semanticEqual(meta['labels'] ?? {}, oldMeta?.['labels'] ?? {})) {
        const generation = oldMeta?.['generation'];
        meta['generation'] = (typeof generation === 'number' ? generation : 0) + 1;
      }
      break;
    }
    default:
      break;
  }
  return [];
}
