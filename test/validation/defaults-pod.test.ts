import { describe, expect, it } from 'vitest';
import { defaulted } from './helpers.js';

/** What kube-apiserver adds to every container, by hand from SetDefaults_Container. */
const containerDefaults = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  resources: {},
};

/** What kube-apiserver adds to every pod spec (SetDefaults_PodSpec). */
const podSpecDefaults = {
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
  schedulerName: 'default-scheduler',
};

describe('Pod defaults', () => {
  it('fill the pod spec, containers, ports, probes, resources and volumes as kube does', () => {
    const pod = defaulted('', 'Pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
            resources: { limits: { cpu: 0.5, memory: '1024Mi' } },
            readinessProbe: { httpGet: { port: 80 } },
            livenessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 },
            startupProbe: { grpc: { port: 9000 } },
            env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            lifecycle: { preStop: { httpGet: { port: 80, path: '/stop' } } },
          },
        ],
        initContainers: [{ name: 'init', image: 'busybox' }],
        volumes: [
          { name: 'scratch' },
          { name: 'cfg', configMap: { name: 'cfg' } },
          { name: 'sec', secret: { secretName: 's', defaultMode: 256 } },
          { name: 'host', hostPath: { path: '/var/log' } },
          {
            name: 'info',
            downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
          },
          { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
        ],
      },
    });
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        ...podSpecDefaults,
        enableServiceLinks: true,
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            imagePullPolicy: 'IfNotPresent',
            ...containerDefaults,
            ports: [
              { containerPort: 80, protocol: 'TCP' },
              { containerPort: 53, protocol: 'UDP' },
            ],
            // Canonical quantities; a Pod's requests default to its limits.
            resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } },
            readinessProbe: {
              httpGet: { port: 80, path: '/', scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            livenessProbe: {
              tcpSocket: { port: 80 },
              timeoutSeconds: 1,
              periodSeconds: 5,
              successThreshold: 1,
              failureThreshold: 3,
            },
            startupProbe: {
              grpc: { port: 9000, service: '' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
            lifecycle: { preStop: { httpGet: { port: 80, path: '/stop', scheme: 'HTTP' } } },
          },
        ],
        initContainers: [{ name: 'init', image: 'busybox', imagePullPolicy: 'Always', ...containerDefaults }],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } },
          { name: 'sec', secret: { secretName: 's', defaultMode: 256 } },
          { name: 'host', hostPath: { path: '/var/log', type: '' } },
          {
            name: 'info',
            downwardAPI: {
              defaultMode: 420,
              items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }],
            },
          },
          {
            name: 'token',
            projected: {
              defaultMode: 420,
              sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }],
            },
          },
        ],
      },
    });
  });

  it('mirror container ports into host ports under hostNetwork (Pods only)', () => {
    const spec = {
      hostNetwork: true,
      containers: [{ name: 'a', image: 'x:1', ports: [{ containerPort: 8080 }] }],
    };
    const pod = defaulted('', 'Pod', { metadata: { name: 'p' }, spec });
    expect((pod['spec'] as { containers: { ports: unknown[] }[] }).containers[0]?.ports).toEqual([
      { containerPort: 8080, hostPort: 8080, protocol: 'TCP' },
    ]);
    const rs = defaulted('apps', 'ReplicaSet', { spec: { template: { spec } } });
    const tmpl = (rs['spec'] as { template: { spec: { containers: { ports: unknown[] }[] } } }).template.spec;
    expect(tmpl.containers[0]?.ports).toEqual([{ containerPort: 8080, protocol: 'TCP' }]);
  });

  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['registry.example.com:5000/team/app', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['registry.example.com:5000/team/app:v2', 'IfNotPresent'],
    ['nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
    ['nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'Always'],
    ['Nginx', 'IfNotPresent'],
    ['', 'IfNotPresent'],
  ])('default imagePullPolicy of %j to %s', (image, policy) => {
    const pod = defaulted('', 'Pod', { spec: { containers: [{ name: 'a', image }] } });
    expect(
      (pod['spec'] as { containers: { imagePullPolicy: string }[] }).containers[0]?.imagePullPolicy,
    ).toBe(policy);
  });

  it('keep values the user set, including explicit zero-like pointers', () => {
    const pod = defaulted('', 'Pod', {
      spec: {
        restartPolicy: 'Never',
        dnsPolicy: 'None',
        terminationGracePeriodSeconds: 0,
        enableServiceLinks: false,
        containers: [
          {
            name: 'a',
            image: 'x',
            imagePullPolicy: 'Never',
            terminationMessagePolicy: 'FallbackToLogsOnError',
          },
        ],
      },
    });
    expect(pod['spec']).toMatchObject({
      restartPolicy: 'Never',
      dnsPolicy: 'None',
      terminationGracePeriodSeconds: 0,
      enableServiceLinks: false,
      containers: [{ imagePullPolicy: 'Never', terminationMessagePolicy: 'FallbackToLogsOnError' }],
    });
  });
});

