/**
 * `/metrics` in the Prometheus text format, read by a real parser: request counts match the
 * requests made, storage object counts match the store; and the max-in-flight filter: a flood
 * over the limit gets only successes and 429s with `Retry-After`, `system:masters` is never limited.
 */
import { connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flood as floodOn, type FloodResult } from '../support/flood.js';
import { parsePrometheus, sampleValue, type PromFamily } from '../support/prometheus.js';
import { eventually } from '../support/workload-cluster.js';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { userTls } from '../support/users.js';

let server: TestServer;
let admin: AdminTls;
let alice: AdminTls;

async function scrape(): Promise<Map<string, PromFamily>> {
  const res = await adminFetch(`${server.url}/metrics`, admin);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheus(res.body);
}

/** `n` concurrent GETs of `path` on one HTTP/2 connection. */
function flood(tls: AdminTls, path: string, n: number): Promise<FloodResult[]> {
  return floodOn(server.url, tls, path, n);
}

beforeAll(async () => {
  server = await startTestServer({
    // The max-in-flight filter is kube's with APF off (test/flowcontrol/ covers APF).
    args: [
      '--max-requests-inflight=4',
      '--max-mutating-requests-inflight=2',
      '--enable-priority-and-fairness=false',
    ],
  });
  admin = adminTls(server.kubeconfigPath);
  alice = await userTls(server, 'alice');
});
afterAll(() => server.close());

describe('/metrics', () => {
  it('counts requests by verb, resource, scope and code, and stored objects by resource', async () => {
    // The root-CA publisher creates kube-root-ca.crt in each namespace through the same API, so
    // its requests count too. Let it finish (on a loaded machine it may still be at work), then
    // count from a baseline.
    await eventually('kube-root-ca.crt in every system namespace', async () => {
      for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
        const res = await adminFetch(
          `${server.url}/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`,
          admin,
        );
        if (res.status !== 200) return undefined;
      }
      return true;
    });
    const before = await scrape();
    const base = `${server.url}/api/v1/namespaces/default/configmaps`;
    for (let i = 0; i < 3; i++) {
      const res = await adminFetch(base, admin, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: `m${i}` } }),
      });
      expect(res.status).toBe(201);
    }
    for (let i = 0; i < 5; i++) expect((await adminFetch(`${base}/m0`, admin)).status).toBe(200);
    expect((await adminFetch(`${base}/absent`, admin)).status).toBe(404);
    expect((await adminFetch(base, admin)).status).toBe(200);

    const m = await scrape();
    expect(m.get('apiserver_request')?.type).toBe('counter');
    const common = {
      group: '',
      version: 'v1',
      resource: 'configmaps',
      subresource: '',
      component: 'apiserver',
    };
    /** How much `sample` (with `labels`) grew since the baseline scrape. */
    const delta = (family: string, sample: string, labels: Record<string, string>): number =>
      (sampleValue(m, family, sample, labels) ?? 0) - (sampleValue(before, family, sample, labels) ?? 0);
    const total = (labels: Record<string, string>): number =>
      delta('apiserver_request', 'apiserver_request_total', { ...common, ...labels });
    expect(total({ verb: 'POST', scope: 'resource', code: '201' })).toBe(3);
    expect(total({ verb: 'GET', scope: 'resource', code: '200' })).toBe(5);
    expect(total({ verb: 'GET', scope: 'resource', code: '404' })).toBe(1);
    expect(total({ verb: 'LIST', scope: 'namespace', code: '200' })).toBe(1);
    expect(m.get('apiserver_request_duration_seconds')?.type).toBe('histogram');
    const getCount = { ...common, verb: 'GET', scope: 'resource', dry_run: '' };
    const histogram = (sample: string, labels: Record<string, string>): number =>
      delta('apiserver_request_duration_seconds', sample, labels);
    expect(histogram('apiserver_request_duration_seconds_count', getCount)).toBe(6);
    expect(histogram('apiserver_request_duration_seconds_bucket', { ...getCount, le: '+Inf' })).toBe(6);
    const objects = (resource: string): number =>
      sampleValue(m, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource }) ?? -1;
    expect(objects('configmaps')).toBeGreaterThanOrEqual(3);
    expect(objects('namespaces')).toBeGreaterThanOrEqual(4);
    expect(
      sampleValue(m, 'etcd_request_duration_seconds', 'etcd_request_duration_seconds_count', {
        operation: 'create',
        type: 'configmaps',
      }),
    ).toBeGreaterThanOrEqual(3);
    expect(sampleValue(m, 'process_resident_memory_bytes', 'process_resident_memory_bytes')).toBeGreaterThan(
      1e6,
    );
    expect(sampleValue(m, 'process_start_time_seconds', 'process_start_time_seconds')).toBeGreaterThan(1.7e9);
  });

  it('tracks open watches as long-running requests, not in flight', async () => {
    const session = connect(server.url, admin);
    const stream = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1' });
    stream.on('data', () => undefined);
    await new Promise<void>((resolve) => stream.once('response', () => resolve()));
    const m = await scrape();
    const watch = sampleValue(m, 'apiserver_longrunning_requests', 'apiserver_longrunning_requests', {
      verb: 'WATCH',
      resource: 'configmaps',
      scope: 'namespace',
    });
    expect(watch).toBe(1);
    stream.close();
    session.close();
  });
});

describe('--max-requests-inflight', () => {
  it('answers a flood over the limit with successes and 429s only, and serves again afterwards', async () => {
    const results = await flood(alice, '/api/v1/namespaces/default/configmaps', 400);
    const codes = new Set(results.map((r) => r.status));
    expect([...codes].every((c) => c === 200 || c === 429)).toBe(true);
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.every((r) => r.retryAfter === '1')).toBe(true);
    expect(results.some((r) => r.status === 200)).toBe(true);
    // Every slot was given back: one request at a time is served.
    for (let i = 0; i < 10; i++) {
      expect((await adminFetch(`${server.url}/api/v1/namespaces/default/configmaps`, alice)).status).toBe(
        200,
      );
    }
  });

  it('never limits system:masters', async () => {
    const results = await flood(admin, '/api/v1/namespaces/default/configmaps', 400);
    expect(results.every((r) => r.status === 200)).toBe(true);
  });
});

describe('--disabled-metrics', () => {
  it('neither records nor serves the named families; the others still count', async () => {
    const off = await startTestServer({
      args: [
        '--disabled-metrics=apiserver_request_total,apiserver_request_duration_seconds,apiserver_current_inflight_requests,apiserver_longrunning_requests,etcd_request_duration_seconds,apiserver_flowcontrol_dispatched_requests_total',
      ],
    });
    try {
      const tls = adminTls(off.kubeconfigPath);
      for (let i = 0; i < 3; i++)
        expect((await adminFetch(`${off.url}/api/v1/namespaces/default/configmaps`, tls)).status).toBe(200);
      const res = await adminFetch(`${off.url}/metrics`, tls);
      expect(res.status).toBe(200);
      const m = parsePrometheus(res.body);
      for (const name of [
        'apiserver_request',
        'apiserver_request_duration_seconds',
        'apiserver_current_inflight_requests',
        'apiserver_longrunning_requests',
        'etcd_request_duration_seconds',
        'apiserver_flowcontrol_dispatched_requests',
      ])
        expect(m.has(name), name).toBe(false);
      // Not named: still recorded (APF executed the three lists and the scrape).
      expect(m.get('apiserver_flowcontrol_current_executing_requests')?.type).toBe('gauge');
      expect(m.get('apiserver_storage_objects')?.type).toBe('gauge');
    } finally {
      await off.close();
    }
  });
});
