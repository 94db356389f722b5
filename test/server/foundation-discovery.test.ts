/**
 * Discovery and /version over real TLS: the legacy documents through @kubernetes/client-node and
 * raw HTTPS, the aggregated documents (v2 and v2beta1) with client-go's Accept header, content
 * negotiation (406), ETags, and both HTTP/2 and HTTP/1.1.
 */
import { ApisApi, AppsApi, AppsV1Api, CoreApi, CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { negotiateDiscovery } from '../../src/http/discovery.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { METRICS_GROUP, METRICS_RESOURCES, METRICS_VERSION } from '../../src/metrics-api/handler.js';

const ACCEPT_CLIENT_GO =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const ACCEPT_V2BETA1_FIRST =
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

let server: TestServer;
let tls: AdminTls;

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
});
afterAll(async () => {
  await server?.close();
});

interface AggregatedList {
  kind: string;
  apiVersion: string;
  items: {
    metadata: { name?: string };
    versions: {
      version: string;
      freshness: string;
      resources: {
        resource: string;
        responseKind: { group: string; version: string; kind: string };
        scope: string;
        singularResource: string;
        verbs: string[];
        shortNames?: string[];
        categories?: string[];
        subresources?: {
          subresource: string;
          responseKind: { group: string; version: string; kind: string };
          verbs: string[];
        }[];
      }[];
    }[];
  }[];
}

describe('negotiateDiscovery', () => {
  it('follows the client order and q values, and refuses what it cannot serve', () => {
    expect(negotiateDiscovery(undefined, true)).toBe('legacy');
    expect(negotiateDiscovery(ACCEPT_CLIENT_GO, true)).toBe('v2');
    expect(negotiateDiscovery(ACCEPT_V2BETA1_FIRST, true)).toBe('v2beta1');
    expect(negotiateDiscovery(ACCEPT_CLIENT_GO, false)).toBe('legacy');
    expect(
      negotiateDiscovery(
        'application/json;q=0.5, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
        true,
      ),
    ).toBe('v2');
    expect(negotiateDiscovery('*/*', true)).toBe('legacy');
    expect(negotiateDiscovery('application/vnd.kubernetes.protobuf', true)).toBeUndefined();
    expect(
      negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', true),
    ).toBeUndefined();
  });
});

