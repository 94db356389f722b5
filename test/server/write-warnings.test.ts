/**
 * The warnings kube-apiserver v1.33 sends kubectl for valid but suspicious writes, through
 * kubectl 1.33 against a real server: pods and pod templates (src/validation/core/pod-warnings.ts),
 * the other kinds with warnings (src/validation/core/object-warnings.ts), and v1 Endpoints'
 * deprecation. The expected lines are
 * what kube-apiserver v1.33.13 sent kubectl for the same objects and commands, in its order (the
 * node selector's and annotations' single keys make the order fixed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlWarnings, runKubectl } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

/** kubectl 1.33's warnings for `args` (and `body`) against the test's server. */
const warningsOf = (args: string[], body?: unknown): Promise<string[]> =>
  kubectlWarnings(server.kubeconfigPath, args, body);

/** A pod that is valid but trips every kind of warning kube gives. */
const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web.1',
    namespace: 'default',
    annotations: {
      'scheduler.alpha.kubernetes.io/critical-pod': '',
      'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
      'container.seccomp.security.alpha.kubernetes.io/c1': 'runtime/default',
    },
  },
  spec: {
    nodeSelector: { 'beta.kubernetes.io/os': 'linux' },
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 1,
            preference: {
              matchExpressions: [
                { key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['bad value!'] },
              ],
            },
          },
        ],
      },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'failure-domain.beta.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
      },
    ],
    volumes: [
      { name: 'g', gitRepo: { repository: 'https://example.com/r' } },
      {
        name: 'cm',
        configMap: {
          name: 'c',
          items: [
            { key: 'a', path: 'x' },
            { key: 'b', path: 'x/y' },
          ],
        },
      },
      {
        name: 'pr',
        projected: {
          sources: [
            { secret: { name: 's', items: [{ key: 'k', path: 'p' }] } },
            {},
            { configMap: { name: 'c2' } },
          ],
        },
      },
    ],
    hostAliases: [
      { ip: '10.0.0.1', hostnames: ['a'] },
      { ip: '10.0.0.1', hostnames: ['b'] },
    ],
    imagePullSecrets: [{ name: 's' }, { name: 's' }, { name: '' }],
    terminationGracePeriodSeconds: -1,
    dnsConfig: { nameservers: ['1.2.3.04'] },
    containers: [
      {
        name: 'c1',
        image: 'busybox',
        resources: { limits: { memory: '1.5' }, requests: { memory: '1.5' } },
        env: [
          { name: 'A', value: '1' },
          { name: 'A', value: '2' },
          { name: 'B', value: 'x' },
          { name: 'B', value: '$(B)y' },
        ],
        ports: [
          { containerPort: 80, name: 'http' },
          { containerPort: 80, hostPort: 8080 },
        ],
      },
      { name: 'c2', image: 'busybox', ports: [{ containerPort: 81, name: 'http', hostIP: '127.0.0.1' }] },
    ],
  },
};

/** kube's warnings for {@link POD}. */
const POD_WARNINGS = [
  "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
  'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
  'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: bad value! is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  'spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  'spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod',
  'metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead',
  'spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+',
  'volume "cm" (ConfigMap "c"): overlapping paths: "x/y" with "x"',
  'volume "pr" (Projected) has no sources provided',
  'volume "pr" (Projected): overlapping paths: "p" (Secret "s") with "p" (Secret "s")',
  'spec.hostAliases[1].ip: duplicate ip "10.0.0.1"',
  'spec.imagePullSecrets[1].name: duplicate name "s"',
  'spec.imagePullSecrets[2].name: invalid empty name ""',
  'metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead',
  'metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c1]: non-functional in v1.27+; use the "seccompProfile" field instead',
  'spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer',
  'spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer',
  'spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply',
  'spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]',
  'spec.containers[1].ports[0]: hostIP set without hostPort: {Name:http HostPort:0 ContainerPort:81 Protocol:TCP HostIP:127.0.0.1}',
  'spec.containers[1].ports[0]: duplicate port name "http" with spec.containers[0].ports[0], services and probes that select ports by name will use spec.containers[0].ports[0]',
  'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod',
  'spec.dnsConfig.nameservers[0]: non-standard IP address "1.2.3.04" will be considered invalid in a future Kubernetes release: use "1.2.3.4"',
];

