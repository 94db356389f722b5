/**
 * API aggregation end to end: a Capstan front server with a front-proxy client certificate, and
 * a small HTTPS backend (its own serving CA, made here) that serves `wardle.example.com/v1alpha1`
 * flunders and refuses every request without the front-proxy client certificate. The backend is
 * registered by a Service, an EndpointSlice pointing at 127.0.0.1 and an APIService.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminJson,
  adminTls,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from '../authn/support.js';

type Json = Record<string, unknown>;

const GROUP = 'wardle.example.com';
const GV = `${GROUP}/v1alpha1`;
let server: TestServer;
let tls: AdminTls;
let backend: LocalHttps;
let backendCaPem: string;
let backendServing: { certPem: string; keyPem: string };
let dir: string;
/** Requests the backend served: path, headers and the client certificate's common name. */
const seen: { path: string; headers: IncomingHttpHeaders; clientCn: string }[] = [];

const RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [
    {
      name: 'flunders',
      singularName: 'flunder',
      namespaced: true,
      kind: 'Flunder',
      verbs: ['get', 'list', 'watch'],
    },
    { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get'] },
  ],
};

function flunder(name: string): Json {
  return { apiVersion: GV, kind: 'Flunder', metadata: { name, namespace: 'default', resourceVersion: '7' } };
}

function backendHandler(req: IncomingMessage, _body: string, res: ServerResponse): void {
  const peer = (req.socket as TLSSocket).getPeerCertificate();
  const clientCn = typeof peer.subject?.CN === 'string' ? peer.subject.CN : '';
  const url = new URL(req.url ?? '/', 'https://x');
  seen.push({ path: `${url.pathname}${url.search}`, headers: req.headers, clientCn });
  if (clientCn !== 'front-proxy-client') return sendJson(res, 401, { kind: 'Status', code: 401 });
  if (url.pathname === `/apis/${GV}`) return sendJson(res, 200, RESOURCE_LIST);
  if (url.pathname === `/apis/${GV}/namespaces/default/flunders`) {
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(JSON.stringify({ type: 'ADDED', object: flunder('alpha') }) + '\n');
      setTimeout(() => {
        res.end(JSON.stringify({ type: 'ADDED', object: flunder('beta') }) + '\n');
      }, 400);
      return;
    }
    if ((req.headers.accept ?? '').includes('as=Table')) {
      return sendJson(res, 200, {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '7' },
        columnDefinitions: [
          { name: 'Name', type: 'string', format: 'name', description: 'name', priority: 0 },
        ],
        rows: [
          {
            cells: ['alpha'],
            object: {
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: { name: 'alpha' },
            },
          },
        ],
      });
    }
    return sendJson(res, 200, {
      apiVersion: GV,
      kind: 'FlunderList',
      metadata: {},
      items: [flunder('alpha')],
    });
  }
  return sendJson(res, 404, { kind: 'Status', code: 404 });
}

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; text: string }> {
  return adminJson(`${server.url}${path}`, tls, method, body);
}

function apiService(name: string, group: string, version: string, service: Json, caPem?: string): Json {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name },
    spec: {
      group,
      version,
      service,
      groupPriorityMinimum: 1000,
      versionPriority: 15,
      ...(caPem === undefined ? {} : { caBundle: Buffer.from(caPem).toString('base64') }),
    },
  };
}

