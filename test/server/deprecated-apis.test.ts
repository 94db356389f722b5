/**
 * A deprecated API version is served as kube-apiserver serves one: kube's `Warning` header on
 * every request of the version (a watch's too; other warnings kept after it), kubectl printing
 * it, `apiserver_requested_deprecated_apis` set for it, nothing for other versions. kube 1.33
 * deprecates none of the versions Capstan serves, so the server here is given one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { Deprecations, deprecationWarning, KUBE_DEPRECATIONS } from '../../src/registry/deprecations.js';
import { ServerLog } from '../../src/server/log.js';
import { parseServerArgs } from '../../src/server/options.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { adminFetch, adminTls, kubectlPath, runKubectl } from '../support/server.js';

const WARNING = 'batch/v1 CronJob is deprecated in v1.30+, unavailable in v1.35+; use batch/v2 CronJob';
let server: RunningServer;
let dataDir: string;
let tls: ReturnType<typeof adminTls>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'capstan-deprecated-'));
  const parsed = parseServerArgs(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dataDir}`]);
  if (parsed.help) throw new Error('unreachable');
  server = await startServer(parsed.options, {
    store: await openMemoryStore(),
    log: new ServerLog(() => undefined),
    deprecations: new Deprecations([
      {
        group: 'batch',
        version: 'v1',
        kind: 'CronJob',
        deprecated: [1, 30],
        removed: [1, 35],
        replacement: { group: 'batch', version: 'v2', kind: 'CronJob' },
      },
    ]),
  });
  tls = adminTls(server.kubeconfigPath);
});
afterAll(async () => {
  await server?.shutdown();
  await rm(dataDir, { recursive: true, force: true });
});

describe('kube 1.33 deprecations', () => {
  it("v1 ComponentStatus and v1 Endpoints are the served deprecated versions; the text is kube's", () => {
    expect(KUBE_DEPRECATIONS.map((d) => `${d.group}/${d.version}/${d.kind}`)).toEqual([
      '/v1/ComponentStatus',
      '/v1/Endpoints',
    ]);
    expect(new Deprecations().of('', 'v1', 'ComponentStatus')).toEqual({
      warning: 'v1 ComponentStatus is deprecated in v1.19+',
      removedRelease: '',
    });
    // kube-apiserver v1.33.13's words for every Endpoints request.
    expect(new Deprecations().of('', 'v1', 'Endpoints')).toEqual({
      warning: 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
      removedRelease: '',
    });
    expect(
      deprecationWarning({
        group: 'flowcontrol.apiserver.k8s.io',
        version: 'v1beta3',
        kind: 'FlowSchema',
        deprecated: [1, 29],
        removed: [1, 32],
        replacement: { group: 'flowcontrol.apiserver.k8s.io', version: 'v1', kind: 'FlowSchema' },
      }),
    ).toBe(
      'flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema',
    );
    expect(deprecationWarning({ group: '', version: 'v1', kind: 'Thing', deprecated: [1, 2] })).toBe(
      'v1 Thing is deprecated in v1.2+',
    );
  });
});

describe('a served deprecated version', () => {
  it('gets the Warning header on reads and writes; other versions do not', async () => {
    const list = await adminFetch(`${server.url}/apis/batch/v1/namespaces/default/cronjobs`, tls);
    expect(list.status).toBe(200);
    expect(list.headers['warning']).toBe(`299 - ${JSON.stringify(WARNING)}`);
    const jobs = await adminFetch(`${server.url}/apis/batch/v1/namespaces/default/jobs`, tls);
    expect(jobs.headers['warning']).toBeUndefined();
    // A write with a warning of its own (an unknown field under fieldValidation=Warn): both.
    const create = await adminFetch(
      `${server.url}/apis/batch/v1/namespaces/default/cronjobs?fieldValidation=Warn`,
      tls,
      {
        method: 'POST',
        http2: false,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: { name: 'c' },
          bogus: 1,
          spec: {
            schedule: '* * * * *',
            jobTemplate: {
              spec: {
                template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
              },
            },
          },
        }),
      },
    );
    expect(create.status, create.body).toBe(201);
    const warnings = String(create.headers['warning']).split(/,\s*(?=299)/);
    expect(warnings[0]).toBe(`299 - ${JSON.stringify(WARNING)}`);
    expect(warnings.some((w) => w.includes('bogus'))).toBe(true);
  });

  it('gets it on a watch too', async () => {
    const header = await new Promise<unknown>((resolve, reject) => {
      const req = request(`${server.url}/apis/batch/v1/cronjobs?watch=1`, { ...tls, agent: false }, (res) => {
        resolve(res.headers['warning']);
        req.destroy();
      });
      req.on('error', reject);
      req.end();
    });
    expect(header).toBe(`299 - ${JSON.stringify(WARNING)}`);
  });

  it('counts it in apiserver_requested_deprecated_apis', async () => {
    const metrics = await adminFetch(`${server.url}/metrics`, tls);
    expect(metrics.status).toBe(200);
    const lines = metrics.body.split('\n').filter((l) => l.startsWith('apiserver_requested_deprecated_apis'));
    expect(lines).toEqual([
      'apiserver_requested_deprecated_apis{group="batch",version="v1",resource="cronjobs",subresource="",removed_release="1.35"} 1',
    ]);
  });

  it.runIf(kubectlPath('1.33') !== undefined || process.env['CI'] === 'true')(
    'kubectl prints it',
    async () => {
      const r = await runKubectl('1.33', ['get', 'cronjobs.v1.batch', '-A'], server.kubeconfigPath);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`Warning: ${WARNING}`);
    },
  );
});