describe('pod template defaults', () => {
  const userTemplate = {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
  };
  const defaultedTemplate = {
    metadata: { labels: { app: 'web' } },
    spec: {
      ...podSpecDefaults,
      containers: [
        { name: 'web', image: 'nginx:1.27', imagePullPolicy: 'IfNotPresent', ...containerDefaults },
      ],
    },
  };

  it('Deployment: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600, and the template', () => {
    const d = defaulted('apps', 'Deployment', {
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: userTemplate },
    });
    expect(d).toEqual({
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
        template: defaultedTemplate,
      },
    });
  });

  it('Deployment: Recreate gets no rollingUpdate', () => {
    const d = defaulted('apps', 'Deployment', {
      spec: { strategy: { type: 'Recreate' }, template: userTemplate },
    });
    expect((d['spec'] as { strategy: unknown }).strategy).toEqual({ type: 'Recreate' });
  });

  it('ReplicaSet: replicas 1', () => {
    const rs = defaulted('apps', 'ReplicaSet', { spec: { template: userTemplate } });
    expect(rs).toEqual({ spec: { replicas: 1, template: defaultedTemplate } });
  });

  it('DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, history 10; template generation "0"', () => {
    const ds = defaulted('apps', 'DaemonSet', { spec: { template: userTemplate } });
    expect(ds).toEqual({
      metadata: { annotations: { 'deprecated.daemonset.template.generation': '0' } },
      spec: {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        revisionHistoryLimit: 10,
        template: defaultedTemplate,
      },
    });
  });

  it('StatefulSet: OrderedReady, RollingUpdate partition 0, Retain/Retain, claim templates', () => {
    const ss = defaulted('apps', 'StatefulSet', {
      spec: {
        serviceName: 'db',
        template: userTemplate,
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    });
    expect(ss).toEqual({
      spec: {
        serviceName: 'db',
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
        replicas: 1,
        revisionHistoryLimit: 10,
        template: defaultedTemplate,
        volumeClaimTemplates: [
          {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '1Gi' } },
              volumeMode: 'Filesystem',
            },
            status: { phase: 'Pending' },
          },
        ],
      },
    });
  });

  it('StatefulSet: an explicit RollingUpdate without rollingUpdate stays without it', () => {
    const ss = defaulted('apps', 'StatefulSet', {
      spec: { updateStrategy: { type: 'RollingUpdate' }, template: userTemplate },
    });
    expect((ss['spec'] as { updateStrategy: unknown }).updateStrategy).toEqual({ type: 'RollingUpdate' });
  });

  it('Job: counts, backoff, completion mode, replacement policy, manualSelector, labels from the template', () => {
    const job = defaulted('batch', 'Job', {
      metadata: { name: 'pi' },
      spec: { template: { ...userTemplate, spec: { ...userTemplate.spec, restartPolicy: 'Never' } } },
    });
    expect(job).toEqual({
      metadata: { name: 'pi', labels: { app: 'web' } },
      spec: {
        completions: 1,
        parallelism: 1,
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        suspend: false,
        podReplacementPolicy: 'TerminatingOrFailed',
        manualSelector: false,
        template: { ...defaultedTemplate, spec: { ...defaultedTemplate.spec, restartPolicy: 'Never' } },
      },
    });
  });

  it('Job: parallelism alone keeps completions unset; a pod failure policy means Failed replacement', () => {
    const job = defaulted('batch', 'Job', {
      spec: {
        parallelism: 3,
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
        template: userTemplate,
      },
    });
    const spec = job['spec'] as Record<string, unknown>;
    expect(spec['completions']).toBeUndefined();
    expect(spec['parallelism']).toBe(3);
    expect(spec['podReplacementPolicy']).toBe('Failed');
    expect(spec['podFailurePolicy']).toEqual({
      rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
    });
  });

  it('CronJob: policy, suspend, history limits; the job template gets pod defaults only', () => {
    const cj = defaulted('batch', 'CronJob', {
      spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: userTemplate } } },
    });
    expect(cj).toEqual({
      spec: {
        schedule: '*/5 * * * *',
        concurrencyPolicy: 'Allow',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: { spec: { template: defaultedTemplate } },
      },
    });
  });

  it('ReplicationController: replicas 1, selector and labels from the template', () => {
    const rc = defaulted('', 'ReplicationController', {
      metadata: { name: 'rc' },
      spec: { template: userTemplate },
    });
    expect(rc).toEqual({
      metadata: { name: 'rc', labels: { app: 'web' } },
      spec: { selector: { app: 'web' }, replicas: 1, template: defaultedTemplate },
    });
  });

  it('PodTemplate: the template', () => {
    expect(defaulted('', 'PodTemplate', { template: userTemplate })).toEqual({ template: defaultedTemplate });
  });
});
