/**
 * Where the built-in kinds that hold a pod template keep it, by `group/Kind` (the core group
 * empty): kube's workload kinds and PodTemplate.
 */
export const POD_TEMPLATE_PATHS: ReadonlyMap<string, readonly string[]> = new Map([
  ['/ReplicationController', ['spec', 'template']],
  ['/PodTemplate', ['template']],
  ['apps/ReplicaSet', ['spec', 'template']],
  ['apps/Deployment', ['spec', 'template']],
  ['apps/StatefulSet', ['spec', 'template']],
  ['apps/DaemonSet', ['spec', 'template']],
  ['batch/Job', ['spec', 'template']],
  ['batch/CronJob', ['spec', 'jobTemplate', 'spec', 'template']],
]);
