import { describe, expect, it } from 'vitest';
import { defaulted } from './helpers.js';

describe('core defaults', () => {
  it('Service: ClusterIP, None affinity, TCP, targetPort = port, Cluster internal policy', () => {
    const svc = defaulted('', 'Service', {
      metadata: { name: 'web' },
      spec: {
        selector: { app: 'web' },
        ports: [{ port: 80 }, { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' }],
      },
    });
    expect(svc).toEqual({
      metadata: { name: 'web' },
      spec: {
        selector: { app: 'web' },
        ports: [
          { port: 80, protocol: 'TCP', targetPort: 80 },
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
        ],
        sessionAffinity: 'None',
        type: 'ClusterIP',
        internalTrafficPolicy: 'Cluster',
      },
    });
  });

  it('Service: LoadBalancer gets external policy, node-port allocation and ipMode; ClientIP gets its timeout', () => {
    const svc = defaulted('', 'Service', {
      spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 443, targetPort: 0 }] },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.com' }] } },
    });
    expect(svc).toEqual({
      spec: {
        type: 'LoadBalancer',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        ports: [{ port: 443, targetPort: 443, protocol: 'TCP' }],
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
      },
      status: {
        loadBalancer: { ingress: [{ ip: '192.0.2.10', ipMode: 'VIP' }, { hostname: 'lb.example.com' }] },
      },
    });
  });

  it('Service: affinity None drops an affinity config; ExternalName gets no traffic policies', () => {
    const svc = defaulted('', 'Service', {
      spec: {
        type: 'ExternalName',
        externalName: 'db.example.com',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } },
      },
    });
    expect(svc).toEqual({
      spec: { type: 'ExternalName', externalName: 'db.example.com', sessionAffinity: 'None' },
    });
  });

  it('Secret: stringData is base64-merged into data and dropped; type Opaque', () => {
    const s = defaulted('', 'Secret', {
      data: { a: 'b2xk', keep: 'eA==' },
      stringData: { a: 'new', pw: 's3cr3t' },
    });
    expect(s).toEqual({ data: { a: 'bmV3', keep: 'eA==', pw: 'czNjcjN0' }, type: 'Opaque' });
  });

  it('Namespace: name label and Active phase', () => {
    expect(defaulted('', 'Namespace', { metadata: { name: 'shop', labels: { team: 'a' } } })).toEqual({
      metadata: { name: 'shop', labels: { team: 'a', 'kubernetes.io/metadata.name': 'shop' } },
      status: { phase: 'Active' },
    });
  });

  it('ConfigMap and ServiceAccount: nothing visible', () => {
    expect(defaulted('', 'ConfigMap', { metadata: { name: 'c' } })).toEqual({ metadata: { name: 'c' } });
    expect(defaulted('', 'ServiceAccount', { metadata: { name: 's' } })).toEqual({ metadata: { name: 's' } });
  });

  it('PersistentVolume and PersistentVolumeClaim: phases, reclaim policy, volume mode', () => {
    expect(
      defaulted('', 'PersistentVolume', {
        spec: { capacity: { storage: '1024Mi' }, hostPath: { path: '/d' } },
      }),
    ).toEqual({
      spec: {
        capacity: { storage: '1Gi' },
        hostPath: { path: '/d', type: '' },
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Pending' },
    });
    expect(
      defaulted('', 'PersistentVolumeClaim', { spec: { resources: { requests: { storage: '0.5Gi' } } } }),
    ).toEqual({
      spec: { resources: { requests: { storage: '512Mi' } }, volumeMode: 'Filesystem' },
      status: { phase: 'Pending' },
    });
  });

  it('LimitRange: container defaults fall back to max, requests to defaults then min', () => {
    const lr = defaulted('', 'LimitRange', {
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    });
    expect(lr).toEqual({
      spec: {
        limits: [
          {
            type: 'Container',
            max: { cpu: '2' },
            min: { memory: '64Mi' },
            default: { cpu: '2' },
            defaultRequest: { cpu: '2', memory: '64Mi' },
          },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    });
  });

  it('Endpoints: port protocol TCP; Node: allocatable from capacity', () => {
    expect(
      defaulted('', 'Endpoints', { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }),
    ).toEqual({
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }],
    });
    expect(defaulted('', 'Node', { status: { capacity: { cpu: '4', pods: '110' } } })).toEqual({
      status: { capacity: { cpu: '4', pods: '110' }, allocatable: { cpu: '4', pods: '110' } },
    });
  });
});

