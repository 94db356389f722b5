/**
 * The bundled build (`dist/bundle/`, made by `npm run build` with tools/bundle.ts) is the server
 * tools/run.sh and envtest run: it must behave as tsc's output. Proven here on a real process:
 * its code cache is accepted by this Node (else every start compiles the whole bundle), it finds
 * the files it reads at run time from `dist/bundle/` (package.json for the version, the generated
 * schemas, `proto/descriptions/` for the OpenAPI descriptions, `proto/` for the OpenAPI v2
 * protobuf document, which also loads protobufjs with createRequire), the RBAC bootstrap policy is in place when `/readyz` says so, a YAML body is
 * parsed (yaml loaded with createRequire), and classic-level's native binding loads (the store).
 * Each long-running component has a bundle of its own without the server's code, and its command
 * answers as tsc's build does. On etcd, it writes keys with leases (an Event's TTL, the endpoint
 * reconciler's address key): the etcd channel's 64-bit lease ids must not round in the bundle.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchClient } from '../../src/bench/client.js';
import { spawnServer, type SpawnedServer } from '../../src/bench/server-process.js';
import { readKubeconfigCredentials } from '../../src/pki/kubeconfig-credentials.js';
import { BUNDLE_DIR, BUNDLE_ENTRY } from '../../src/server/package-version.js';
import { bundleFileOf, CLI_BUNDLE, COMPONENT_BUNDLES } from '../../src/cli/bundles.js';
import { ETCD_BINARY, startEtcd, type LocalEtcd } from '../../tools/etcd-local.js';

const etcdMissing = !existsSync(ETCD_BINARY);
if (etcdMissing && (process.env['CI'] === 'true' || process.env['CAPSTAN_REQUIRE_ETCD'] === '1'))
  throw new Error(`etcd required: ${ETCD_BINARY} missing`);

const ROOT = resolve(import.meta.dirname, '../..');
const BUNDLE = join(ROOT, BUNDLE_DIR, BUNDLE_ENTRY);
const TSC_MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');

let dir: string;
let server: SpawnedServer;
let client: BenchClient;

beforeAll(async () => {
  expect(existsSync(BUNDLE), `${BUNDLE} missing: run npm run build`).toBe(true);
  dir = await mkdtemp(join(tmpdir(), 'capstan-bundle-test-'));
  server = await spawnServer({
    dataDir: join(dir, 'data'),
    main: BUNDLE,
    extraArgs: ['--authorization-mode=Node,RBAC'],
  });
  client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath), 1);
}, 120_000);

afterAll(async () => {
  client?.close();
  await server?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the bundled build', () => {
  it('has a code cache this Node accepts', () => {
    const script = `
      const { readFileSync } = require('node:fs');
      const { Script } = require('node:vm');
      const file = ${JSON.stringify(join(ROOT, BUNDLE_DIR, 'capstan.cjs'))};
      const s = new Script(readFileSync(file, 'latin1'), { filename: file, cachedData: readFileSync(file + '.cache') });
      process.stdout.write(String(s.cachedDataRejected));`;
    expect(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })).toBe('false');
  });

  it('runs each long-running component from a small bundle of its own, as tsc’s build', () => {
    const whole = statSync(join(ROOT, BUNDLE_DIR, CLI_BUNDLE)).size;
    const run = (entry: string, args: string[]): string => {
      const r = spawnSync(process.execPath, [entry, ...args], { encoding: 'utf8' });
      return `exit ${String(r.status)}\n${r.stdout}${r.stderr}`;
    };
    for (const command of Object.keys(COMPONENT_BUNDLES)) {
      const file = join(ROOT, BUNDLE_DIR, bundleFileOf(command));
      expect(file).not.toBe(join(ROOT, BUNDLE_DIR, CLI_BUNDLE));
      // The agent's is the largest (~1.3 of 5.2 MB): it holds protobufjs's light build for CRI.
      expect(statSync(file).size).toBeLessThan(whole / 3);
      // The server's modules (esbuild names each module by its path) and its HTTP framework are left out.
      const text = readFileSync(file, 'latin1');
      for (const left of ['"dist/src/server/run.js"', 'node_modules/fastify/', 'node_modules/long/'])
        expect(text.includes(left), `${file} holds ${left}`).toBe(false);
      expect(run(BUNDLE, [command, '--help'])).toBe(run(TSC_MAIN, [command, '--help']));
    }
    expect(run(BUNDLE, ['agent', '--simulate', '--help'])).toBe(
      run(TSC_MAIN, ['agent', '--simulate', '--help']),
    );
  });

  it('prints the version tsc’s build prints', () => {
    const bundled = execFileSync(process.execPath, [BUNDLE, 'version'], { encoding: 'utf8' });
    expect(bundled).toBe(execFileSync(process.execPath, [TSC_MAIN, 'version'], { encoding: 'utf8' }));
    expect(bundled).not.toContain('unknown');
  });

  it('serves what needs its run-time files and lazily loaded packages', async () => {
    expect((await client.request('GET', '/readyz')).status).toBe(200);
    // The RBAC bootstrap policy (generated module) is stored once /readyz is 200.
    const admin = await client.request(
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin',
    );
    expect(admin.status).toBe(200);
    expect(JSON.parse(admin.body.toString('utf8'))).toMatchObject({
      metadata: { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    });
    const version = JSON.parse((await client.request('GET', '/version')).body.toString('utf8')) as {
      gitVersion: string;
    };
    expect(version.gitVersion).not.toContain('unknown');
    // Schemas from src/registry/generated/schemas.json: the OpenAPI v3 document of a group.
    const v3 = await client.request('GET', '/openapi/v3/apis/apps/v1');
    expect(v3.status).toBe(200);
    expect(v3.body.toString('utf8')).toContain('io.k8s.api.apps.v1.Deployment');
    // proto/descriptions: ObjectMeta's own description (only the YAML files have one).
    const meta = (
      JSON.parse(v3.body.toString('utf8')) as { components: { schemas: Record<string, unknown> } }
    ).components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'] as { description?: unknown };
    expect(meta.description).toBeTypeOf('string');
    // proto/ and protobufjs: the OpenAPI v2 document as protobuf.
    const v2 = await client.request('GET', '/openapi/v2', {
      accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    });
    expect(v2.status).toBe(200);
    expect(v2.body.length).toBeGreaterThan(100_000);
    // yaml (createRequire): a YAML body, then the object read back from the store.
    const created = await client.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n',
      contentType: 'application/yaml',
    });
    expect(created.status).toBe(201);
    const read = await client.request('GET', '/api/v1/namespaces/default/configmaps/from-yaml');
    expect(JSON.parse(read.body.toString('utf8'))).toMatchObject({ data: { k: 'v' } });
  }, 60_000);
});

describe.skipIf(etcdMissing)('the bundled build on etcd', () => {
  let etcd: LocalEtcd | undefined;
  let onEtcd: SpawnedServer | undefined;
  let etcdClient: BenchClient | undefined;

  beforeAll(async () => {
    etcd = await startEtcd();
    onEtcd = await spawnServer({
      dataDir: join(dir, 'on-etcd'),
      main: BUNDLE,
      extraArgs: [`--etcd-servers=${etcd.endpoints.join(',')}`, '--controllers='],
    });
    etcdClient = new BenchClient(readKubeconfigCredentials(onEtcd.kubeconfigPath), 1);
  }, 120_000);

  afterAll(async () => {
    etcdClient?.close();
    await onEtcd?.stop();
    await etcd?.stop();
  });

  it('writes keys with leases: an Event, and its own address in the kubernetes endpoints', async () => {
    const client = etcdClient as BenchClient;
    const event = await client.request('POST', '/api/v1/namespaces/default/events', {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'leased' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'Test',
        message: 'stored with the event TTL lease',
      }),
      contentType: 'application/json',
    });
    expect(event.body.toString('utf8')).toContain('stored with the event TTL lease');
    expect(event.status).toBe(201);
    // The lease reconciler writes its address key, then the endpoints (a post-start hook).
    let ep = await client.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes');
    for (let i = 0; i < 50 && ep.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 200));
      ep = await client.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes');
    }
    expect(ep.status).toBe(200);
    expect(JSON.parse(ep.body.toString('utf8'))).toMatchObject({ subsets: [{ addresses: [{}] }] });
  }, 60_000);
});