/** kube's warnings for a Deployment whose template is {@link POD}'s, on create and on each update that changes its generation. */
const TEMPLATE_WARNINGS = [
  'spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
  'spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  "spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: bad value! is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  'spec.template.spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  'spec.template.spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod',
  'spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead',
  'spec.template.spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+',
  'volume "cm" (ConfigMap "c"): overlapping paths: "x/y" with "x"',
  'volume "pr" (Projected) has no sources provided',
  'volume "pr" (Projected): overlapping paths: "p" (Secret "s") with "p" (Secret "s")',
  'spec.template.spec.hostAliases[1].ip: duplicate ip "10.0.0.1"',
  'spec.template.spec.imagePullSecrets[1].name: duplicate name "s"',
  'spec.template.spec.imagePullSecrets[2].name: invalid empty name ""',
  'spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead',
  'spec.template.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c1]: non-functional in v1.27+; use the "seccompProfile" field instead',
  'spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c1]: deprecated since v1.30; use the "appArmorProfile" field instead',
  'spec.template.spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer',
  'spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer',
  'spec.template.spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply',
  'spec.template.spec.containers[0].ports[1]: overlapping port definition with spec.template.spec.containers[0].ports[0]',
  'spec.template.spec.containers[1].ports[0]: hostIP set without hostPort: {Name:http HostPort:0 ContainerPort:81 Protocol:TCP HostIP:127.0.0.1}',
  'spec.template.spec.containers[1].ports[0]: duplicate port name "http" with spec.template.spec.containers[0].ports[0], services and probes that select ports by name will use spec.template.spec.containers[0].ports[0]',
  'spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1',
  'spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod',
  'spec.template.spec.dnsConfig.nameservers[0]: non-standard IP address "1.2.3.04" will be considered invalid in a future Kubernetes release: use "1.2.3.4"',
];

/** A Deployment whose template is {@link POD}'s, with a container AppArmor annotation too. */
const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'dep.1', namespace: 'default' },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'w' } },
    template: {
      metadata: {
        labels: { app: 'w' },
        annotations: {
          ...POD.metadata.annotations,
          'container.apparmor.security.beta.kubernetes.io/c1': 'runtime/default',
        },
      },
      spec: POD.spec,
    },
  },
};

const STATEFULSET = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'ss', namespace: 'default' },
  spec: {
    replicas: 0,
    revisionHistoryLimit: -1,
    serviceName: 'ss',
    selector: { matchLabels: { app: 'w' } },
    template: {
      metadata: { labels: { app: 'w' } },
      spec: {
        containers: [
          { name: 'c', image: 'busybox', resources: { requests: { 'ephemeral-storage': '0.5' } } },
        ],
      },
    },
    volumeClaimTemplates: [
      {
        metadata: { name: 'd' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5' } } },
      },
    ],
  },
};
const CRONJOB = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'cj.1', namespace: 'default' },
  spec: {
    schedule: '0 0 * * *',
    jobTemplate: {
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'c',
                image: 'busybox',
                env: [
                  { name: 'X', value: '1' },
                  { name: 'X', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                ],
              },
            ],
          },
        },
      },
    },
  },
};

describe('warnings on pods and pod templates', () => {
  it('gives kube’s warnings for a pod, and a negative grace period becomes 1 as kube converts it', async () => {
    expect(await warningsOf(['create'], POD)).toEqual(POD_WARNINGS);
    const res = await runKubectl(
      '1.33',
      ['get', 'pod', 'web.1', '-o', 'jsonpath={.spec.terminationGracePeriodSeconds}'],
      server.kubeconfigPath,
    );
    expect(res.stdout).toBe('1');
    // Pod updates carry none (kube skips them).
    expect(await warningsOf(['label', 'pod', 'web.1', 'x=y'])).toEqual([]);
  });

  it('gives the template’s warnings for workloads on create and when their generation moves', async () => {
    expect(await warningsOf(['create'], DEPLOYMENT)).toEqual(
      [
        'metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]',
      ].concat(TEMPLATE_WARNINGS),
    );
    expect(await warningsOf(['label', 'deployment', 'dep.1', 'x=y'])).toEqual([]);
    expect(await warningsOf(['scale', 'deployment', 'dep.1', '--replicas=1'])).toEqual(TEMPLATE_WARNINGS);
    expect(
      await warningsOf([
        'patch',
        'deployment',
        'dep.1',
        '--type=merge',
        '-p',
        '{"spec":{"template":{"metadata":{"labels":{"x":"y"}}}}}',
      ]),
    ).toEqual(TEMPLATE_WARNINGS);
    expect(await warningsOf(['create'], STATEFULSET)).toEqual([
      'spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "500m" is invalid, must be an integer',
      'spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended',
    ]);
    // The claim template's apiVersion and kind are fields of it, not unknown ones.
    expect(
      await warningsOf([
        'patch',
        'sts',
        'ss',
        '--type=merge',
        '-p',
        '{"spec":{"template":{"metadata":{"labels":{"x":"y"}}}}}',
      ]),
    ).toEqual([
      'spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "500m" is invalid, must be an integer',
      'spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended',
    ]);
    expect(await warningsOf(['create'], CRONJOB)).toEqual([
      'metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]',
      'spec.jobTemplate.spec.template.spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply',
    ]);
  });

  it('warns of IP addresses not in their standard form', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'v6', namespace: 'default' },
      spec: {
        hostAliases: [
          { ip: '2001:DB8::1', hostnames: ['a'] },
          { ip: '::ffff:1.2.3.4', hostnames: ['b'] },
          { ip: '2001:db8:0:0:0:0:0:2', hostnames: ['c'] },
        ],
        containers: [{ name: 'c', image: 'busybox' }],
      },
    };
    expect(await warningsOf(['create'], pod)).toEqual([
      'spec.hostAliases[0].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")',
      'spec.hostAliases[1].ip: non-standard IP address "::ffff:1.2.3.4" will be considered invalid in a future Kubernetes release: use "1.2.3.4"',
      'spec.hostAliases[2].ip: IPv6 address "2001:db8:0:0:0:0:0:2" should be in RFC 5952 canonical format ("2001:db8::2")',
    ]);
  });
});

