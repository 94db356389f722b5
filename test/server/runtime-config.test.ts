/**
 * `--runtime-config`: kube-apiserver's start-up errors for bad keys and values, and a server
 * started with versions and one resource turned off serves none of them (routes, discovery,
 * OpenAPI) while the rest stays served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlagError } from '../../src/flags/flags.js';
import { KINDS } from '../../src/registry/kinds.js';
import { ApiEnablement } from '../../src/registry/runtime-config.js';
import { parseServerArgs } from '../../src/server/options.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

function startError(flag: string): string {
  try {
    parseServerArgs([`--runtime-config=${flag}`]);
  } catch (err) {
    expect(err).toBeInstanceOf(FlagError);
    return (err as Error).message;
  }
  throw new Error(`--runtime-config=${flag} was accepted`);
}

describe('--runtime-config parsing', () => {
  it('refuses what kube-apiserver refuses, with its messages', () => {
    expect(startError('api/all=false')).toBe('invalid key with only api/all=false');
    expect(startError('api/all=yes')).toBe('invalid value api/all=yes');
    expect(startError('apiall=false')).toBe('runtime-config invalid key apiall');
    expect(startError('a/b/c/d=true')).toBe('runtime-config invalid key a/b/c/d');
    expect(startError('foo.example.com/v1=true')).toBe('unknown api groups foo.example.com');
    expect(startError('autoscaling/v2beta2=true')).toBe(
      'group version autoscaling/v2beta2 that has not been registered',
    );
    expect(startError('batch/v1=maybe')).toBe(
      'invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    );
    expect(startError('batch/v1/Jobs=false')).toBe(
      'invalid key batch/v1/Jobs: group/version/resource and resource is always lowercase plural, not "Jobs"',
    );
    expect(startError('v1=false')).toMatch(/^--runtime-config: \/v1\/namespaces, .* must stay enabled/);
  });

  it('applies api/* first, then group versions, then resources', () => {
    const e = ApiEnablement.parse(
      { 'api/all': 'false', v1: 'true', 'apps/v1': '', 'batch/v1/jobs': 't' },
      KINDS,
    );
    expect(e.serves('', 'v1', 'pods')).toBe(true);
    expect(e.serves('apps', 'v1', 'deployments')).toBe(true);
    expect(e.serves('batch', 'v1', 'jobs')).toBe(true);
    expect(e.serves('batch', 'v1', 'cronjobs')).toBe(false);
    expect(e.serves('rbac.authorization.k8s.io', 'v1', 'roles')).toBe(false);
    expect(ApiEnablement.parse({ 'api/legacy': 'false' }, KINDS).serves('apps', 'v1', 'deployments')).toBe(
      true,
    );
    expect(ApiEnablement.parse({ 'api/v1/pods': 'false' }, KINDS).serves('', 'v1', 'pods')).toBe(false);
    const d = ApiEnablement.defaults();
    expect(d.serves('autoscaling', 'v1', 'horizontalpodautoscalers')).toBe(true);
    expect(d.serves('storage.k8s.io', 'v1beta1', 'csistoragecapacities')).toBe(false);
    expect(d.serves('resource.k8s.io', 'v1alpha3', 'deviceclasses')).toBe(false);
    const beta = ApiEnablement.parse({ 'api/beta': 'true', 'api/ga': 'false', v1: 'true' }, KINDS);
    expect(beta.serves('apps', 'v1', 'deployments')).toBe(false);
    expect(beta.serves('', 'v1', 'pods')).toBe(true);
  });

  it('serves every kind of the table by default (kube 1.33 turns all of them on)', () => {
    const e = ApiEnablement.parse({}, KINDS);
    for (const k of KINDS.kinds)
      expect(e.serves(k.group, k.version, k.plural), `${k.group}/${k.version}/${k.plural}`).toBe(true);
  });
});

describe('a server with versions turned off', () => {
  let server: TestServer;
  let tls: ReturnType<typeof adminTls>;
  beforeAll(async () => {
    server = await startTestServer({
      args: ['--runtime-config=batch/v1=false,autoscaling/v1=false,apps/v1/daemonsets=false'],
    });
    tls = adminTls(server.kubeconfigPath);
  });
  afterAll(() => server?.close());

  const get = (path: string) => adminFetch(`${server.url}${path}`, tls);

  it('leaves them out of discovery', async () => {
    const apis = JSON.parse((await get('/apis')).body) as {
      groups: { name: string; versions: { version: string }[] }[];
    };
    const names = apis.groups.map((g) => g.name);
    expect(names).not.toContain('batch');
    expect(names).toContain('apps');
    const autoscaling = apis.groups.find((g) => g.name === 'autoscaling');
    expect(autoscaling?.versions.map((v) => v.version)).toEqual(['v2']);
    expect((await get('/apis/batch')).status).toBe(404);
    expect((await get('/apis/autoscaling/v1')).status).toBe(404);
    const apps = JSON.parse((await get('/apis/apps/v1')).body) as { resources: { name: string }[] };
    const resources = apps.resources.map((r) => r.name);
    expect(resources).toContain('deployments');
    expect(resources).not.toContain('daemonsets');
  });

  it('serves no route for them, and the rest as usual', async () => {
    expect((await get('/apis/batch/v1/jobs')).status).toBe(404);
    expect((await get('/apis/autoscaling/v1/horizontalpodautoscalers')).status).toBe(404);
    expect((await get('/apis/apps/v1/daemonsets')).status).toBe(404);
    expect((await get('/apis/apps/v1/deployments')).status).toBe(200);
    expect((await get('/apis/autoscaling/v2/horizontalpodautoscalers')).status).toBe(200);
  });

  it('leaves them out of OpenAPI', async () => {
    const root = JSON.parse((await get('/openapi/v3')).body) as { paths: Record<string, unknown> };
    expect(Object.keys(root.paths)).not.toContain('apis/batch/v1');
    expect(Object.keys(root.paths)).toContain('apis/apps/v1');
    const v2 = JSON.parse((await get('/openapi/v2')).body) as { paths: Record<string, unknown> };
    const paths = Object.keys(v2.paths);
    expect(paths.some((p) => p.startsWith('/apis/batch/'))).toBe(false);
    expect(paths.some((p) => p.startsWith('/apis/apps/v1/daemonsets'))).toBe(false);
    expect(paths.some((p) => p.startsWith('/apis/apps/v1/deployments'))).toBe(true);
  });
});