describe('named group defaults', () => {
  it('NetworkPolicy: policyTypes from the rules given; port protocol TCP', () => {
    expect(defaulted('networking.k8s.io', 'NetworkPolicy', { spec: { podSelector: {} } })).toEqual({
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    expect(
      defaulted('networking.k8s.io', 'NetworkPolicy', {
        spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] },
      }),
    ).toEqual({
      spec: {
        podSelector: {},
        egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }],
        policyTypes: ['Ingress', 'Egress'],
      },
    });
  });

  it('IngressClass: parameters scope Cluster; Ingress: no pathType default', () => {
    expect(
      defaulted('networking.k8s.io', 'IngressClass', {
        spec: { controller: 'x.io/c', parameters: { kind: 'K', name: 'n' } },
      }),
    ).toEqual({
      spec: { controller: 'x.io/c', parameters: { kind: 'K', name: 'n', scope: 'Cluster' } },
    });
    const ing = {
      spec: {
        rules: [
          { http: { paths: [{ path: '/', backend: { service: { name: 's', port: { number: 80 } } } }] } },
        ],
      },
    };
    expect(defaulted('networking.k8s.io', 'Ingress', ing)).toEqual(ing);
  });

  it('RoleBinding: roleRef and subject API groups', () => {
    const rb = defaulted('rbac.authorization.k8s.io', 'RoleBinding', {
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'User', name: 'u' },
        { kind: 'Group', name: 'g' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      ],
    });
    expect(rb).toEqual({
      roleRef: { kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.k8s.io' },
      subjects: [
        { kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' },
        { kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.k8s.io' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      ],
    });
  });

  it('StorageClass, CSIDriver, PriorityClass', () => {
    expect(defaulted('storage.k8s.io', 'StorageClass', { provisioner: 'x.io/p' })).toEqual({
      provisioner: 'x.io/p',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
    expect(defaulted('storage.k8s.io', 'CSIDriver', {})).toEqual({
      spec: {
        attachRequired: true,
        podInfoOnMount: false,
        storageCapacity: false,
        fsGroupPolicy: 'ReadWriteOnceWithFSType',
        volumeLifecycleModes: ['Persistent'],
        requiresRepublish: false,
        seLinuxMount: false,
      },
    });
    expect(defaulted('scheduling.k8s.io', 'PriorityClass', { value: 10 })).toEqual({
      value: 10,
      preemptionPolicy: 'PreemptLowerPriority',
    });
  });

  it('HorizontalPodAutoscaler v2: minReplicas, CPU 80% metric, complete behaviour rules', () => {
    const hpa = defaulted('autoscaling', 'HorizontalPodAutoscaler', {
      apiVersion: 'autoscaling/v2',
      spec: {
        maxReplicas: 5,
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    });
    expect(hpa['spec']).toEqual({
      maxReplicas: 5,
      minReplicas: 1,
      scaleTargetRef: { kind: 'Deployment', name: 'web' },
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
      behavior: {
        scaleUp: {
          stabilizationWindowSeconds: 0,
          selectPolicy: 'Max',
          policies: [
            { type: 'Pods', value: 4, periodSeconds: 15 },
            { type: 'Percent', value: 100, periodSeconds: 15 },
          ],
        },
        scaleDown: {
          selectPolicy: 'Max',
          stabilizationWindowSeconds: 60,
          policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
        },
      },
    });
    // v1: kube answers with the object read back from its v2 storage, whose CPU metric shows as
    // targetCPUUtilizationPercentage, unless the v1 metrics annotation names other metrics.
    const v1 = defaulted('autoscaling', 'HorizontalPodAutoscaler', {
      apiVersion: 'autoscaling/v1',
      spec: { maxReplicas: 3 },
    });
    expect(v1['spec']).toEqual({ maxReplicas: 3, minReplicas: 1, targetCPUUtilizationPercentage: 80 });
    const annotated = defaulted('autoscaling', 'HorizontalPodAutoscaler', {
      apiVersion: 'autoscaling/v1',
      metadata: { annotations: { 'autoscaling.alpha.kubernetes.io/metrics': '[]' } },
      spec: { maxReplicas: 3 },
    });
    expect(annotated['spec']).toEqual({ maxReplicas: 3, minReplicas: 1 });
  });

  it('flowcontrol v1: matchingPrecedence 1000; a limited level’s shares, lendable percent and queuing', () => {
    const fs = defaulted('flowcontrol.apiserver.k8s.io', 'FlowSchema', {
      spec: { priorityLevelConfiguration: { name: 'x' } },
    });
    expect(fs['spec']).toEqual({ priorityLevelConfiguration: { name: 'x' }, matchingPrecedence: 1000 });
    const level = (limitResponse: unknown): unknown =>
      defaulted('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration', {
        spec: { type: 'Limited', limited: { limitResponse } },
      })['spec'];
    expect(level({ type: 'Queue', queuing: { handSize: 4 } })).toEqual({
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 30,
        lendablePercent: 0,
        limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 4, queueLengthLimit: 50 } },
      },
    });
    expect(level({ type: 'Reject' })).toEqual({
      type: 'Limited',
      limited: { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Reject' } },
    });
    const exempt = defaulted('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration', {
      spec: { type: 'Exempt', exempt: {} },
    });
    expect(exempt['spec']).toEqual({
      type: 'Exempt',
      exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 },
    });
  });

  it('APIService: the service port 443', () => {
    const svc = defaulted('apiregistration.k8s.io', 'APIService', {
      spec: { group: 'g.io', version: 'v1', service: { namespace: 'n', name: 's' } },
    });
    expect(svc['spec']).toEqual({
      group: 'g.io',
      version: 'v1',
      service: { namespace: 'n', name: 's', port: 443 },
    });
  });

  it('webhook configurations: v1 defaults (timeout 10, Fail, Equivalent, selectors, scope, port)', () => {
    const hook = {
      name: 'v.example.com',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      clientConfig: { service: { name: 's', namespace: 'n' } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    };
    const expected = {
      ...hook,
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      clientConfig: { service: { name: 's', namespace: 'n', port: 443 } },
      rules: [
        { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' },
      ],
    };
    expect(
      defaulted('admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', { webhooks: [hook] }),
    ).toEqual({ webhooks: [expected] });
    expect(
      defaulted('admissionregistration.k8s.io', 'MutatingWebhookConfiguration', { webhooks: [hook] }),
    ).toEqual({
      webhooks: [{ ...expected, reinvocationPolicy: 'Never' }],
    });
  });

  it('CustomResourceDefinition: singular, listKind, conversion None', () => {
    const crd = defaulted('apiextensions.k8s.io', 'CustomResourceDefinition', {
      spec: { group: 'x.io', names: { plural: 'widgets', kind: 'Widget' } },
    });
    expect(crd).toEqual({
      spec: {
        group: 'x.io',
        names: { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' },
        conversion: { strategy: 'None' },
      },
    });
  });

  it('EndpointSlice: port name and protocol', () => {
    expect(
      defaulted('discovery.k8s.io', 'EndpointSlice', { addressType: 'IPv4', ports: [{ port: 80 }] }),
    ).toEqual({
      addressType: 'IPv4',
      ports: [{ port: 80, name: '', protocol: 'TCP' }],
    });
  });

  it('leave kinds without defaults and custom resources untouched', () => {
    for (const [group, kind] of [
      ['coordination.k8s.io', 'Lease'],
      ['policy', 'PodDisruptionBudget'],
      ['example.com', 'Widget'],
      ['', 'NoSuchKind'],
    ] as const) {
      const o = { spec: { a: 1 } };
      expect(defaulted(group, kind, o)).toEqual(o);
    }
  });
});
