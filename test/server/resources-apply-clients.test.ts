/**
 * Field ownership, apply, dry run and field validation through stock @kubernetes/client-node
 * (typed APIs and KubernetesObjectApi) against a whole `capstan server`, and the Warning header
 * over raw HTTPS.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, clientFailure, startTestServer, type TestServer } from '../support/server.js';
import { deployment, type KObj } from './resources.support.js';

const failure = (p: Promise<unknown>) => clientFailure<KObj>(p);

let server: TestServer;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  server = await startTestServer();
  kc = server.kubeConfig;
});
afterAll(async () => {
  await server.close();
});

const APPLY = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

describe('@kubernetes/client-node: apply and ownership', () => {
  it('KubernetesObjectApi.patch with ServerSideApply creates, conflicts (409 with causes), forces', async () => {
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const spec: k8s.V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa', namespace: 'default' },
      data: { k: 'v' },
    };
    const created = await client.patch(
      spec,
      undefined,
      undefined,
      'alice',
      undefined,
      k8s.PatchStrategy.ServerSideApply,
    );
    expect(created.metadata?.managedFields?.[0]).toMatchObject({ manager: 'alice', operation: 'Apply' });
    const conflict = await failure(
      client.patch(
        { ...spec, data: { k: 'w' } },
        undefined,
        undefined,
        'bob',
        undefined,
        k8s.PatchStrategy.ServerSideApply,
      ),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.body.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.k' },
    ]);
    const forced = await client.patch(
      { ...spec, data: { k: 'w' } },
      undefined,
      undefined,
      'bob',
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
    expect((forced as k8s.V1ConfigMap).data).toEqual({ k: 'w' });
    expect(forced.metadata?.managedFields?.map((e) => e.manager)).toEqual(['bob']);
  });

  it('AppsV1Api: typed create records an Update entry; apply on the scale subresource', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const d = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('typed'),
      fieldManager: 'typed-client',
    });
    expect(d.metadata?.managedFields?.[0]).toMatchObject({ manager: 'typed-client', operation: 'Update' });
    const scaled = await apps.patchNamespacedDeploymentScale(
      {
        name: 'typed',
        namespace: 'default',
        fieldManager: 'scaler',
        force: true,
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name: 'typed' },
          spec: { replicas: 3 },
        },
      },
      APPLY,
    );
    expect(scaled.spec?.replicas).toBe(3);
    const read = await apps.readNamespacedDeployment({ name: 'typed', namespace: 'default' });
    expect(read.metadata?.managedFields).toContainEqual(
      expect.objectContaining({ manager: 'scaler', operation: 'Apply', subresource: 'scale' }),
    );
  });

  it('dryRun=All on typed create, patch and delete writes nothing', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const dry = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'dry' }, data: { a: '1' } },
      dryRun: 'All',
    });
    expect(dry.metadata?.uid).toBeDefined();
    expect((await failure(core.readNamespacedConfigMap({ name: 'dry', namespace: 'default' }))).code).toBe(
      404,
    );
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'real' }, data: { a: '1' } },
    });
    const patched = await core.patchNamespacedConfigMap(
      {
        name: 'real',
        namespace: 'default',
        dryRun: 'All',
        fieldManager: 'm',
        force: true,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'real' }, data: { a: '2' } },
      },
      APPLY,
    );
    expect(patched.data).toEqual({ a: '2' });
    await core.deleteNamespacedConfigMap({ name: 'real', namespace: 'default', dryRun: 'All' });
    const after = await core.readNamespacedConfigMap({ name: 'real', namespace: 'default' });
    expect(after.data).toEqual({ a: '1' });
  });

  it('field validation over HTTPS: Warning headers under Warn, 400 under Strict', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const body =
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv"},"data":{"a":"1","a":"2"},"bogus":1}';
    const url = `${server.url}/api/v1/namespaces/default/configmaps`;
    const strict = await adminFetch(`${url}?fieldValidation=Strict`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(strict.status).toBe(400);
    expect((JSON.parse(strict.body) as KObj).message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus", duplicate field "data.a"',
    );
    const warn = await adminFetch(url, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(warn.status).toBe(201);
    expect(String(warn.headers['warning'])).toContain('299 - "unknown field \\"bogus\\""');
    expect(String(warn.headers['warning'])).toContain('299 - "duplicate field \\"data.a\\""');
  });
});