/** The Available condition of an APIService once it has `reason`. */
async function availableWhen(name: string, reason: string, timeoutMs = 15_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const r = await api('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
    const conditions = ((r.json['status'] as Json | undefined)?.['conditions'] ?? []) as Json[];
    last = conditions;
    const c = conditions.find((x) => x['type'] === 'Available');
    if (c?.['reason'] === reason) return c;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`apiservice ${name} never reached ${reason}: ${JSON.stringify(last)}`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-aggregation-'));
  const backendCa = await makeCa('wardle-ca');
  backendCaPem = backendCa.certPem;
  const frontProxyCa = await makeCa('front-proxy-ca');
  const serving = await issue(backendCa, { commonName: 'api' }, 'server', { dnsNames: ['api.wardle.svc'] });
  backendServing = serving;
  const client = await issue(frontProxyCa, { commonName: 'front-proxy-client' }, 'client');
  await writeFile(join(dir, 'proxy.crt'), client.certPem);
  await writeFile(join(dir, 'proxy.key'), client.keyPem);
  backend = await startLocalHttps(
    { certPem: serving.certPem, keyPem: serving.keyPem, caPem: frontProxyCa.certPem, requestCert: true },
    backendHandler,
  );
  server = await startTestServer({
    args: [
      `--proxy-client-cert-file=${join(dir, 'proxy.crt')}`,
      `--proxy-client-key-file=${join(dir, 'proxy.key')}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ],
  });
  tls = adminTls(server.kubeconfigPath);
  const port = Number(new URL(backend.url).port);
  expect(
    (
      await api('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'wardle' },
      })
    ).status,
  ).toBe(201);
  const svc = await api('POST', '/api/v1/namespaces/wardle/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'api' },
    spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
  });
  expect(svc.status, svc.text).toBe(201);
  const slice = await api('POST', '/apis/discovery.k8s.io/v1/namespaces/wardle/endpointslices', {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'api-1', labels: { 'kubernetes.io/service-name': 'api' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  });
  expect(slice.status, slice.text).toBe(201);
  const created = await api(
    'POST',
    '/apis/apiregistration.k8s.io/v1/apiservices',
    apiService(
      `v1alpha1.${GROUP}`,
      GROUP,
      'v1alpha1',
      { namespace: 'wardle', name: 'api', port: 443 },
      backendCaPem,
    ),
  );
  expect(created.status, created.text).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await backend?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('APIServices', () => {
  it('creates the local APIServices of the built-in groups, Available as Local', async () => {
    const c = await availableWhen('v1.apps', 'Local');
    expect(c).toMatchObject({ status: 'True', message: 'Local APIServices are always available' });
    const core = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.');
    expect(core.status).toBe(200);
    // The core group's empty name is omitted, as in kube's JSON.
    expect(core.json['spec']).toEqual({ version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
  });

  it('checks a remote APIService by a discovery request with the front-proxy certificate', async () => {
    const c = await availableWhen(`v1alpha1.${GROUP}`, 'Passed');
    expect(c['status']).toBe('True');
    const check = seen.find((s) => s.path === `/apis/${GV}`);
    expect(check?.clientCn).toBe('front-proxy-client');
  });

  it('reports a missing Service as ServiceNotFound, and requests for it get 503', async () => {
    const created = await api(
      'POST',
      '/apis/apiregistration.k8s.io/v1/apiservices',
      apiService('v1.missing.example.com', 'missing.example.com', 'v1', {
        namespace: 'wardle',
        name: 'nope',
        port: 443,
      }),
    );
    expect(created.status, created.text).toBe(201);
    const c = await availableWhen('v1.missing.example.com', 'ServiceNotFound');
    expect(c).toMatchObject({ status: 'False', message: 'service/nope in "wardle" is not present' });
    const r = await api('GET', '/apis/missing.example.com/v1/things');
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
  });

  it('reports a Service without endpoints as EndpointsNotFound', async () => {
    expect(
      (
        await api('POST', '/api/v1/namespaces/wardle/services', {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'empty' },
          spec: { ports: [{ port: 443 }] },
        })
      ).status,
    ).toBe(201);
    await api(
      'POST',
      '/apis/apiregistration.k8s.io/v1/apiservices',
      apiService('v1.empty.example.com', 'empty.example.com', 'v1', {
        namespace: 'wardle',
        name: 'empty',
        port: 443,
      }),
    );
    const c = await availableWhen('v1.empty.example.com', 'EndpointsNotFound');
    expect(c).toMatchObject({
      status: 'False',
      message: 'cannot find endpoints for service/empty in "wardle"',
    });
  });
});

describe('custom resource groups', () => {
  it('get a local APIService while a CRD serves them, removed with the CRD', async () => {
    const crd = await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.stable.example.com' },
      spec: {
        group: 'stable.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    expect(crd.status, crd.text).toBe(201);
    const c = await availableWhen('v1.stable.example.com', 'Local');
    expect(c['status']).toBe('True');
    const svc = await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com');
    expect(svc.json['spec']).toEqual({
      group: 'stable.example.com',
      version: 'v1',
      groupPriorityMinimum: 1000,
      versionPriority: 100,
    });
    expect((svc.json['metadata'] as Json)['labels']).toEqual({
      'kube-aggregator.kubernetes.io/automanaged': 'true',
    });
    const del = await api(
      'DELETE',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.stable.example.com',
    );
    expect(del.status).toBeLessThan(300);
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (Date.now() < deadline && status !== 404) {
      status = (await api('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com')).status;
      if (status !== 404) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(404);
  });
});

describe('a failing backend', () => {
  it('reports a backend that refuses connections as FailedDiscoveryCheck', async () => {
    // A port nothing listens on: the one a server had before it was closed.
    const dead = await startLocalHttps(
      { certPem: backendServing.certPem, keyPem: backendServing.keyPem },
      () => undefined,
    );
    const port = Number(new URL(dead.url).port);
    await dead.close();
    expect(
      (
        await api('POST', '/api/v1/namespaces/wardle/services', {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'dead' },
          spec: { ports: [{ port: 443 }] },
        })
      ).status,
    ).toBe(201);
    await api('POST', '/apis/discovery.k8s.io/v1/namespaces/wardle/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'dead-1', labels: { 'kubernetes.io/service-name': 'dead' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'] }],
      ports: [{ name: '', port, protocol: 'TCP' }],
    });
    await api(
      'POST',
      '/apis/apiregistration.k8s.io/v1/apiservices',
      apiService('v1.dead.example.com', 'dead.example.com', 'v1', {
        namespace: 'wardle',
        name: 'dead',
        port: 443,
      }),
    );
    const c = await availableWhen('v1.dead.example.com', 'FailedDiscoveryCheck');
    expect(c['status']).toBe('False');
    const url = `https://127.0.0.1:${port}/apis/dead.example.com/v1`;
    expect(c['message']).toBe(
      `failing or missing response from ${url}: Get "${url}": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    // An unavailable group is not proxied.
    expect((await api('GET', '/apis/dead.example.com/v1/things')).status).toBe(503);
  });
});

describe('the proxy', () => {
  it('lists the aggregated group in /apis and /apis/<group>, and proxies its resource list', async () => {
    await availableWhen(`v1alpha1.${GROUP}`, 'Passed');
    const apis = await api('GET', '/apis');
    const groups = (apis.json['groups'] as Json[]).map((g) => g['name']);
    expect(groups).toContain(GROUP);
    const group = await api('GET', `/apis/${GROUP}`);
    expect(group.json['preferredVersion']).toEqual({ groupVersion: GV, version: 'v1alpha1' });
    const list = await api('GET', `/apis/${GV}`);
    expect(list.json).toEqual(RESOURCE_LIST);
  });

  it('passes the user in the identity headers, not the client credentials', async () => {
    const before = seen.length;
    const r = await api('GET', `/apis/${GV}/namespaces/default/flunders`);
    expect(r.status, r.text).toBe(200);
    expect(r.json['items']).toEqual([flunder('alpha')]);
    const req = seen.slice(before).find((s) => s.path === `/apis/${GV}/namespaces/default/flunders`);
    expect(req?.clientCn).toBe('front-proxy-client');
    expect(typeof req?.headers['x-remote-user']).toBe('string');
    expect(req?.headers['x-remote-user']).not.toBe('');
    expect(String(req?.headers['x-remote-group'])).toContain('system:authenticated');
    expect(req?.headers['authorization']).toBeUndefined();
  });

  it('routes by the decoded path, as authorization reads it: a percent-encoded group is proxied as sent', async () => {
    const before = seen.length;
    const encoded = `/apis/${GROUP.replace('.', '%2E')}/v1alpha1/namespaces/default/flunders`;
    await api('GET', encoded);
    expect(seen.slice(before).map((s) => s.path)).toContain(encoded);
  });

  it('streams a watch through', async () => {
    const chunks: { at: number; text: string }[] = [];
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      const url = new URL(`${server.url}/apis/${GV}/namespaces/default/flunders?watch=true`);
      const req = httpsRequest(
        {
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          ...tls,
          rejectUnauthorized: true,
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.setEncoding('utf8');
          res.on('data', (text: string) => chunks.push({ at: Date.now() - started, text }));
          res.on('end', resolve);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const all = chunks.map((c) => c.text).join('');
    expect(
      all
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { object: Json }).object['metadata']),
    ).toMatchObject([{ name: 'alpha' }, { name: 'beta' }]);
    // The first event came before the backend sent the second one.
    expect(chunks[0]?.text).toContain('alpha');
    expect(chunks[0]?.text).not.toContain('beta');
  });

  it('serves kubectl 1.33 get of the aggregated resource', async () => {
    const r = await runKubectl('1.33', ['get', 'flunders', '-n', 'default'], server.kubeconfigPath);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s*\nalpha\s*$/m);
  });
});
