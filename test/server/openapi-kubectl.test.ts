/**
 * The OpenAPI documents end to end, with stock kubectl (1.27, the first with explain on v3, and
 * 1.33, whose client-side apply reads v3 patch metadata): `explain` of nested fields, and
 * client-side `apply` whose second run must merge containers by name (strategic merge patch
 * metadata from the documents) and pass kubectl's client-side validation (v2 protobuf).
 *
 * The server is the real app (`buildApp`) with the OpenAPI routes added when the app does not
 * register them itself yet, so this test keeps working once the server wires them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerOpenApiRoutes } from '../../src/http/openapi.js';
import { versionInfo } from '../../src/http/version.js';
import { localServerUrl, writeKubeconfig } from '../../src/pki/kubeconfig.js';
import { ensureServerPki } from '../../src/pki/server-pki.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { buildApp } from '../../src/server/app.js';
import { ConnectionTracker } from '../../src/server/connections.js';
import { ServerLifecycle } from '../../src/server/lifecycle.js';
import { ServerLog } from '../../src/server/log.js';
import { parseServerArgs } from '../../src/server/options.js';
import { storeViews } from '../../src/server/storage.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { kubectlPath, runKubectl, type KubectlVersion } from '../support/kubectl.js';

interface OpenApiServer {
  readonly kubeconfigPath: string;
  readonly logs: readonly string[];
  close(): Promise<void>;
}

/** The app of `capstan server` over a memory store, with the OpenAPI routes, on a random port. */
async function startServerWithOpenApi(): Promise<OpenApiServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-openapi-'));
  const parsed = parseServerArgs(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`]);
  if (parsed.help) throw new Error('unexpected --help');
  const options = parsed.options;
  const pki = await ensureServerPki({ certDir: join(dataDir, 'pki'), bindAddress: options.bindAddress });
  const root = await openMemoryStore();
  const opened = storeViews(root, options.etcdPrefix, 'memory');
  const registry = loadRegistry();
  const logs: string[] = [];
  let port = 0;
  const app: FastifyInstance = buildApp({
    options,
    registry,
    store: opened.resources,
    lifecycle: new ServerLifecycle(),
    tls: { certPem: pki.serving.certPem, keyPem: pki.serving.keyPem, clientCaPems: pki.clientCaPems },
    version: versionInfo('0.0.0-test'),
    connections: new ConnectionTracker(),
    serverAddress: () => `127.0.0.1:${port}`,
    log: new ServerLog((line) => logs.push(line)),
  });
  if (!app.hasRoute({ method: 'GET', url: '/openapi/v2' })) {
    registerOpenApiRoutes(app, { registry, schemas: loadSchemas() });
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  port = address.port;
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server: localServerUrl('127.0.0.1', port),
    caPem: pki.servingTrustPem,
    clientCertPem: pki.admin.certPem,
    clientKeyPem: pki.admin.keyPem,
  });
  return {
    kubeconfigPath,
    logs,
    close: async () => {
      await app.close();
      await root.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function deployment(image: string, sidecarImage: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: "25%"}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: ${image}
        ports:
        - containerPort: 8080
        resources:
          limits: {cpu: 1, memory: 64Mi}
      - name: sidecar
        image: ${sidecarImage}
`;
}

const VERSIONS: readonly KubectlVersion[] = ['1.27', '1.33'];
const installed = VERSIONS.filter((v) => kubectlPath(v) !== undefined);

