/**
 * Realistic objects for the codec benchmark: a ConfigMap of about 1 KiB of JSON and a
 * Deployment as kube-apiserver stores it after a rollout (managedFields, status, probes, env).
 */

/** A ConfigMap whose JSON is about 1 KiB. */
export function configMap1KiB(name = 'app-config'): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let i = 0; i < 12; i++) data[`setting-${i}.properties`] = `key${i}=value-${'x'.repeat(40)}`;
  return {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: 'default',
      uid: '0b4f6e2c-3d4a-4f6b-9a51-1c2d3e4f5a6b',
      resourceVersion: '123456',
      creationTimestamp: '2024-05-06T07:08:09Z',
      labels: { app: 'web', tier: 'frontend' },
    },
    data,
  };
}

/** A Deployment as stored after creation and a rollout. */
export function deployment(): Record<string, unknown> {
  return {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: '6f1c1b1e-2a44-4c9e-8a8e-0c0d1e2f3a4b',
      resourceVersion: '987654',
      generation: 3,
      creationTimestamp: '2024-05-06T07:08:09Z',
      labels: { app: 'web' },
      annotations: { 'deployment.kubernetes.io/revision': '3' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: '2024-05-06T07:08:09Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': { 'f:replicas': {} },
          },
        },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: '2024-05-06T07:09:10Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:availableReplicas': {}, 'f:conditions': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/web:1.4.2',
              ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
              env: [
                { name: 'LOG_LEVEL', value: 'info' },
                {
                  name: 'POD_NAME',
                  valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
                },
              ],
              resources: {
                limits: { cpu: '500m', memory: '256Mi' },
                requests: { cpu: '100m', memory: '128Mi' },
              },
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
                initialDelaySeconds: 5,
                timeoutSeconds: 1,
                periodSeconds: 10,
                successThreshold: 1,
                failureThreshold: 3,
              },
              volumeMounts: [{ name: 'config', mountPath: '/etc/web' }],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          volumes: [{ name: 'config', configMap: { name: 'app-config', defaultMode: 420 } }],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 3,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastUpdateTime: '2024-05-06T07:09:10Z',
          lastTransitionTime: '2024-05-06T07:09:10Z',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        },
        {
          type: 'Progressing',
          status: 'True',
          lastUpdateTime: '2024-05-06T07:09:10Z',
          lastTransitionTime: '2024-05-06T07:08:09Z',
          reason: 'NewReplicaSetAvailable',
          message: 'ReplicaSet "web-7d9f8c6b5d" has successfully progressed.',
        },
      ],
    },
  };
}
