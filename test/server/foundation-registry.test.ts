/**
 * The kind table: the YAML is valid, the generated module matches it, and the registry answers
 * the lookups the HTTP layer and discovery rely on with kube-apiserver's facts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KindsFileError, parseKindsYaml, renderKindsModule } from '../../src/registry/kinds-source.js';
import { KINDS } from '../../src/registry/kinds.js';
import { KindRegistry, loadRegistry, RegistryError, registryFromYaml } from '../../src/registry/registry.js';

const YAML_PATH = new URL('../../proto/kinds.yaml', import.meta.url);
const MODULE_PATH = new URL('../../src/registry/kinds.ts', import.meta.url);

describe('kind table', () => {
  it('generated src/registry/kinds.ts matches proto/kinds.yaml', () => {
    const parsed = parseKindsYaml(readFileSync(YAML_PATH, 'utf8'));
    if (process.env['CAPSTAN_UPDATE_GENERATED'] === '1')
      writeFileSync(MODULE_PATH, renderKindsModule(parsed));
    // Compared as data, so that reformatting the generated file (prettier) is not drift.
    expect(KINDS).toEqual(parsed);
  });
});

describe('registry lookups', () => {
  const registry = loadRegistry();

  it('finds types by resource and by kind, with derived fields', () => {
    const deploy = registry.byResource('apps', 'v1', 'deployments');
    expect(deploy).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      listKind: 'DeploymentList',
      namespaced: true,
      subresources: ['status', 'scale'],
      storageResource: 'deployments',
      messageType: 'k8s.io.api.apps.v1.Deployment',
      virtual: false,
    });
    expect(registry.byKind('apps', 'v1', 'Deployment')).toBe(deploy);
    expect(registry.byResource('', 'v1', 'pods')?.apiVersion).toBe('v1');
    expect(registry.byResource('apps', 'v1', 'pods')).toBeUndefined();
    expect(registry.byKind('', 'v1', 'Deployment')).toBeUndefined();
  });

  it("keeps kube-apiserver's etcd key layout", () => {
    const storage = (group: string, version: string, plural: string): string | undefined =>
      registry.byResource(group, version, plural)?.storageResource;
    expect(storage('', 'v1', 'services')).toBe('services/specs');
    expect(storage('', 'v1', 'endpoints')).toBe('services/endpoints');
    expect(storage('', 'v1', 'nodes')).toBe('minions');
    expect(storage('', 'v1', 'replicationcontrollers')).toBe('controllers');
    expect(storage('networking.k8s.io', 'v1', 'ingresses')).toBe('ingress');
    expect(storage('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')).toBe(
      'apiextensions.k8s.io/customresourcedefinitions',
    );
    expect(storage('apiregistration.k8s.io', 'v1', 'apiservices')).toBe('apiregistration.k8s.io/apiservices');
    expect(storage('events.k8s.io', 'v1', 'events')).toBe(storage('', 'v1', 'events'));
    expect(storage('autoscaling', 'v1', 'horizontalpodautoscalers')).toBe(
      storage('autoscaling', 'v2', 'horizontalpodautoscalers'),
    );
  });

  it('names every kind the interface spec names, plus the required extras', () => {
    const kinds = new Set(registry.all().map((t) => t.kind));
    const required = [
      'Pod',
      'Namespace',
      'Service',
      'ConfigMap',
      'Secret',
      'ServiceAccount',
      'Deployment',
      'StatefulSet',
      'DaemonSet',
      'ReplicaSet',
      'CronJob',
      'Event',
      'EndpointSlice',
      'PodDisruptionBudget',
      'RuntimeClass',
      'CustomResourceDefinition',
      'APIService',
      'CertificateSigningRequest',
      'Lease',
      'Ingress',
      'IngressClass',
      'Role',
      'RoleBinding',
      'ClusterRole',
      'ClusterRoleBinding',
      'PriorityClass',
      'CSIDriver',
      'CSINode',
      'StorageClass',
      'VolumeAttachment',
      'NetworkPolicy',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'HorizontalPodAutoscaler',
      'SubjectAccessReview',
      'LocalSubjectAccessReview',
      'SelfSubjectAccessReview',
      'TokenReview',
      'Node',
      'Endpoints',
      'LimitRange',
      'ResourceQuota',
      'PersistentVolume',
      'PersistentVolumeClaim',
      'ReplicationController',
      'PodTemplate',
      'ControllerRevision',
      'Job',
      'PriorityLevelConfiguration',
      'FlowSchema',
    ];
    expect(required.filter((k) => !kinds.has(k))).toEqual([]);
    for (const t of registry.all().filter((x) => x.virtual)) {
      // Reviews and bindings are created; component statuses are probed on each read.
      expect(t.verbs, t.kind).toEqual(t.kind === 'ComponentStatus' ? ['get', 'list'] : ['create']);
      expect(t.storageResource, t.kind).toBe('');
    }
  });

  it('orders groups as kube-apiserver does, preferred versions first', () => {
    const groups = registry.groups();
    expect(groups[0]?.name).toBe('');
    expect(groups[1]?.name).toBe('apiregistration.k8s.io');
    expect(registry.group('autoscaling')).toEqual({
      name: 'autoscaling',
      versions: ['v2', 'v1'],
      preferredVersion: 'v2',
    });
    expect(registry.resourcesOf('apps', 'v1').map((t) => t.plural)).toEqual([
      'controllerrevisions',
      'daemonsets',
      'deployments',
      'replicasets',
      'statefulsets',
    ]);
    expect(registry.resourcesOf('apps', 'v9')).toEqual([]);
  });
});

describe('kinds.yaml validation', () => {
  const base = `groups:\n  - { name: '', versions: [v1] }\nkinds:\n`;
  const kind = (extra: string): string =>
    `${base}  - { group: '', version: v1, kind: Thing, plural: things, singular: thing, namespaced: true, verbs: [get], messageType: a.b.Thing${extra} }\n`;

  it('accepts a minimal stored kind and fills defaults', async () => {
    const doc = parseKindsYaml(kind(', storageResource: things'));
    expect(doc.kinds[0]).toMatchObject({ shortNames: [], categories: [], subresources: [], virtual: false });
    const registry = await registryFromYaml(kind(', storageResource: things'));
    expect(registry.byResource('', 'v1', 'things')?.listKind).toBe('ThingList');
  });

  it('rejects broken entries with a located KindsFileError', () => {
    const bad = (text: string, where: RegExp): void => {
      let caught: unknown;
      try {
        parseKindsYaml(text);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(KindsFileError);
      expect((caught as KindsFileError).code).toBe('REGISTRY_INVALID_KINDS_FILE');
      expect((caught as KindsFileError).message).toMatch(where);
    };
    bad(kind(''), /kinds\[0\]\.storageResource/);
    bad(kind(', storageResource: things, verbs2: [x]'), /kinds\[0\]\.verbs2: unknown field/);
    bad(kind(', storageResource: things, subresources: [bogus]'), /unknown value bogus/);
    bad(kind(', virtual: true, storageResource: things'), /a virtual kind has no storageResource/);
    bad(kind(', storageResource: things').replace("group: ''", 'group: nope'), /is not in groups/);
    bad(kind(', storageResource: things').replace('version: v1,', 'version: v2,'), /v2 is not a version/);
    bad('groups: [', /not valid YAML/);
  });

  it('rejects duplicate resources in the registry', () => {
    const doc = parseKindsYaml(kind(', storageResource: things'));
    const dup = { groups: doc.groups, kinds: [...doc.kinds, { ...doc.kinds[0]!, kind: 'Other' }] };
    expect(() => new KindRegistry(dup)).toThrow(RegistryError);
  });
});
