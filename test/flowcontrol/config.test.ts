/**
 * API Priority and Fairness configuration, through raw HTTPS against a real server:
 * - the bootstrap FlowSchemas and PriorityLevelConfigurations exist with kube v1.33's specs and
 *   the `apf.kubernetes.io/autoupdate-spec: "true"` annotation;
 * - requests are classified (the response headers name the matching schema's and level's UIDs);
 * - the maintenance rules: mandatory objects come back and keep kube's spec, suggested ones come
 *   back when deleted and keep a spec an operator took over, unknown auto-updated ones go;
 * - the `Dangling` condition, and changes taking effect live;
 * - refusals: a level without seats answers 429 (`Reject`) at once or after the queue wait, with
 *   kube's message, `Retry-After` and the metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';
import {
  adminFetch,
  adminTls,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';
import { userTls } from '../support/users.js';
import { KUBE_FLOW_SCHEMAS, KUBE_PRIORITY_LEVELS } from './kube-bootstrap.js';

const API = '/apis/flowcontrol.apiserver.k8s.io/v1';
const FS_HEADER = 'x-kubernetes-pf-flowschema-uid';
const PL_HEADER = 'x-kubernetes-pf-prioritylevel-uid';

let server: TestServer;
let admin: AdminTls;
let alice: AdminTls;

interface Obj {
  metadata: { name: string; uid: string; annotations?: Record<string, string>; generation?: number };
  spec: Record<string, unknown>;
  status?: { conditions?: Array<Record<string, string>> };
}

async function call(method: string, path: string, body?: unknown, tls: AdminTls = admin) {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    method,
    ...(body === undefined
      ? {}
      : {
          headers: {
            'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
          },
          body: JSON.stringify(body),
        }),
  });
  return { ...res, json: () => JSON.parse(res.body) as Record<string, unknown> };
}

async function items(resource: string): Promise<Map<string, Obj>> {
  const res = await call('GET', `${API}/${resource}`);
  expect(res.status).toBe(200);
  return new Map((res.json()['items'] as Obj[]).map((o) => [o.metadata.name, o]));
}

async function get(resource: string, name: string): Promise<Obj | undefined> {
  const res = await call('GET', `${API}/${resource}/${name}`);
  return res.status === 200 ? (res.json() as unknown as Obj) : undefined;
}

async function eventually<T>(probe: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  // A short request timeout: queued requests wait a quarter of it (1 s).
  server = await startTestServer({ args: ['--request-timeout=4s'] });
  admin = adminTls(server.kubeconfigPath);
  alice = await userTls(server, 'alice');
  await eventually(async () => ((await items('flowschemas')).size >= 13 ? true : undefined), 'bootstrap');
}, 60_000);
afterAll(() => server?.close());

describe('bootstrap configuration', () => {
  it('creates kube v1.33 priority levels and flow schemas with their exact specs', async () => {
    const levels = await items('prioritylevelconfigurations');
    expect([...levels.keys()].sort()).toEqual(Object.keys(KUBE_PRIORITY_LEVELS).sort());
    for (const [name, spec] of Object.entries(KUBE_PRIORITY_LEVELS)) {
      const o = levels.get(name) as Obj;
      expect(o.spec, name).toEqual(spec);
      expect(o.metadata.annotations?.['apf.kubernetes.io/autoupdate-spec']).toBe('true');
    }
    const schemas = await items('flowschemas');
    expect([...schemas.keys()].sort()).toEqual(Object.keys(KUBE_FLOW_SCHEMAS).sort());
    for (const [name, spec] of Object.entries(KUBE_FLOW_SCHEMAS)) {
      const o = schemas.get(name) as Obj;
      expect(o.spec, name).toEqual(spec);
      expect(o.metadata.annotations?.['apf.kubernetes.io/autoupdate-spec']).toBe('true');
      const dangling = await eventually(async () => {
        const c = (await get('flowschemas', name))?.status?.conditions?.find((x) => x['type'] === 'Dangling');
        return c;
      }, `Dangling on ${name}`);
      expect(dangling).toMatchObject({
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${(spec as { priorityLevelConfiguration: { name: string } }).priorityLevelConfiguration.name}" and it exists`,
      });
    }
  });
  it('shows them to kubectl 1.33, none missing its priority level', async () => {
    const res = await runKubectl('1.33', ['get', 'flowschemas'], server.kubeconfigPath);
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    expect(rows[0]).toEqual([
      'NAME',
      'PRIORITYLEVEL',
      'MATCHINGPRECEDENCE',
      'DISTINGUISHERMETHOD',
      'AGE',
      'MISSINGPL',
    ]);
    expect(
      rows
        .slice(1)
        .map((r) => r[0])
        .sort(),
    ).toEqual(Object.keys(KUBE_FLOW_SCHEMAS).sort());
    expect(rows.find((r) => r[0] === 'exempt')?.slice(1, 4)).toEqual(['exempt', '1', '<none>']);
    expect(rows.find((r) => r[0] === 'global-default')).toEqual([
      'global-default',
      'global-default',
      '9900',
      'ByUser',
      expect.any(String),
      'False',
    ]);
  });
});

describe('classification', () => {
  async function uids(fs: string, pl: string) {
    return {
      fs: (await get('flowschemas', fs))?.metadata.uid,
      pl: (await get('prioritylevelconfigurations', pl))?.metadata.uid,
    };
  }
  function headersOf(res: { headers: Record<string, unknown> }) {
    return { fs: res.headers[FS_HEADER], pl: res.headers[PL_HEADER] };
  }

  it('names the matching schema and level in the response headers', async () => {
    expect(headersOf(await call('GET', '/api/v1/namespaces'))).toEqual(await uids('exempt', 'exempt'));
    const res = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, alice);
    expect(res.status).toBe(200);
    expect(headersOf(res)).toEqual(await uids('global-default', 'global-default'));
    // Probes are exempt for everyone; a node's own Node object is node-high.
    expect(headersOf(await call('GET', '/livez', undefined, alice))).toEqual(await uids('probes', 'exempt'));
    const node = await userTls(server, 'system:node:n1', ['system:nodes']);
    expect(headersOf(await call('GET', '/api/v1/nodes/n1', undefined, node))).toEqual(
      await uids('system-node-high', 'node-high'),
    );
    expect(headersOf(await call('GET', '/api/v1/namespaces/default/pods', undefined, node))).toEqual(
      await uids('system-nodes', 'system'),
    );
    const sa = await userTls(server, 'system:serviceaccount:kube-system:endpoint-controller', [
      'system:serviceaccounts',
      'system:serviceaccounts:kube-system',
    ]);
    expect(headersOf(await call('GET', '/api/v1/namespaces/default/endpoints/x', undefined, sa))).toEqual(
      await uids('endpoint-controller', 'workload-high'),
    );
    expect(headersOf(await call('GET', '/api/v1/namespaces/default/secrets', undefined, sa))).toEqual(
      await uids('kube-system-service-accounts', 'workload-high'),
    );
  });
});

describe('maintenance of the bootstrap objects', () => {
  it("recreates a deleted mandatory schema, refuses a change of a mandatory spec, and puts back the mandatory's annotation", async () => {
    const before = (await get('flowschemas', 'catch-all')) as Obj;
    expect((await call('DELETE', `${API}/flowschemas/catch-all`)).status).toBe(200);
    const after = await eventually(async () => {
      const o = await get('flowschemas', 'catch-all');
      return o !== undefined && o.metadata.uid !== before.metadata.uid ? o : undefined;
    }, 'catch-all to come back');
    expect(after.spec).toEqual(KUBE_FLOW_SCHEMAS['catch-all']);

    // As kube-apiserver: a mandatory level's spec is fixed by validation.
    const refused = await call('PATCH', `${API}/prioritylevelconfigurations/catch-all`, {
      spec: { limited: { nominalConcurrencyShares: 77 } },
    });
    expect(refused.status).toBe(422);
    const patched = await call('PATCH', `${API}/prioritylevelconfigurations/catch-all`, {
      metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } },
    });
    expect(patched.status).toBe(200);
    const restored = await eventually(async () => {
      const o = await get('prioritylevelconfigurations', 'catch-all');
      return o?.metadata.annotations?.['apf.kubernetes.io/autoupdate-spec'] === 'true' ? o : undefined;
    }, 'catch-all spec to be restored');
    expect(restored.spec).toEqual(KUBE_PRIORITY_LEVELS['catch-all']);
  });

  it('brings back a deleted suggested object, and keeps a spec an operator took over', async () => {
    const before = (await get('prioritylevelconfigurations', 'workload-low')) as Obj;
    expect((await call('DELETE', `${API}/prioritylevelconfigurations/workload-low`)).status).toBe(200);
    await eventually(async () => {
      const o = await get('prioritylevelconfigurations', 'workload-low');
      return o !== undefined && o.metadata.uid !== before.metadata.uid ? o : undefined;
    }, 'workload-low to come back');

    const patched = await call('PATCH', `${API}/prioritylevelconfigurations/leader-election`, {
      metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } },
      spec: { limited: { nominalConcurrencyShares: 11 } },
    });
    expect(patched.status).toBe(200);
    // Another change makes the maintenance run; the taken-over spec stays.
    expect((await call('DELETE', `${API}/flowschemas/probes`)).status).toBe(200);
    await eventually(async () => await get('flowschemas', 'probes'), 'probes to come back');
    const kept = (await get('prioritylevelconfigurations', 'leader-election')) as Obj;
    expect((kept.spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares']).toBe(11);
  });

  it('deletes an object it does not know that asks to be auto-updated', async () => {
    const res = await call('POST', `${API}/prioritylevelconfigurations`, {
      metadata: { name: 'stray', annotations: { 'apf.kubernetes.io/autoupdate-spec': 'true' } },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } },
    });
    expect(res.status).toBe(201);
    await eventually(
      async () => ((await get('prioritylevelconfigurations', 'stray')) === undefined ? true : undefined),
      'stray to be deleted',
    );
  });
});

describe('live configuration and refusals', () => {
  let bob: AdminTls;
  let carol: AdminTls;
  beforeAll(async () => {
    bob = await userTls(server, 'bob');
    carol = await userTls(server, 'carol');
  });

  it('marks a schema Dangling until its level exists, then classifies by it', async () => {
    const created = await call('POST', `${API}/flowschemas`, {
      metadata: { name: 'no-seats' },
      spec: {
        priorityLevelConfiguration: { name: 'no-seats' },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'bob' } }],
            resourceRules: [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true },
            ],
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const dangling = await eventually(async () => {
      const c = (await get('flowschemas', 'no-seats'))?.status?.conditions?.find(
        (x) => x['type'] === 'Dangling',
      );
      return c?.['status'] === 'True' ? c : undefined;
    }, 'Dangling=True');
    expect(dangling).toMatchObject({
      reason: 'NotFound',
      message:
        'This FlowSchema references the PriorityLevelConfiguration object named "no-seats" but there is no such object',
    });
    // A dangling schema is skipped: bob is in global-default meanwhile.
    const meanwhile = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, bob);
    expect(meanwhile.status).toBe(200);
    expect(meanwhile.headers[FS_HEADER]).toBe((await get('flowschemas', 'global-default'))?.metadata.uid);

    // Zero shares: no seat at all, so every request of bob's is refused at once.
    expect(
      (
        await call('POST', `${API}/prioritylevelconfigurations`, {
          metadata: { name: 'no-seats' },
          spec: {
            type: 'Limited',
            limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } },
          },
        })
      ).status,
    ).toBe(201);
    await eventually(async () => {
      const c = (await get('flowschemas', 'no-seats'))?.status?.conditions?.find(
        (x) => x['type'] === 'Dangling',
      );
      return c?.['status'] === 'False' && c['reason'] === 'Found' ? c : undefined;
    }, 'Dangling=False');
    const refused = await eventually(async () => {
      const r = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, bob);
      return r.status === 429 ? r : undefined;
    }, 'bob to be refused');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      code: 429,
      message: 'Too many requests, please try again later.',
    });
    expect(refused.headers[FS_HEADER]).toBe((await get('flowschemas', 'no-seats'))?.metadata.uid);
    expect(refused.headers[PL_HEADER]).toBe(
      (await get('prioritylevelconfigurations', 'no-seats'))?.metadata.uid,
    );
    // Others are not affected.
    expect((await call('GET', '/api/v1/namespaces/default/configmaps', undefined, alice)).status).toBe(200);
    // A watch is classified but takes no seat: bob may still watch.
    const watch = await call(
      'GET',
      '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1',
      undefined,
      bob,
    );
    expect(watch.status).toBe(200);
    expect(watch.headers[FS_HEADER]).toBe(refused.headers[FS_HEADER]);
  });

  it('queues a request a level cannot seat, and refuses it after the queue wait', async () => {
    expect(
      (
        await call('POST', `${API}/prioritylevelconfigurations`, {
          metadata: { name: 'wait-forever' },
          spec: {
            type: 'Limited',
            limited: {
              nominalConcurrencyShares: 0,
              limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 3 } },
            },
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', `${API}/flowschemas`, {
          metadata: { name: 'wait-forever' },
          spec: {
            priorityLevelConfiguration: { name: 'wait-forever' },
            matchingPrecedence: 500,
            rules: [
              {
                subjects: [{ kind: 'User', user: { name: 'carol' } }],
                resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
              },
            ],
          },
        })
      ).status,
    ).toBe(201);
    const uid = (await get('flowschemas', 'wait-forever'))?.metadata.uid;
    await eventually(async () => {
      const r = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, carol);
      return r.headers[FS_HEADER] === uid ? r : undefined;
    }, 'carol to be classified');
    // No distinguisher: one flow, one hand of 2 queues of 3: 6 wait, the rest are refused at once.
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call('GET', '/api/v1/namespaces/default/configmaps', undefined, carol)),
    );
    expect(results.every((r) => r.status === 429 && r.headers['retry-after'] === '1')).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const metrics = parsePrometheus((await call('GET', '/metrics')).body);
    const rejected = (pl: string, fs: string, reason: string) =>
      sampleValue(
        metrics,
        'apiserver_flowcontrol_rejected_requests',
        'apiserver_flowcontrol_rejected_requests_total',
        {
          priority_level: pl,
          flow_schema: fs,
          reason,
        },
      );
    expect(rejected('wait-forever', 'wait-forever', 'queue-full')).toBeGreaterThanOrEqual(2);
    expect(rejected('wait-forever', 'wait-forever', 'time-out')).toBeGreaterThanOrEqual(6);
    expect(rejected('no-seats', 'no-seats', 'concurrency-limit')).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(
        metrics,
        'apiserver_flowcontrol_dispatched_requests',
        'apiserver_flowcontrol_dispatched_requests_total',
        {
          priority_level: 'global-default',
          flow_schema: 'global-default',
        },
      ),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sampleValue(
        metrics,
        'apiserver_flowcontrol_current_inqueue_requests',
        'apiserver_flowcontrol_current_inqueue_requests',
        {
          priority_level: 'wait-forever',
          flow_schema: 'wait-forever',
        },
      ),
    ).toBe(0);
  });
});
