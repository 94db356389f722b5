/**
 * `componentstatuses` (`kubectl get cs`), checked against what kube-apiserver v1.33.13 answers
 * for the same requests: the list (controller-manager, scheduler, then one `etcd-<i>` per
 * `--etcd-servers` entry), items without resourceVersion and with a null creationTimestamp,
 * kube's deprecation warning on every answer, the Table kubectl prints, selectors, 404 and
 * the refused watch. The in-process controller manager and scheduler are healthy ("ok"); a bare
 * server probes kube's fixed ports, as kube-apiserver does.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminFetch,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type TestServer,
} from '../support/server.js';

const ETCD_AVAILABLE = existsSync(process.env['CAPSTAN_ETCD_BIN'] ?? '/usr/bin/etcd');
const REQUIRE_ETCD = process.env['CAPSTAN_REQUIRE_ETCD'] === '1';
const WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"';
const KUBECTL = kubectlPath('1.33');
if (KUBECTL === undefined && process.env['CI'] === 'true')
  throw new Error('kubectl 1.33 is missing (CI=true)');

interface Condition {
  type: string;
  status: string;
  message?: string;
  error?: string;
}
interface Item {
  kind?: string;
  apiVersion?: string;
  metadata: Record<string, unknown>;
  conditions: Condition[];
}

describe.skipIf(!ETCD_AVAILABLE && !REQUIRE_ETCD)('componentstatuses on etcd, components in-process', () => {
  let server: TestServer;
  const get = async (path: string, accept = 'application/json') => {
    const res = await adminFetch(`${server.url}${path}`, adminTls(server.kubeconfigPath), {
      headers: { accept },
    });
    return { ...res, json: (): unknown => JSON.parse(res.body) };
  };

  beforeAll(async () => {
    server = await startTestServer({ store: 'etcd', controllers: ['scheduler'] });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('lists the components in kube layout, each probed healthy', async () => {
    const res = await get('/api/v1/componentstatuses');
    expect(res.status).toBe(200);
    expect(res.headers['warning']).toBe(WARNING);
    expect(res.json()).toEqual({
      kind: 'ComponentStatusList',
      apiVersion: 'v1',
      metadata: {},
      items: ['controller-manager', 'scheduler', 'etcd-0'].map((name) => ({
        metadata: { name, creationTimestamp: null },
        conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
      })),
    });
  });

  it('gets one, refuses a watch, and answers 404 for an unknown name', async () => {
    const one = await get('/api/v1/componentstatuses/etcd-0');
    expect(one.status).toBe(200);
    expect(one.json()).toEqual({
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name: 'etcd-0', creationTimestamp: null },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    });
    const missing = await get('/api/v1/componentstatuses/nope');
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({
      reason: 'NotFound',
      message: 'componentstatuses "nope" not found',
    });
    const watch = await get('/api/v1/componentstatuses?watch=1');
    expect(watch.status).toBe(405);
    expect(watch.json()).toMatchObject({
      reason: 'MethodNotAllowed',
      message: 'watch is not supported on resources of kind "componentstatuses"',
      details: { kind: 'componentstatuses' },
    });
  });

  it('applies label and field selectors', async () => {
    const byName = (
      await get('/api/v1/componentstatuses?fieldSelector=metadata.name%3Dscheduler')
    ).json() as {
      items: Item[];
    };
    expect(byName.items.map((i) => i.metadata['name'])).toEqual(['scheduler']);
    const byLabel = (await get('/api/v1/componentstatuses?labelSelector=a%3Db')).json() as { items: Item[] };
    expect(byLabel.items).toEqual([]);
    // The list options it does not use are still read, so a bad integer is kube's 400.
    const badLimit = await get('/api/v1/componentstatuses?limit=abc');
    expect(badLimit.status).toBe(400);
    expect(badLimit.json()).toMatchObject({ message: 'strconv.ParseInt: parsing "abc": invalid syntax' });
    const exactZero = await get('/api/v1/componentstatuses?resourceVersion=0&resourceVersionMatch=Exact');
    expect(exactZero.status).toBe(422);
    expect((await get('/api/v1/componentstatuses?resourceVersion=abc')).status).toBe(200);
  });

  it('is in discovery as kube serves it, and renders the Table kubectl prints', async () => {
    const discovery = (await get('/api/v1')).json() as { resources: Record<string, unknown>[] };
    expect(discovery.resources.find((r) => r['name'] === 'componentstatuses')).toEqual({
      name: 'componentstatuses',
      singularName: 'componentstatus',
      namespaced: false,
      kind: 'ComponentStatus',
      verbs: ['get', 'list'],
      shortNames: ['cs'],
    });
    const table = (
      await get('/api/v1/componentstatuses/etcd-0', 'application/json;as=Table;v=v1;g=meta.k8s.io')
    ).json() as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Status', 'Message', 'Error']);
    expect(table.rows.map((r) => r.cells)).toEqual([['etcd-0', 'Healthy', 'ok', '']]);
  });

  it.skipIf(KUBECTL === undefined)('kubectl get cs prints it with the warning', async () => {
    const res = await runKubectl('1.33', ['get', 'cs'], server.kubeconfigPath);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Warning: v1 ComponentStatus is deprecated in v1.19+');
    const rows = res.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    expect(rows).toEqual([
      ['NAME', 'STATUS', 'MESSAGE', 'ERROR'],
      ['controller-manager', 'Healthy', 'ok'],
      ['scheduler', 'Healthy', 'ok'],
      ['etcd-0', 'Healthy', 'ok'],
    ]);
  });
});

describe('componentstatuses on a bare server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ args: ['--controllers='] });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it("probes kube's fixed ports for the controller manager and scheduler, and lists no etcd", async () => {
    const res = await adminFetch(`${server.url}/api/v1/componentstatuses`, adminTls(server.kubeconfigPath));
    expect(res.status).toBe(200);
    const list = JSON.parse(res.body) as { items: Item[] };
    expect(list.items.map((i) => i.metadata['name'])).toEqual(['controller-manager', 'scheduler']);
    for (const [item, port] of list.items.map((i, n) => [i, n === 0 ? 10257 : 10259] as const)) {
      const [condition] = item.conditions;
      // Nothing of this server listens there; another test's component may, so either answer
      // is kube's: healthy with the body, or unhealthy with the prober's text.
      if (condition?.status === 'True') expect(condition.message).toBe('ok');
      else expect(condition?.message).toMatch(new RegExp(`^Get "https://127\\.0\\.0\\.1:${port}/healthz": `));
    }
  });
});
