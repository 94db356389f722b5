/**
 * The objects the cluster bench creates: a Deployment and one-pod Jobs of pause-like pods with
 * small requests, so that nothing but the control plane decides how fast they run.
 */
import type { Deployment } from '../../api/types/apps-v1.js';
import type { Job } from '../../api/types/batch-v1.js';
import type { Pod } from '../../api/types/core-v1.js';

/** The Deployment's name and its pods' `app` label. */
export const DEPLOYMENT = 'bench';
/** Where the Deployment runs, and where the Jobs run. */
export const DEPLOY_NAMESPACE = 'bench-deploy';
export const JOBS_NAMESPACE = 'bench-jobs';
/**
 * A simulated container's lifetime: Capstan's simulated nodes end it at once (kwok's default
 * `pod-complete` stage ends a Job's pods at once too, and ignores the annotation).
 */
const COMPLETE_AT_ONCE = { 'sim.capstan.dev/complete-after': '0s' };

function pauseSpec(restartPolicy: 'Always' | 'Never'): NonNullable<Pod['spec']> {
  return {
    containers: [
      {
        name: 'pause',
        image: 'registry.k8s.io/pause:3.10',
        resources: { requests: { cpu: '10m', memory: '16Mi' } },
      },
    ],
    restartPolicy,
    automountServiceAccountToken: false,
  };
}

/** The Deployment, `replicas` pods, kube's default RollingUpdate strategy. */
export function deploymentBody(replicas: number): string {
  const d: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: DEPLOYMENT },
    spec: {
      replicas,
      selector: { matchLabels: { app: DEPLOYMENT } },
      template: { metadata: { labels: { app: DEPLOYMENT } }, spec: pauseSpec('Always') },
    },
  };
  return JSON.stringify(d);
}

/**
 * A pod of the Deployment as its ReplicaSet's controller would create it (the template's labels
 * and spec, a generated name, a controller reference to the ReplicaSet with uid `ownerUid`): what
 * `capstan bench controllers --manager-ceiling` creates with no manager in between.
 */
export function replicaPodBody(ownerUid: string): string {
  const replicaSet = `${DEPLOYMENT}-ceiling`;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${replicaSet}-`,
      labels: { app: DEPLOYMENT, 'pod-template-hash': 'ceiling' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: replicaSet,
          uid: ownerUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: pauseSpec('Always'),
  };
  return JSON.stringify(pod);
}

/** A merge patch that changes the pod template (a rolling update). */
export function rolloutPatch(revision: number): string {
  return JSON.stringify({
    spec: { template: { metadata: { annotations: { 'bench.capstan.dev/revision': String(revision) } } } },
  });
}

/** The `i`-th Job: one pod that completes as soon as it runs. */
export function jobBody(i: number): string {
  const job: Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `job-${i}` },
    spec: {
      completions: 1,
      parallelism: 1,
      backoffLimit: 0,
      template: {
        metadata: { annotations: COMPLETE_AT_ONCE },
        spec: pauseSpec('Never'),
      },
    },
  };
  return JSON.stringify(job);
}