const OBJECTS = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 's1',
        namespace: 'default',
        annotations: { 'service.kubernetes.io/topology-aware-hints': 'auto' },
      },
      spec: {
        type: 'LoadBalancer',
        ports: [{ port: 80 }],
        externalIPs: ['010.1.1.1'],
        loadBalancerSourceRanges: [
          '10.0.0.1/8',
          '010.0.0.0/8',
          '2001:DB8::/32',
          '2001:DB8::1/32',
          '::ffff:1.2.3.4/120',
        ],
        externalName: 'x.example.com',
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's2', namespace: 'default' },
      spec: { type: 'ExternalName', externalName: 'x.example.com', externalIPs: ['1.2.3.4'] },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'e1', namespace: 'default' },
      subsets: [
        {
          addresses: [{ ip: '01.2.3.4' }],
          notReadyAddresses: [{ ip: '::ffff:1.2.3.5' }],
          ports: [{ port: 80 }],
        },
      ],
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'c1',
        namespace: 'default',
        annotations: { 'volume.beta.kubernetes.io/storage-class': 'x' },
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1.5' }, limits: { storage: '2.5' } },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: 'sa1',
        namespace: 'default',
        annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1' },
      spec: { externalID: 'abc', podCIDRs: ['10.1.2.3/24'] },
    },
  ],
};

