/**
 * Defaults of the pod-template holders: apps/v1 (Deployment, ReplicaSet, StatefulSet,
 * DaemonSet), batch/v1 (Job, CronJob), core ReplicationController and PodTemplate, as
 * kube-apiserver's `SetDefaults_<Kind>` and generated defaulters apply them.
 */
import { isObject } from '../validation/json.js';
import { setOwn } from '../api/object.js';
import {
  defaultPointer,
  defaultString,
  eachObject,
  ensureObject,
  nonEmpty,
  objectAt,
  type JsonObject,
} from './mutate.js';
import { defaultClaimSpec, defaultPodTemplateAt } from './pod.js';
import { DAEMONSET_TEMPLATE_GENERATION } from '../api/annotations.js';

/** apps/v1 Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600. */
export function defaultDeployment(d: JsonObject): void {
  const spec = ensureObject(d, 'spec');
  if (spec === undefined) return;
  defaultPointer(spec, 'replicas', 1);
  const strategy = ensureObject(spec, 'strategy');
  if (strategy !== undefined) {
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy['type'] === 'RollingUpdate') {
      const ru = ensureObject(strategy, 'rollingUpdate');
      if (ru !== undefined) {
        defaultPointer(ru, 'maxUnavailable', '25%');
        defaultPointer(ru, 'maxSurge', '25%');
      }
    }
  }
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultPointer(spec, 'progressDeadlineSeconds', 600);
  defaultPodTemplateAt(spec);
}

/** apps/v1 ReplicaSet: replicas 1. */
export function defaultReplicaSet(rs: JsonObject): void {
  const spec = ensureObject(rs, 'spec');
  if (spec === undefined) return;
  defaultPointer(spec, 'replicas', 1);
  defaultPodTemplateAt(spec);
}

/**
 * apps/v1 DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10;
 * and the template generation annotation, which kube's conversion always writes (`"0"` when the
 * client sent none; the create and update preparations then set it).
 */
export function defaultDaemonSet(ds: JsonObject): void {
  const meta = ensureObject(ds, 'metadata');
  const annotations = meta === undefined ? undefined : ensureObject(meta, 'annotations');
  if (annotations !== undefined) defaultString(annotations, DAEMONSET_TEMPLATE_GENERATION, '0');
  const spec = ensureObject(ds, 'spec');
  if (spec === undefined) return;
  const strategy = ensureObject(spec, 'updateStrategy');
  if (strategy !== undefined) {
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy['type'] === 'RollingUpdate') {
      const ru = ensureObject(strategy, 'rollingUpdate');
      if (ru !== undefined) {
        defaultPointer(ru, 'maxUnavailable', 1);
        defaultPointer(ru, 'maxSurge', 0);
      }
    }
  }
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultPodTemplateAt(spec);
}

/**
 * apps/v1 StatefulSet: OrderedReady, RollingUpdate with partition 0 (only when kube creates the
 * rollingUpdate itself or one is given without a partition), Retain/Retain PVC retention,
 * replicas 1, revisionHistoryLimit 10, and PVC defaults on every claim template.
 */
