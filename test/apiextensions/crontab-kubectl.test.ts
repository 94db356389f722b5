/**
 * Stock kubectl (1.27 and 1.33) against the CronTab CRD: apply the CRD and wait for Established,
 * `api-resources` shows the kind (discovery refreshed), `explain` reads its published OpenAPI v3
 * schema, apply and get a CronTab (printer
 * columns), scale it, delete a namespace holding one (the custom object goes with it), and
 * delete the CRD while objects exist (they are deleted, then the CRD).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  kubectlOutput,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
});

function kubectl(version: KubectlVersion, ...args: string[]): Promise<string> {
  return kubectlOutput(version, args, server.kubeconfigPath);
}

describe.each(['1.27', '1.33'] as const)('kubectl %s', (version) => {
  it('applies the CRD and sees it Established and in api-resources', async () => {
    const applied = await kubectl(version, 'apply', '-f', 'fixtures/crds/crontab.yaml');
    expect(applied).toContain('customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com');
    await kubectl(
      version,
      'wait',
      '--for=condition=Established',
      '--timeout=10s',
      'crd/crontabs.stable.example.com',
    );
    const resources = await kubectl(version, 'api-resources', '--api-group=stable.example.com');
    expect(resources).toMatch(/crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab/);
  });

  it('explains CronTab from the published schema', async () => {
    const explained = await kubectl(version, 'explain', 'crontab.spec');
    expect(explained).toContain('KIND:');
    expect(explained).toContain('CronTab');
    expect(explained).toMatch(/cronSpec\s+<string>/);
    expect(explained).toMatch(/replicas\s+<integer>/);
  });

  it('applies a CronTab and gets it with the printer columns', async () => {
    const applied = await kubectl(version, 'apply', '-f', 'fixtures/crds/my-crontab.yaml');
    expect(applied).toContain('crontab.stable.example.com/my-new-cron-object created');
    const got = await kubectl(version, 'get', 'ct');
    const [header, row] = got.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'SPEC', 'REPLICAS', 'AGE']);
    expect(row).toMatch(/^my-new-cron-object\s+\* \* \* \* \*\/5\s+1\s+\d+s$/);
    const again = await kubectl(version, 'apply', '-f', 'fixtures/crds/my-crontab.yaml');
    expect(again).toContain('unchanged');
  });

  it('scales a CronTab', async () => {
    const scaled = await kubectl(version, 'scale', 'crontab/my-new-cron-object', '--replicas=4');
    expect(scaled).toContain('scaled');
    const replicas = await kubectl(
      version,
      'get',
      'crontab',
      'my-new-cron-object',
      '-o',
      'jsonpath={.spec.replicas}',
    );
    expect(replicas).toBe('4');
  });

  it('deletes custom objects with their namespace', async () => {
    const ns = `crons-${version.replace('.', '-')}`;
    await kubectl(version, 'create', 'namespace', ns);
    await kubectl(version, 'apply', '-n', ns, '-f', 'fixtures/crds/my-crontab.yaml');
    await kubectl(version, 'delete', 'namespace', ns, '--timeout=20s');
    const left = await server.store.range({ prefix: `/stable.example.com/crontabs/${ns}/` });
    expect(left.items).toHaveLength(0);
  });

  it('deletes the CRD with its objects', async () => {
    const deleted = await kubectl(version, 'delete', '-f', 'fixtures/crds/crontab.yaml', '--timeout=20s');
    expect(deleted).toContain('deleted');
    const crds = await kubectl(version, 'get', 'crd', '-o', 'name');
    expect(crds).not.toContain('crontabs.stable.example.com');
    const left = await server.store.range({ prefix: '/stable.example.com/crontabs/' });
    expect(left.items).toHaveLength(0);
    // api-resources refreshes kubectl's discovery cache.
    const resources = await kubectl(version, 'api-resources', '--api-group=stable.example.com');
    expect(resources).not.toContain('crontabs');
    const missing = await runKubectl(version, ['get', 'crontabs'], server.kubeconfigPath);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(`the server doesn't have a resource type "crontabs"`);
  });
});