describe('warnings on core kinds', () => {
  it('gives kube’s warnings on create, and on the updates kube gives them', async () => {
    expect(await warningsOf(['create'], OBJECTS)).toEqual([
      'annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead',
      'spec.externalIPs[0]: non-standard IP address "010.1.1.1" will be considered invalid in a future Kubernetes release: use "10.1.1.1"',
      'spec.loadBalancerSourceRanges[0]: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)',
      'spec.loadBalancerSourceRanges[1]: non-standard CIDR value "010.0.0.0/8" will be considered invalid in a future Kubernetes release: use "10.0.0.0/8"',
      'spec.loadBalancerSourceRanges[2]: IPv6 CIDR value "2001:DB8::/32" should be in RFC 5952 canonical format ("2001:db8::/32")',
      'spec.loadBalancerSourceRanges[3]: CIDR value "2001:DB8::1/32" is ambiguous in this context (should be "2001:db8::/32" or "2001:db8::1/128"?)',
      'spec.loadBalancerSourceRanges[4]: CIDR value "::ffff:1.2.3.4/120" is ambiguous in this context (should be "1.2.3.0/24" or "1.2.3.4/128"?)',
      'spec.loadBalancerSourceRanges[4]: non-standard CIDR value "::ffff:1.2.3.4/120" will be considered invalid in a future Kubernetes release: use "1.2.3.0/24"',
      'spec.externalName is ignored when spec.type is not "ExternalName"',
      'spec.externalIPs is ignored when spec.type is "ExternalName"',
      'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
      'subsets[0].addresses[0].ip: non-standard IP address "01.2.3.4" will be considered invalid in a future Kubernetes release: use "1.2.3.4"',
      'subsets[0].notReadyAddresses[0].ip: non-standard IP address "::ffff:1.2.3.5" will be considered invalid in a future Kubernetes release: use "1.2.3.5"',
      'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead',
      'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer',
      'metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets',
      'spec.externalID: this field is deprecated, and is unused by Kubernetes',
      'spec.podCIDRs[0]: CIDR value "10.1.2.3/24" is ambiguous in this context (should be "10.1.2.0/24" or "10.1.2.3/32"?)',
    ]);
    // A ServiceAccount warns only when the annotation is new; a Service on every update.
    expect(await warningsOf(['label', 'sa', 'sa1', '-n', 'default', 'x=y'])).toEqual([]);
    expect(await warningsOf(['label', 'svc', 's2', '-n', 'default', 'x=y'])).toEqual([
      'spec.externalIPs is ignored when spec.type is "ExternalName"',
    ]);
    // Every request for v1 Endpoints carries kube's deprecation warning.
    expect(await warningsOf(['get', 'endpoints', '-n', 'default'])).toEqual([
      'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
    ]);
  });

  it('gives kube’s warnings for network policies, ingresses, storage and runtime classes', async () => {
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'np', namespace: 'default' },
          spec: {
            podSelector: {},
            ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.1/8', except: ['010.1.0.0/16'] } }] }],
            egress: [{ to: [{ podSelector: {} }, { ipBlock: { cidr: '2001:DB8::/32' } }] }],
          },
        },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: {
            name: 'ing',
            namespace: 'default',
            annotations: { 'kubernetes.io/ingress.class': 'nginx' },
          },
          spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } } },
        },
        {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name: 'sc' },
          provisioner: 'example.com/p',
          allowedTopologies: [
            { matchLabelExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', values: ['a'] }] },
          ],
        },
        {
          apiVersion: 'node.k8s.io/v1',
          kind: 'RuntimeClass',
          metadata: { name: 'rc' },
          handler: 'runc',
          scheduling: { nodeSelector: { 'beta.kubernetes.io/os': 'linux' } },
        },
      ],
    };
    expect(await warningsOf(['create'], objects)).toEqual([
      'spec.ingress[0].from[0].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)',
      'spec.ingress[0].from[0].ipBlock.except[0]: non-standard CIDR value "010.1.0.0/16" will be considered invalid in a future Kubernetes release: use "10.1.0.0/16"',
      'spec.egress[0].to[1].ipBlock.cidr: IPv6 CIDR value "2001:DB8::/32" should be in RFC 5952 canonical format ("2001:db8::/32")',
      'annotation "kubernetes.io/ingress.class" is deprecated, please use \'spec.ingressClassName\' instead',
      'allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
      'scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/os" instead',
    ]);
    // An Ingress warns on create only; a NetworkPolicy on every update.
    expect(await warningsOf(['label', 'ingress', 'ing', '-n', 'default', 'x=y'])).toEqual([]);
    expect(await warningsOf(['label', 'networkpolicy', 'np', '-n', 'default', 'x=y'])).toEqual([
      'spec.ingress[0].from[0].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)',
      'spec.ingress[0].from[0].ipBlock.except[0]: non-standard CIDR value "010.1.0.0/16" will be considered invalid in a future Kubernetes release: use "10.1.0.0/16"',
      'spec.egress[0].to[1].ipBlock.cidr: IPv6 CIDR value "2001:DB8::/32" should be in RFC 5952 canonical format ("2001:db8::/32")',
    ]);
  });

  it('gives kube’s warnings for persistent volumes, on create and update, not on status writes', async () => {
    const pv = (name: string, extra: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, ...metadata },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], ...extra },
    });
    const pv1 = [
      'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead',
      'metadata.annotations[volume.beta.kubernetes.io/mount-options]: deprecated since v1.31; use "mountOptions" attribute instead',
      'spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.',
      'spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
      'spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead',
    ];
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        pv(
          'pv1',
          {
            persistentVolumeReclaimPolicy: 'Recycle',
            nfs: { server: '10.1.1.1', path: '/x' },
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['a'] },
                      { key: 'beta.kubernetes.io/arch', operator: 'Exists' },
                    ],
                  },
                ],
              },
            },
          },
          {
            annotations: {
              'volume.beta.kubernetes.io/storage-class': 'slow',
              'volume.beta.kubernetes.io/mount-options': 'ro',
            },
          },
        ),
        pv('pv2', { cephfs: { monitors: ['10.1.1.1:6789'] } }),
        pv('pv3', { glusterfs: { endpoints: 'ep', path: 'vol' } }),
      ],
    };
    expect(await warningsOf(['create'], objects)).toEqual([
      ...pv1,
      'spec.cephfs: deprecated in v1.28, non-functional in v1.31+',
      'spec.glusterfs: deprecated in v1.25, non-functional in v1.26+',
    ]);
    expect(await warningsOf(['label', 'pv', 'pv1', 'x=y'])).toEqual(pv1);
    const status = JSON.stringify({ status: { phase: 'Available' } });
    expect(
      await warningsOf(['patch', 'pv', 'pv1', '--subresource=status', '--type=merge', '-p', status]),
    ).toEqual([]);
  });
});