export function defaultStatefulSet(ss: JsonObject): void {
  const spec = ensureObject(ss, 'spec');
  if (spec === undefined) return;
  defaultString(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = ensureObject(spec, 'updateStrategy');
  if (strategy !== undefined) {
    const t = strategy['type'];
    if (t === undefined || t === null || t === '') {
      strategy['type'] = 'RollingUpdate';
      defaultPointer(strategy, 'rollingUpdate', {});
    }
    const ru = objectAt(strategy, 'rollingUpdate');
    if (strategy['type'] === 'RollingUpdate' && ru !== undefined) defaultPointer(ru, 'partition', 0);
  }
  const retention = ensureObject(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention !== undefined) {
    defaultString(retention, 'whenDeleted', 'Retain');
    defaultString(retention, 'whenScaled', 'Retain');
  }
  defaultPointer(spec, 'replicas', 1);
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultPodTemplateAt(spec);
  typeClaimTemplates(spec);
  eachObject(spec, 'volumeClaimTemplates', (claim) => {
    const claimSpec = ensureObject(claim, 'spec');
    if (claimSpec !== undefined) defaultClaimSpec(claimSpec);
    const status = ensureObject(claim, 'status');
    if (status !== undefined) defaultString(status, 'phase', 'Pending');
  });
}

/**
 * Gives each of a StatefulSet spec's `volumeClaimTemplates` `apiVersion: v1` and `kind:
 * PersistentVolumeClaim` first, whatever it said: kube's apps/v1 conversion writes them on every
 * object it hands out (protobuf, which the objects are stored in, has no place for them).
 */
export function typeClaimTemplates(spec: JsonObject | undefined): void {
  const claims = spec?.['volumeClaimTemplates'];
  if (!Array.isArray(claims)) return;
  claims.forEach((claim: unknown, i) => {
    if (!isObject(claim)) return;
    const typed: JsonObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' };
    for (const key of Object.keys(claim))
      if (key !== 'apiVersion' && key !== 'kind') setOwn(typed, key, claim[key]);
    claims[i] = typed;
  });
}

/** Copies the template's labels into the object's labels when it has none (Job, RC). */
function labelsFromTemplate(o: JsonObject, templateLabels: unknown): void {
  if (!isObject(templateLabels)) return;
  const meta = ensureObject(o, 'metadata');
  if (meta !== undefined && !nonEmpty(meta, 'labels')) meta['labels'] = { ...templateLabels };
}

/**
 * batch/v1 Job: completions and parallelism 1 when both are absent, parallelism 1, backoffLimit 6
 * (2147483647 with backoffLimitPerIndex), completionMode NonIndexed, suspend false,
 * podReplacementPolicy (Failed with a podFailurePolicy, else TerminatingOrFailed),
 * manualSelector false, labels from the template, and `status: "True"` on pod-condition rules.
 */
export function defaultJob(job: JsonObject): void {
  const spec = ensureObject(job, 'spec');
  if (spec === undefined) return;
  defaultJobSpec(spec);
  defaultPointer(spec, 'manualSelector', false);
  labelsFromTemplate(job, objectAt(objectAt(spec, 'template'), 'metadata')?.['labels']);
}

function defaultJobSpec(spec: JsonObject): void {
  const absent = (k: string): boolean => spec[k] === undefined || spec[k] === null;
  if (absent('completions') && absent('parallelism')) {
    spec['completions'] = 1;
    spec['parallelism'] = 1;
  }
  defaultPointer(spec, 'parallelism', 1);
  defaultPointer(spec, 'backoffLimit', absent('backoffLimitPerIndex') ? 6 : 2147483647);
  defaultPointer(spec, 'completionMode', 'NonIndexed');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'podReplacementPolicy', absent('podFailurePolicy') ? 'TerminatingOrFailed' : 'Failed');
  eachObject(objectAt(spec, 'podFailurePolicy'), 'rules', (rule) => {
    eachObject(rule, 'onPodConditions', (pattern) => defaultString(pattern, 'status', 'True'));
  });
  defaultPodTemplateAt(spec);
}

/**
 * batch/v1 CronJob: concurrencyPolicy Allow, suspend false, history limits 3 and 1. The job
 * template gets pod-template defaults only (kube does not run the Job defaulter on it).
 */
export function defaultCronJob(cj: JsonObject): void {
  const spec = ensureObject(cj, 'spec');
  if (spec === undefined) return;
  defaultString(spec, 'concurrencyPolicy', 'Allow');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'successfulJobsHistoryLimit', 3);
  defaultPointer(spec, 'failedJobsHistoryLimit', 1);
  const jobTemplate = ensureObject(spec, 'jobTemplate');
  const jobSpec = jobTemplate === undefined ? undefined : ensureObject(jobTemplate, 'spec');
  if (jobSpec === undefined) return;
  eachObject(objectAt(jobSpec, 'podFailurePolicy'), 'rules', (rule) => {
    eachObject(rule, 'onPodConditions', (pattern) => defaultString(pattern, 'status', 'True'));
  });
  defaultPodTemplateAt(jobSpec);
}

/**
 * core/v1 ReplicationController: replicas 1; the selector and the object's labels default to
 * the template's labels when those are set. (The template is a pointer here: not created.)
 */
export function defaultReplicationController(rc: JsonObject): void {
  const spec = ensureObject(rc, 'spec');
  if (spec === undefined) return;
  const template = objectAt(spec, 'template');
  const labels = objectAt(objectAt(template, 'metadata'), 'labels');
  if (labels !== undefined) {
    if (!nonEmpty(spec, 'selector')) spec['selector'] = { ...labels };
    labelsFromTemplate(rc, labels);
  }
  defaultPointer(spec, 'replicas', 1);
  if (template !== undefined) defaultPodTemplateAt(spec);
}

/** core/v1 PodTemplate: pod-template defaults on `template`. */
export function defaultPodTemplate(pt: JsonObject): void {
  defaultPodTemplateAt(pt);
}