describe('through @kubernetes/client-node', () => {
  it('reads /version, /api, /apis, a group and a resource list', async () => {
    const version = await server.kubeConfig.makeApiClient(VersionApi).getCode();
    expect(version).toMatchObject({ major: '1', minor: '33', gitVersion: 'v1.33.0+capstan' });
    expect(version.platform).toMatch(/^linux\/|\//);

    const api = await server.kubeConfig.makeApiClient(CoreApi).getAPIVersions();
    expect(api.versions).toEqual(['v1']);
    const port = new URL(server.url).port;
    expect(api.serverAddressByClientCIDRs).toEqual([
      { clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${port}` },
    ]);

    const groups = await server.kubeConfig.makeApiClient(ApisApi).getAPIVersions();
    const names = groups.groups.map((g) => g.name);
    expect(names[0]).toBe('apiregistration.k8s.io');
    expect(names).toContain('flowcontrol.apiserver.k8s.io');
    const autoscaling = groups.groups.find((g) => g.name === 'autoscaling');
    expect(autoscaling?.versions.map((v) => v.groupVersion)).toEqual(['autoscaling/v2', 'autoscaling/v1']);
    expect(autoscaling?.preferredVersion?.groupVersion).toBe('autoscaling/v2');

    const apps = await server.kubeConfig.makeApiClient(AppsApi).getAPIGroup();
    expect(apps).toMatchObject({
      name: 'apps',
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });

    const appsV1 = await server.kubeConfig.makeApiClient(AppsV1Api).getAPIResources();
    expect(appsV1.groupVersion).toBe('apps/v1');
    expect(appsV1.resources.find((r) => r.name === 'deployments')).toMatchObject({
      singularName: 'deployment',
      namespaced: true,
      kind: 'Deployment',
      shortNames: ['deploy'],
      categories: ['all'],
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      // kube-apiserver v1.33's: the hash of the storage version, apps/v1/Deployment.
      storageVersionHash: '8aSe+NMegvE=',
    });
    expect(appsV1.resources.find((r) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
    expect(appsV1.resources.find((r) => r.name === 'deployments/status')).toMatchObject({
      kind: 'Deployment',
    });

    const core = await server.kubeConfig.makeApiClient(CoreV1Api).getAPIResources();
    const namespaces = core.resources.find((r) => r.name === 'namespaces');
    expect(namespaces).toMatchObject({ namespaced: false, shortNames: ['ns'] });
    expect(namespaces?.verbs).not.toContain('deletecollection');
    expect(core.resources.map((r) => r.name)).toContain('replicationcontrollers/scale');
    expect(core.resources.find((r) => r.name === 'namespaces/finalize')).toMatchObject({
      kind: 'Namespace',
      verbs: ['update'],
    });
    expect(core.resources.find((r) => r.name === 'pods/binding')).toMatchObject({
      kind: 'Binding',
      verbs: ['create'],
    });
    // Stored as core v1 Events: the same hash as kube's for both groups' Events.
    expect(core.resources.find((r) => r.name === 'events')?.storageVersionHash).toBe('r2yiGXH7wu8=');
    expect(core.resources.find((r) => r.name === 'componentstatuses')?.storageVersionHash).toBeUndefined();
  });
});

describe('raw HTTPS', () => {
  it('serves aggregated discovery v2 with the content type client-go checks', async () => {
    for (const path of ['/api', '/apis']) {
      const res = await adminFetch(`${server.url}${path}`, tls, { headers: { accept: ACCEPT_CLIENT_GO } });
      expect(res.status).toBe(200);
      expect(res.protocol).toBe('h2');
      expect(res.headers['content-type']).toBe(
        'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
      );
      expect(res.headers['vary']).toBe('Accept');
      const doc = JSON.parse(res.body) as AggregatedList;
      expect(doc.kind).toBe('APIGroupDiscoveryList');
      expect(doc.apiVersion).toBe('apidiscovery.k8s.io/v2');
      if (path === '/api') {
        expect(doc.items).toHaveLength(1);
        expect(doc.items[0]?.metadata.name).toBeUndefined();
        expect(doc.items[0]?.versions.map((v) => v.version)).toEqual(['v1']);
      }
    }
    const apis = JSON.parse(
      (await adminFetch(`${server.url}/apis`, tls, { headers: { accept: ACCEPT_CLIENT_GO } })).body,
    ) as AggregatedList;
    const apps = apis.items.find((i) => i.metadata.name === 'apps');
    const deployments = apps?.versions[0]?.resources.find((r) => r.resource === 'deployments');
    expect(apps?.versions[0]?.freshness).toBe('Current');
    // A built-in type's response kinds of its own group version carry no group or version, as
    // kube-apiserver v1.33 serves them.
    expect(deployments).toEqual({
      resource: 'deployments',
      responseKind: { group: '', version: '', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: [
        {
          subresource: 'scale',
          responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
          verbs: ['get', 'patch', 'update'],
        },
        {
          subresource: 'status',
          responseKind: { group: '', version: '', kind: 'Deployment' },
          verbs: ['get', 'patch', 'update'],
        },
      ],
    });
    // Every served type appears exactly once in the aggregated documents.
    const api = JSON.parse(
      (await adminFetch(`${server.url}/api`, tls, { headers: { accept: ACCEPT_CLIENT_GO } })).body,
    ) as AggregatedList;
    const seen = [...api.items, ...apis.items].flatMap((i) =>
      i.versions.flatMap((v) =>
        v.resources.map((r) => `${i.metadata.name ?? ''}/${v.version}/${r.resource}`),
      ),
    );
    const expected = [
      ...loadRegistry()
        .all()
        .map((t) => `${t.group}/${t.version}/${t.plural}`),
      // Served by src/metrics-api, outside the registry.
      ...METRICS_RESOURCES.map((r) => `${METRICS_GROUP}/${METRICS_VERSION}/${String(r['name'])}`),
    ];
    expect(seen.sort()).toEqual(expected.sort());
  });

  it('serves v2beta1 to clients that prefer it, and 406 to clients that accept nothing served', async () => {
    const res = await adminFetch(`${server.url}/apis`, tls, { headers: { accept: ACCEPT_V2BETA1_FIRST } });
    expect(res.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
    );
    expect((JSON.parse(res.body) as AggregatedList).apiVersion).toBe('apidiscovery.k8s.io/v2beta1');

    const refused = await adminFetch(`${server.url}/apis`, tls, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(refused.status).toBe(406);
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
  });

  it('answers If-None-Match with 304, and serves HTTP/1.1 too', async () => {
    const first = await adminFetch(`${server.url}/apis/apps/v1`, tls, { http2: false });
    expect(first.protocol).toBe('http/1.1');
    expect(first.status).toBe(200);
    const etag = first.headers['etag'];
    expect(typeof etag).toBe('string');
    const again = await adminFetch(`${server.url}/apis/apps/v1`, tls, {
      headers: { 'if-none-match': etag as string },
    });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('serves the OpenAPI documents next to discovery', async () => {
    const v3 = await adminFetch(`${server.url}/openapi/v3`, tls);
    expect(v3.status).toBe(200);
    const paths = (JSON.parse(v3.body) as { paths: Record<string, { serverRelativeURL: string }> }).paths;
    expect(paths['apis/apps/v1']?.serverRelativeURL).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=/);
    const v2 = await adminFetch(`${server.url}/openapi/v2`, tls, { headers: { accept: 'application/json' } });
    expect(v2.status).toBe(200);
    expect((JSON.parse(v2.body) as { swagger: string }).swagger).toBe('2.0');
  });

  it("answers unknown versions with a NotFound Status, and unknown groups with Go's plain 404, as kube", async () => {
    for (const path of ['/apis/apps/v9', '/api/v2']) {
      const res = await adminFetch(`${server.url}${path}`, tls);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    }
    const group = await adminFetch(`${server.url}/apis/nope.example.com`, tls);
    expect(group.status).toBe(404);
    expect(group.body).toBe('404 page not found\n');
  });
});
