/**
 * A Job's pods as kube's job controller sees and makes them: the tracking finalizer, the
 * completion index (annotation and label), when a pod counts as failed, and the pod a Job
 * creates (template, finalizer, index annotation/label/hostname/env, generateName).
 */
import type { Job } from '../../api/types/batch-v1.js';
import type { Container, Pod } from '../../api/types/core-v1.js';
import { cloneJson } from '../../api/object.js';

/** The finalizer that holds a pod until the job controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** Annotation and label with an Indexed Job pod's index. */
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** Annotation with the failures of the pod's index so far (backoffLimitPerIndex). */
export const JOB_INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
/** Annotation with the ignored failures of the pod's index so far. */
export const JOB_INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';

/** kube's `maxGeneratedNameLength`: 63 minus the 5 random characters. */
const MAX_GENERATED_NAME_LENGTH = 58;

/** True for `completionMode: Indexed`. */
export function isIndexed(job: Job): boolean {
  return job.spec?.completionMode === 'Indexed';
}

/** The pod's completion index, or undefined when absent or malformed. */
export function completionIndex(pod: Pod): number | undefined {
  const v = pod.metadata.annotations?.[JOB_COMPLETION_INDEX] ?? pod.metadata.labels?.[JOB_COMPLETION_INDEX];
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  return Number(v);
}

/** The pod still carries the tracking finalizer. */
export function hasTrackingFinalizer(pod: Pod): boolean {
  return pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) ?? false;
}

/** Replacements wait for failed pods to be terminal (podReplacementPolicy Failed, or a podFailurePolicy). */
export function onlyReplaceFailedPods(job: Job): boolean {
  return job.spec?.podReplacementPolicy === 'Failed' || job.spec?.podFailurePolicy !== undefined;
}

/**
 * The pod counts as failed: phase Failed, or (unless replacements wait for terminal pods)
 * deleted before it succeeded, so an orphaned pod that never reaches Failed still counts.
 */
export function isPodFailed(pod: Pod, job: Job): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  return pod.metadata.deletionTimestamp !== undefined && pod.status?.phase !== 'Succeeded';
}

/** kube's generateName of a Job's pods: `<job>-` or `<job>-<index>-`, the job name cut to fit. */
export function podGenerateName(jobName: string, index: number | undefined): string {
  const suffix = index === undefined ? '-' : `-${index}-`;
  const room = MAX_GENERATED_NAME_LENGTH - suffix.length;
  return `${jobName.length > room ? jobName.slice(0, room) : jobName}${suffix}`;
}

function withIndexEnv(c: Container): Container {
  const env = c.env ?? [];
  if (env.some((e) => e.name === 'JOB_COMPLETION_INDEX')) return c;
  return {
    ...c,
    env: [
      ...env,
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX}']` } },
      },
    ],
  };
}

/**
 * The pod a Job creates, without owner reference: the template's labels, annotations and spec,
 * the tracking finalizer; for an Indexed Job the index annotation and label, the hostname
 * `<job>-<index>`, the `JOB_COMPLETION_INDEX` env var and the per-index failure counts.
 */
export function podForJob(
  job: Job,
  index: number | undefined,
  counts?: { failures: number; ignored: number },
): Pod {
  const template = job.spec?.template ?? { metadata: {} };
  const name = job.metadata.name ?? '';
  const labels = { ...(template.metadata.labels ?? {}) };
  const annotations = { ...(template.metadata.annotations ?? {}) };
  const finalizers = [...(template.metadata.finalizers ?? [])];
  if (!finalizers.includes(JOB_TRACKING_FINALIZER)) finalizers.push(JOB_TRACKING_FINALIZER);
  let spec = cloneJson(template.spec ?? { containers: [] });
  if (index !== undefined) {
    annotations[JOB_COMPLETION_INDEX] = String(index);
    labels[JOB_COMPLETION_INDEX] = String(index);
    if (job.spec?.backoffLimitPerIndex !== undefined) {
      annotations[JOB_INDEX_FAILURE_COUNT] = String(counts?.failures ?? 0);
      if ((counts?.ignored ?? 0) > 0)
        annotations[JOB_INDEX_IGNORED_FAILURE_COUNT] = String(counts?.ignored ?? 0);
    }
    spec = {
      ...spec,
      hostname: `${name}-${index}`,
      containers: (spec.containers ?? []).map(withIndexEnv),
      ...(spec.initContainers === undefined ? {} : { initContainers: spec.initContainers.map(withIndexEnv) }),
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: podGenerateName(name, index),
      namespace: job.metadata.namespace ?? 'default',
      labels,
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      finalizers,
    },
    spec,
  };
}
