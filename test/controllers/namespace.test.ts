/**
 * The namespace controller, a client of a bare server (`--controllers=`: nothing else deletes
 * content): a deleted namespace's content goes, built-in and custom resources alike, through
 * discovery; content held by finalizers holds the namespace, with kube's conditions saying why;
 * the `kubernetes` finalizer is removed through `namespaces/finalize` once nothing is left, and
 * the namespace's own metadata finalizers still hold it after that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Namespace, NamespaceCondition } from '../../src/api/types/core-v1.js';
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  DEPLOYMENTS,
  NAMESPACES,
  SECRETS,
  isNotFound,
  resourceRef,
  type ResourceClient,
  type TypedObject,
} from '../../src/client/index.js';
import { namespaceController } from '../../src/controllers/namespace/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let namespaces: ResourceClient<Namespace>;
let configMaps: ResourceClient<ConfigMap>;
const WIDGETS = resourceRef('example.com', 'v1', 'widgets', 'Widget', true);

beforeAll(async () => {
  env = await startInfraEnv([namespaceController], [], ['--controllers=']);
  namespaces = env.client.resource<Namespace>(NAMESPACES);
  configMaps = env.client.resource<ConfigMap>(CONFIG_MAPS);
  await env.client.resource<TypedObject>(CUSTOM_RESOURCE_DEFINITIONS).create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as TypedObject);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

async function gone(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

function condition(ns: Namespace, type: string): NamespaceCondition | undefined {
  return ns.status?.conditions?.find((c) => c.type === type);
}

describe('namespace controller', () => {
  it('deletes every namespaced resource, custom ones included, and reports what holds the namespace', async () => {
    await namespaces.create({ metadata: { name: 'doomed' } });
    await namespaces.create({ metadata: { name: 'doomed2' } });
    await configMaps.create({ metadata: { name: 'a', namespace: 'doomed' } });
    await configMaps.create({
      metadata: { name: 'held', namespace: 'doomed', finalizers: ['example.com/hold'] },
    });
    await configMaps.create({ metadata: { name: 'safe', namespace: 'doomed2' } });
    await env.client.resource<TypedObject>(SECRETS).create({ metadata: { name: 's', namespace: 'doomed' } });
    await env.client.resource<TypedObject>(DEPLOYMENTS).create({
      metadata: { name: 'd', namespace: 'doomed' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    } as TypedObject);
    const widgets = env.client.resource<TypedObject>(WIDGETS);
    await until('the CRD served', async () => {
      try {
        return await widgets.create({
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: { name: 'w', namespace: 'doomed' },
        });
      } catch {
        return undefined;
      }
    });

    await namespaces.delete('doomed');
    await until('the content deleted', async () =>
      (await gone(() => configMaps.get('a', { namespace: 'doomed' }))) &&
      (await gone(() => widgets.get('w', { namespace: 'doomed' }))) &&
      (await gone(() => env.client.resource(DEPLOYMENTS).get('d', { namespace: 'doomed' }))) &&
      (await gone(() => env.client.resource(SECRETS).get('s', { namespace: 'doomed' })))
        ? true
        : undefined,
    );
    const held = await configMaps.get('held', { namespace: 'doomed' });
    expect(held.metadata.deletionTimestamp).toBeDefined();
    const ns = await until('the conditions', async () => {
      const n = await namespaces.get('doomed');
      return condition(n, 'NamespaceFinalizersRemaining')?.status === 'True' ? n : undefined;
    });
    expect(ns.status?.phase).toBe('Terminating');
    expect(ns.spec?.finalizers).toEqual(['kubernetes']);
    expect(condition(ns, 'NamespaceContentRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps. has 1 resource instances',
    });
    expect(condition(ns, 'NamespaceFinalizersRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some finalizers are remaining: example.com/hold in 1 resource instances',
    });
    expect(condition(ns, 'NamespaceDeletionDiscoveryFailure')).toMatchObject({
      status: 'False',
      reason: 'ResourcesDiscovered',
      message: 'All resources successfully discovered',
    });
    expect(condition(ns, 'NamespaceDeletionContentFailure')).toMatchObject({
      status: 'False',
      reason: 'ContentDeleted',
    });
    expect(condition(ns, 'NamespaceDeletionGroupVersionParsingFailure')).toMatchObject({
      status: 'False',
      reason: 'ParsedGroupVersions',
    });

    await configMaps.patch(
      'held',
      { metadata: { finalizers: null } },
      { type: 'merge', namespace: 'doomed' },
    );
    await until(
      'the namespace deleted',
      async () => ((await gone(() => namespaces.get('doomed'))) ? true : undefined),
      40_000,
    );
    expect((await configMaps.get('safe', { namespace: 'doomed2' })).metadata.name).toBe('safe');
    expect(env.errors).toEqual([]);
  }, 90_000);

  it('removes only its own finalizer: the namespace metadata finalizers still hold it', async () => {
    await namespaces.create({ metadata: { name: 'kept', finalizers: ['example.com/keep'] } });
    await namespaces.delete('kept');
    const ns = await until('the kubernetes finalizer removed', async () => {
      const n = await namespaces.get('kept');
      return (n.spec?.finalizers ?? []).length === 0 ? n : undefined;
    });
    expect(ns.metadata.finalizers).toEqual(['example.com/keep']);
    expect(condition(ns, 'NamespaceContentRemaining')).toMatchObject({
      status: 'False',
      reason: 'ContentRemoved',
      message: 'All content successfully removed',
    });
    await namespaces.patch('kept', { metadata: { finalizers: [] } }, { type: 'merge' });
    await until('the namespace deleted', async () =>
      (await gone(() => namespaces.get('kept'))) ? true : undefined,
    );
  }, 60_000);
});