describe.skipIf(installed.length === 0)('OpenAPI with kubectl', () => {
  let server: OpenApiServer;
  let workDir: string;

  beforeAll(async () => {
    server = await startServerWithOpenApi();
    workDir = await mkdtemp(join(tmpdir(), 'capstan-openapi-manifests-'));
  });
  afterAll(async () => {
    await server?.close();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  describe.each(installed)('kubectl %s', (version) => {
    const kubectl = (args: readonly string[]) => runKubectl(version, args, server.kubeconfigPath);

    it('explains deployment.spec.strategy from the v3 document', async () => {
      const r = await kubectl(['explain', 'deployment.spec.strategy']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/GROUP:\s+apps/);
      expect(r.stdout).toMatch(/KIND:\s+Deployment/);
      expect(r.stdout).toMatch(/FIELD: strategy <DeploymentStrategy>/);
      expect(r.stdout).toMatch(/rollingUpdate\s+<RollingUpdateDeployment>/);
      expect(r.stdout).toMatch(/type\s+<string>/);
    });

    it('explains pods.spec.containers, with the required name', async () => {
      const r = await kubectl(['explain', 'pods.spec.containers']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/FIELD: containers <\[\]Container>/);
      expect(r.stdout).toMatch(/name\s+<string> -required-/);
      expect(r.stdout).toMatch(/ports\s+<\[\]ContainerPort>/);
      expect(r.stdout).toMatch(/livenessProbe\s+<Probe>/);
    });

    it('explains from the v2 document (plaintext-openapiv2)', async () => {
      const r = await kubectl([
        'explain',
        'pods.spec.containers.livenessProbe',
        '--output=plaintext-openapiv2',
      ]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/RESOURCE: livenessProbe <Object>/);
      // Probe's handler is inline upstream: its fields are the probe's own.
      expect(r.stdout).toMatch(/httpGet\s+<Object>/);
      expect(r.stdout).toMatch(/initialDelaySeconds\s+<integer>/);
    });

    it('rejects an unknown field with server-side field validation', async () => {
      const file = join(workDir, `bad-${version}.yaml`);
      await writeFile(
        file,
        deployment('nginx:1', 'busybox:1').replace('replicas: 1', 'replicas: 1\n  replicaz: 2'),
      );
      const r = await kubectl(['apply', '--validate=true', '-f', file]);
      expect(r.code).not.toBe(0);
      // The server advertises fieldValidation, so kubectl sends fieldValidation=Strict and the
      // server refuses the body, naming the field by its path.
      expect(r.stderr).toContain('strict decoding error: unknown field "spec.replicaz"');
    });

    it('applies a Deployment, then merges an edited re-apply by container name', async () => {
      const name = `web-${version.replace('.', '-')}`;
      const file = join(workDir, `${name}.yaml`);
      await writeFile(file, deployment('nginx:1', 'busybox:1').replaceAll('name: web', `name: ${name}`));
      const first = await kubectl(['apply', '-f', file]);
      expect(first.stderr).toBe('');
      expect(first.stdout).toContain(`deployment.apps/${name} created`);

      // A container added by someone else must survive the re-apply: a strategic merge on
      // `containers` (merge key `name`) keeps it, a JSON merge patch would replace the list.
      const edit = await kubectl([
        'patch',
        'deployment',
        name,
        '--type=strategic',
        '-p',
        JSON.stringify({
          spec: { template: { spec: { containers: [{ name: 'added', image: 'redis:7' }] } } },
        }),
      ]);
      expect(edit.code).toBe(0);

      await writeFile(file, deployment('nginx:2', 'busybox:1').replaceAll('name: web', `name: ${name}`));
      // -v=6 makes kubectl 1.31+ log when the v3 document cannot give the patch metadata (no
      // PATCH operation with the GVK, no strategic merge media type); 1.27 reads the v2 one.
      const second = await kubectl(['apply', '-v=6', '-f', file]);
      expect(second.stderr).not.toMatch(/OpenAPI V3 path|error calculating patch|warning/i);
      expect(second.stderr).toMatch(
        version === '1.27' ? /openapi\/v2/ : /openapi\/v3\/apis\/apps\/v1\?hash=/,
      );
      expect(second.stdout).toContain(`deployment.apps/${name} configured`);

      const got = await kubectl(['get', 'deployment', name, '-o', 'json']);
      expect(got.code).toBe(0);
      const containers = (
        JSON.parse(got.stdout) as {
          spec: { template: { spec: { containers: { name: string; image: string }[] } } };
        }
      ).spec.template.spec.containers;
      const images = Object.fromEntries(containers.map((c) => [c.name, c.image]));
      expect(images).toEqual({ app: 'nginx:2', sidecar: 'busybox:1', added: 'redis:7' });
    });
  });
});
